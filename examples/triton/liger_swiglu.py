"""The gated activation of a Llama MLP, written as an element-wise Triton kernel.

TRI003 fires on `silu_and_mul_kernel`: `gate * sigmoid(gate) * up` is Liger-Kernel's SwiGLU
(`liger_swiglu(a, b)`; `LigerSwiGLUMLP(config)` for the whole MLP).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _silu(x):
    return x * tl.sigmoid(x)


@triton.jit
def silu_and_mul_kernel(gate_ptr, up_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    gate = tl.load(gate_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(up_ptr + offs, mask=mask, other=0.0)
    out = _silu(gate).to(up.dtype) * up
    tl.store(out_ptr + offs, out, mask=mask)


def silu_and_mul(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(gate)
    n = gate.numel()
    silu_and_mul_kernel[(triton.cdiv(n, 1024),)](gate, up, out, n, BLOCK=1024)
    return out
