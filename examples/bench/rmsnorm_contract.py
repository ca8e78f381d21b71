"""Benchmark contract for rmsnorm.py's ``rmsnorm_kernel`` (found without configuration: <file>_contract.py).

    tritonify bench examples/bench/rmsnorm.py::rmsnorm_kernel --baselines eager,compile,liger
"""
import torch
from rmsnorm import rmsnorm
from tritonify.kernels.bench import Contract


def make_inputs(shape, dtype, device):
    """x of ``shape`` and a weight over its last dimension, both random (never zeros)."""
    x = torch.randn(shape, dtype=dtype, device=device)
    weight = 1.0 + 0.1 * torch.randn(shape[-1], dtype=dtype, device=device)
    return x, weight, 1e-6


def torch_rms_norm(x, weight, eps):
    """PyTorch's own op (``torch.nn.functional.rms_norm``): the eager fused path, as a second eager baseline."""
    return torch.nn.functional.rms_norm(x, (x.shape[-1],), weight, eps)


def rmsnorm_reference(x, weight, eps):
    """PyTorch eager RMSNorm, accumulating in fp32 (or fp64 when given fp64, as the correctness check does)."""
    xf = x if x.dtype == torch.float64 else x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + eps) * weight.to(xf.dtype)
    return y.to(x.dtype)


CONTRACT = Contract(
    kernel="rmsnorm_kernel",
    entry=rmsnorm,
    inputs=make_inputs,
    reference=rmsnorm_reference,
    shapes=[(2048, 4096), (8192, 4096), (16384, 4096), (4096, 8192)],
    dtype="bfloat16",
    liger="rms_norm",      # liger_kernel.transformers.functional.liger_rms_norm(x, weight, eps)
    baselines={"torch_rms_norm": torch_rms_norm},
    target=0.8,            # 80% of the measured copy bandwidth
)
