"""RMSprop step, fused: one pass over parameters, gradients and the squared-gradient average.

The precision rules fire here:
- TRI016: `alpha` and `eps` are Python floats used with tensors without a cast: launched from
  inside `torch.compile` they arrive as fp64, and `v + eps` (then its square root and the
  reciprocal) runs in FP64 on every element.
- TRI017 (information): `1.0 / tl.sqrt(v + eps)` on every element, where `tl.rsqrt` is one
  instruction.
`lr * g` alone would not be reported: a plain multiply before a store hides behind the memory traffic.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def rmsprop_kernel(p_ptr, g_ptr, v_ptr, n_elements, lr, alpha, eps, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    p = tl.load(p_ptr + offs, mask=mask, other=0.0)
    g = tl.load(g_ptr + offs, mask=mask, other=0.0)
    v = tl.load(v_ptr + offs, mask=mask, other=0.0)
    v = alpha * v + (1.0 - alpha) * g * g
    p = p - lr * g * (1.0 / tl.sqrt(v + eps))
    tl.store(v_ptr + offs, v, mask=mask)
    tl.store(p_ptr + offs, p, mask=mask)


def rmsprop_step_(param: torch.Tensor, grad: torch.Tensor, square_avg: torch.Tensor,
                  lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8, block: int = 1024) -> torch.Tensor:
    """torch.optim.RMSprop's update (no momentum, not centered), in place on fp32 tensors."""
    assert param.is_contiguous() and grad.is_contiguous() and square_avg.is_contiguous()
    n = param.numel()
    rmsprop_kernel[(triton.cdiv(n, block),)](param, grad, square_avg, n, lr, alpha, eps, BLOCK=block)
    return param
