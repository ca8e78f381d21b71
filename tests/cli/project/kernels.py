import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def act_kernel(x_ptr, y_ptr, n, ITERS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    for _ in range(ITERS):
        x = libdevice.tanh(x)
        x = libdevice.tanh(x)  # noqa: TRI001
    tl.store(y_ptr + offs, x, mask=mask)
