"""A scaled copy whose block size was left as a plain parameter.

TRI019: `BLOCK_SIZE` is a `tl.arange` bound, so it must be `tl.constexpr`; as written Triton stops
with "arange's arguments must be of type tl.constexpr" on the first launch. The safe fix annotates
the parameter; the launch does not change.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n_elements, scale, BLOCK_SIZE):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.store(out_ptr + offsets, x * scale, mask=mask)


def scale(x: torch.Tensor, factor: float) -> torch.Tensor:
    out = torch.empty_like(x)
    n_elements = x.numel()
    scale_kernel[(triton.cdiv(n_elements, 1024),)](x, out, n_elements, factor, BLOCK_SIZE=1024)
    return out


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    t = torch.randn(5000, device=device)
    torch.testing.assert_close(scale(t, 0.5), t * 0.5)
