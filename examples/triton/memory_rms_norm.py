"""RMSNorm forward, one program per row, as written in many training repos before long context.

* TRI006: `row * x_row_stride` and `row * y_row_stride` are int32 products. With a
  [1, 1_000_000, 4096] activation the offset of the last rows passes 2**31 and wraps negative:
  an illegal memory access (this is Liger-Kernel#803). `row = tl.program_id(0).to(tl.int64)`
  is the safe fix.
* TRI004: the launch passes the hidden size itself as BLOCK_SIZE. It works for 4096 and 8192 and
  fails to compile for the first model whose hidden size is not a power of two (5120, 2880).
  Pass `triton.next_power_of_2(n_cols)`; the kernel already masks `cols < n_cols`.
* TRI014: the masked load of x has no `other=`, and x * x is summed: 0 is what GPUs return in the
  masked lanes today, but nothing promises it.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def rms_norm_fwd_kernel(x_ptr, w_ptr, y_ptr, x_row_stride, y_row_stride, n_cols, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    y = x * rstd * w
    tl.store(y_ptr + row * y_row_stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    rms_norm_fwd_kernel[(n_rows,)](x, weight, y, x.stride(0), y.stride(0), n_cols, eps, BLOCK_SIZE=n_cols)
    return y


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    x = torch.randn(16, 4096, device=device)
    w = torch.rand(4096, device=device)
    ref = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    torch.testing.assert_close(rms_norm(x, w), ref, atol=1e-4, rtol=1e-4)
