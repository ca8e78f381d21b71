"""A hand-written RMSNorm forward, one program per row, as found in many training repos.

TRI003 fires on `_norm_fwd`: it computes mean of squares -> rsqrt -> scale by weight, which is
Liger-Kernel's RMSNorm (`LigerRMSNorm`, `liger_rms_norm`), and that one comes with a backward.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _norm_fwd(Y, X, W, RSTD, x_row_stride, y_row_stride, n_cols, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(X + row * x_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    mean_square = tl.sum(x * x, axis=0) / n_cols
    rstd = tl.rsqrt(mean_square + eps.to(tl.float32))
    tl.store(RSTD + row, rstd)
    y = x * rstd * w
    tl.store(Y + row * y_row_stride + cols, y.to(Y.dtype.element_ty), mask=mask)


def rms_norm_forward(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    shape = x.shape
    x2d = x.reshape(-1, shape[-1])
    y = torch.empty_like(x2d)
    rstd = torch.empty(x2d.shape[0], dtype=torch.float32, device=x.device)
    block = triton.next_power_of_2(shape[-1])
    _norm_fwd[(x2d.shape[0],)](y, x2d, weight, rstd, x2d.stride(0), y.stride(0), shape[-1], eps,
                               BLOCK_SIZE=block, num_warps=8 if block >= 4096 else 4)
    return y.reshape(shape)


if __name__ == "__main__":
    x = torch.randn(64, 4096, device="cuda", dtype=torch.bfloat16)
    w = torch.ones(4096, device="cuda", dtype=torch.bfloat16)
    ref = (x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()).to(x.dtype)
    torch.testing.assert_close(rms_norm_forward(x, w), ref, atol=2e-2, rtol=2e-2)
