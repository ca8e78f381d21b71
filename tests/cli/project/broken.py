import triton
import triton.language as tl

@triton.jit
def half_typed(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK
