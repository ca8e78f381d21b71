"""Row-wise softmax, one program per row, with two memory mistakes that give wrong numbers.

* TRI014: the row is loaded with `mask=mask` but no `other=`. Masked-off lanes come back as 0
  on today's GPUs, so `tl.exp(x - x_max)` is `exp(-x_max)`, not 0, in every padded lane and the
  denominator is too large (for 1000 columns in a 1024 block, 24 extra terms). `other=-inf`
  makes those lanes vanish from both the max and the sum.
* TRI007: the store has no mask although the load is masked: the padded lanes of row r are
  written into the first columns of row r + 1, which another program is writing too.

Both fixes are safe (`tritonify check --fix` applies them).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask)
    x_max = tl.max(x, axis=0)
    num = tl.exp(x - x_max)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, num / den)


def softmax(x: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    softmax_kernel[(n_rows,)](out, x, x.stride(0), out.stride(0), n_cols, BLOCK_SIZE=triton.next_power_of_2(n_cols))
    return out


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    logits = torch.randn(8, 1000, device=device)
    torch.testing.assert_close(softmax(logits), torch.softmax(logits, dim=1))
