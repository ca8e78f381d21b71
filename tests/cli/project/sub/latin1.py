import triton
from triton.language.extra import libdevice

@triton.jit
def k(x):
    return libdevice.tanh(x)  # café ÿ
