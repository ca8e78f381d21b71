"""Global gradient-norm clipping in two Triton passes (what `clip_grad_norm_` does, fused).

Pass 1 writes one partial sum of squares per block; pass 2 reduces the partials in every program
and scales the gradient by `min(max_norm / (norm + eps), 1)`.

The precision rules fire here:
- TRI002: the partial sums are accumulated in float64 (`.to(tl.float64)`) and the host allocates
  the partials buffer as `torch.float64`, so both passes read and compute FP64.
TRI016 and TRI017 stay quiet here although `eps` is a Python float and the norm is `1.0 / tl.sqrt(...)`:
both apply to the one global norm, once per program, and cost nothing measurable
(precision_rmsprop.py shows them where they apply to every element).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _sumsq_partial_kernel(grad_ptr, partial_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    g = tl.load(grad_ptr + offs, mask=mask, other=0.0).to(tl.float64)
    tl.store(partial_ptr + pid, tl.sum(g * g, axis=0))


@triton.jit
def _clip_kernel(grad_ptr, partial_ptr, n_elements, n_partials, max_norm, eps,
                 BLOCK: tl.constexpr, PARTIAL_BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    p = tl.arange(0, PARTIAL_BLOCK)
    partials = tl.load(partial_ptr + p, mask=p < n_partials, other=0.0)
    total = tl.sum(partials, axis=0)
    inv_norm = 1.0 / tl.sqrt(total + eps)
    coef = tl.minimum(max_norm * inv_norm, 1.0)

    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    g = tl.load(grad_ptr + offs, mask=mask, other=0.0)
    tl.store(grad_ptr + offs, (g * coef).to(grad_ptr.dtype.element_ty), mask=mask)


def clip_grad_norm_(grad: torch.Tensor, max_norm: float = 1.0, eps: float = 1e-6, block: int = 4096) -> torch.Tensor:
    """Scale `grad` in place so that its L2 norm is at most `max_norm`."""
    flat = grad.view(-1)
    n = flat.numel()
    n_blocks = triton.cdiv(n, block)
    partials = torch.empty(n_blocks, device=grad.device, dtype=torch.float64)
    _sumsq_partial_kernel[(n_blocks,)](flat, partials, n, BLOCK=block)
    _clip_kernel[(n_blocks,)](flat, partials, n, n_blocks, max_norm, eps,
                              BLOCK=block, PARTIAL_BLOCK=triton.next_power_of_2(n_blocks))
    return grad
