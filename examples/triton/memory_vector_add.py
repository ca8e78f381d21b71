"""Vector add, the first Triton kernel most people write, with the bounds check forgotten.

TRI007 fires on all three accesses: `n_elements` is passed but never used, so whenever the size
is not a multiple of BLOCK_SIZE the last program reads both inputs and writes the output past
their end (98,000 elements with BLOCK_SIZE=1024: the last block touches 304 elements too many).
The fix is the mask the tutorial has: `mask = offsets < n_elements` on every access.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offsets)
    y = tl.load(y_ptr + offsets)
    tl.store(out_ptr + offsets, x + y)


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n_elements = out.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    add_kernel[grid](x, y, out, n_elements, BLOCK_SIZE=1024)
    return out


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    a = torch.rand(98_000, device=device)
    b = torch.rand(98_000, device=device)
    torch.testing.assert_close(add(a, b), a + b)
