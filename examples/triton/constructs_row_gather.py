"""Gather a few rows per program and take their absolute value, written as if the kernel body
were ordinary Python.

TRI020 fires four times. `ROWS_PER_PROGRAM` is a plain module constant, and a kernel can read
only `tl.constexpr` globals. The row offsets come from a list comprehension over `range`, which
triton 3.9 rejects ("only tuple comprehensions are supported"). `abs` is not one of the builtins
a kernel may call, so it raises NameError. A `break` leaves the row loop early, and Triton loops
have no `break`. Under `TRITON_INTERPRET=1` the body runs as Python, so CPU tests pass; the first
GPU launch fails to compile. The fix: `ROWS_PER_PROGRAM = tl.constexpr(4)`, a
`tl.static_range` loop, `tl.abs`, and a mask instead of the `break`.
"""
import torch
import triton
import triton.language as tl

ROWS_PER_PROGRAM = 4


@triton.jit
def gather_abs_rows_kernel(x_ptr, idx_ptr, out_ptr, n_rows, n_cols, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    col_mask = cols < n_cols
    rows = [pid * ROWS_PER_PROGRAM + r for r in range(ROWS_PER_PROGRAM)]
    for r in rows:
        if r >= n_rows:
            break
        src = tl.load(idx_ptr + r)
        x = tl.load(x_ptr + src * n_cols + cols, mask=col_mask, other=0.0)
        tl.store(out_ptr + r * n_cols + cols, abs(x), mask=col_mask)


def gather_abs_rows(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = index.numel(), x.shape[1]
    out = torch.empty((n_rows, n_cols), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(n_rows, ROWS_PER_PROGRAM),)
    gather_abs_rows_kernel[grid](x, index, out, n_rows, n_cols, BLOCK_N=triton.next_power_of_2(n_cols))
    return out


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    x = torch.randn(64, 100, device=device)
    index = torch.randint(0, 64, (10,), device=device)
    torch.testing.assert_close(gather_abs_rows(x, index), x[index].abs())
