"""Shared checks for the template tests: fresh random inputs, float64 references, stated tolerances."""
from __future__ import annotations

import itertools
import os

import torch

DEVICE = os.environ.get("TRITONIFY_TEST_DEVICE", "cpu")

DTYPES = [torch.float32, torch.bfloat16, torch.float16]

# |got - ref| <= atol + rtol * |ref| element-wise, against a float64 reference. bf16 keeps 8 mantissa
# bits (relative rounding 2^-8 = 3.9e-3) and fp16 11 bits; gradients pass through one more rounding.
TOLERANCES = {
    torch.float32: (2e-5, 2e-4),
    torch.bfloat16: (2e-2, 3e-2),
    torch.float16: (3e-3, 4e-3),
}

_seeds = itertools.count(1234)


def fresh_generator() -> torch.Generator:
    """A new seed for every draw, so no two checks see the same inputs."""
    return torch.Generator().manual_seed(next(_seeds))


def randn(*shape, dtype, gen: torch.Generator, scale: float = 1.0, shift: float = 0.0) -> torch.Tensor:
    t = (shift + scale * torch.randn(*shape, generator=gen, dtype=torch.float64)).to(dtype=dtype, device=DEVICE)
    assert t.abs().sum() > 0 and t.unique().numel() > 1, "inputs must not be constant"
    return t


def leaf(t: torch.Tensor) -> torch.Tensor:
    return t.detach().clone().requires_grad_()


def as_reference(t: torch.Tensor) -> torch.Tensor:
    return t.detach().to(torch.float64).requires_grad_()


def assert_close(got: torch.Tensor, ref: torch.Tensor, dtype: torch.dtype, what: str, scale: float = 1.0) -> None:
    """Element-wise check; ``scale`` widens the tolerance for outputs that sum many rounded terms
    (matmul-based gradients), relative to the largest reference value."""
    atol, rtol = TOLERANCES[dtype]
    got64, ref64 = got.detach().to(torch.float64), ref.detach().to(torch.float64)
    assert got64.shape == ref64.shape, f"{what}: shape {tuple(got64.shape)} != {tuple(ref64.shape)}"
    assert torch.isfinite(got64).all(), f"{what}: non-finite values"
    bound = atol * scale * max(1.0, ref64.abs().max().item()) + rtol * ref64.abs()
    err = (got64 - ref64).abs()
    worst = (err - bound).max().item()
    assert worst <= 0, f"{what} ({dtype}): max abs error {err.max().item():.3g} exceeds tolerance"
