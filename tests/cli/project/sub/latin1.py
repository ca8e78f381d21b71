import triton
import triton.language as tl
from triton.language.extra import libdevice

@triton.jit
def k(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    for _ in range(4):
        x = libdevice.tanh(x)  # café ÿ
    tl.store(x_ptr + tl.arange(0, 16), x)
