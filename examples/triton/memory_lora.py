"""LoRA shrink and expand for a rank-8 adapter, written the obvious way with `tl.dot`.

TRI005 fires on both dots:
* shrink, `x[BLOCK_M, HIDDEN] @ A[HIDDEN, RANK]`: N = RANK = 8. Current Triton compiles it (NVIDIA
  pads since triton#7411), older Triton and Intel XPU reject it (information).
* expand, `xa[BLOCK_M, RANK] @ B[RANK, HIDDEN]`: the reduction is over K = RANK = 8, and K below
  16 does not compile for fp16/bf16 operands on NVIDIA (warning). Pad the rank to 16 with masked
  loads (`other=0.0` adds nothing), or use `tl.sum(a[:, :, None] * b[None, :, :], 1)` for ranks
  this small.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def lora_shrink_kernel(x_ptr, a_ptr, xa_ptr, n_tokens, x_stride, RANK: tl.constexpr = 8,
                       HIDDEN: tl.constexpr = 512, BLOCK_M: tl.constexpr = 32):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_h = tl.arange(0, HIDDEN)
    offs_r = tl.arange(0, RANK)
    token_mask = offs_m[:, None] < n_tokens
    x = tl.load(x_ptr + offs_m[:, None] * x_stride + offs_h[None, :], mask=token_mask, other=0.0)
    a = tl.load(a_ptr + offs_h[:, None] * RANK + offs_r[None, :])
    xa = tl.dot(x, a)
    tl.store(xa_ptr + offs_m[:, None] * RANK + offs_r[None, :], xa, mask=token_mask)


@triton.jit
def lora_expand_kernel(xa_ptr, b_ptr, y_ptr, n_tokens, y_stride, scale, RANK: tl.constexpr = 8,
                       HIDDEN: tl.constexpr = 512, BLOCK_M: tl.constexpr = 32):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_r = tl.arange(0, RANK)
    offs_h = tl.arange(0, HIDDEN)
    token_mask = offs_m[:, None] < n_tokens
    xa = tl.load(xa_ptr + offs_m[:, None] * RANK + offs_r[None, :], mask=token_mask, other=0.0)
    b = tl.load(b_ptr + offs_r[:, None] * HIDDEN + offs_h[None, :])
    y = tl.load(y_ptr + offs_m[:, None] * y_stride + offs_h[None, :], mask=token_mask, other=0.0)
    y += tl.dot(xa.to(tl.float16), b.to(tl.float16)) * scale
    tl.store(y_ptr + offs_m[:, None] * y_stride + offs_h[None, :], y, mask=token_mask)


def lora_forward(x: torch.Tensor, lora_a: torch.Tensor, lora_b: torch.Tensor, base_out: torch.Tensor,
                 scale: float = 1.0) -> torch.Tensor:
    n_tokens = x.shape[0]
    xa = torch.empty((n_tokens, 8), device=x.device, dtype=torch.float32)
    grid = (triton.cdiv(n_tokens, 32),)
    lora_shrink_kernel[grid](x, lora_a, xa, n_tokens, x.stride(0))
    lora_expand_kernel[grid](xa, lora_b, base_out, n_tokens, base_out.stride(0), scale)
    return base_out
