"""Inputs for one call: fresh random draws, the never-zeros check, upcasting, rotating sets.

Correctness needs inputs that exercise the kernel: zeros hide unwritten outputs and wrong indexing
(and run faster than real data), so all-zero or constant floating inputs are refused.
Timing needs inputs that do not sit in L2 between repetitions: when one set fits in the cache,
several sets are made and calls rotate among them.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import torch
from tritonify.kernels.bench.contract import Contract, ContractError


def dtype_of(name: str) -> torch.dtype:
    return getattr(torch, name)


def make_inputs(contract: Contract, shape: tuple, device: str, seed: int) -> tuple:
    """One fresh set of arguments, drawn after seeding torch with ``seed``; refused if degenerate."""
    torch.manual_seed(seed)
    args = contract.inputs(shape, dtype_of(contract.dtype), device)
    if not isinstance(args, (tuple, list)):
        args = (args,)
    check_not_degenerate(args)
    return tuple(args)


def check_not_degenerate(args: Iterable[Any]) -> None:
    """Refuse floating tensors that are all one value (zeros above all): they hide bugs."""
    for i, a in enumerate(args):
        if isinstance(a, torch.Tensor) and a.is_floating_point() and a.numel() > 1:
            flat = a.reshape(-1)
            if bool((flat == flat[0]).all()):
                raise ContractError(
                    f"input {i} is constant ({flat[0].item()!r} everywhere): the input factory must draw "
                    "random data (torch.randn), never zeros or ones, or correctness checks prove nothing")


def clone_args(args: tuple) -> tuple:
    """Deep copies of the tensor arguments (a launcher that works in place must not change the reference's)."""
    return tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)


def upcast_args(args: tuple, dtype: torch.dtype = torch.float64) -> tuple:
    """Floating tensors converted to ``dtype`` (float64: the reference's higher precision)."""
    return tuple(a.to(dtype) if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args)


def tensors(value: Any) -> list[torch.Tensor]:
    """The tensors in an output: a tensor, or a (nested) tuple/list of them; None and scalars dropped."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in tensors(v)]
    return []


def nbytes(values: Iterable[Any]) -> int:
    return sum(t.numel() * t.element_size() for v in values for t in tensors(v))


def rotation_count(set_bytes: int, l2_bytes: int | None, limit: int = 16) -> int:
    """How many input sets to rotate among so that consecutive calls never find their data in L2.

    Enough sets to span twice the L2 (1 when one set is already larger than that)."""
    if not l2_bytes or set_bytes <= 0 or set_bytes >= 2 * l2_bytes:
        return 1
    return max(2, min(limit, math.ceil(2 * l2_bytes / set_bytes)))


def rotating(fn: Callable[..., Any], sets: list[tuple]) -> Callable[[], Any]:
    """A no-argument callable that calls ``fn`` on the next input set each time."""
    if len(sets) == 1:
        only = sets[0]
        return lambda: fn(*only)
    state = {"i": 0}

    def call():
        i = state["i"]
        state["i"] = (i + 1) % len(sets)
        return fn(*sets[i])

    return call
