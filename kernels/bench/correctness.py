"""Correctness first: compare an implementation with the reference before anything is timed.

* Fresh random inputs for every check (``inputs.make_inputs`` with a new seed), never zeros.
* The reference runs on float64 copies of the inputs (higher precision than any kernel dtype).
* Output buffers are poisoned before the run: every ``torch.empty`` the launcher makes is filled
  with NaN (integers: their maximum) through PyTorch's deterministic mode
  (``torch.utils.deterministic.fill_uninitialized_memory``), and a buffer passed as ``out=`` is
  filled with NaN by hand. An element the kernel never wrote stays poison and is counted.
* Pass means: same shapes, no unwritten element, and ``|out - ref| <= atol + rtol*|ref|`` everywhere
  (NaN never passes unless the reference is NaN there too).
"""
from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import torch
from tritonify.kernels.bench.contract import Contract
from tritonify.kernels.bench.inputs import clone_args, make_inputs, tensors, upcast_args


@dataclass
class Check:
    """The outcome of one correctness check of one implementation at one shape."""

    correct: bool
    message: str
    max_abs_err: float | None = None
    rel_l2_err: float | None = None      # ||out - ref|| / ||ref|| over finite elements
    mismatched: int = 0                  # elements outside atol + rtol*|ref|
    unwritten: int = 0                   # elements still holding the poison value
    elements: int = 0
    seed: int | None = None

    def to_dict(self) -> dict:
        return asdict(self)


@contextlib.contextmanager
def poisoned_allocations():
    """Inside: every uninitialised tensor PyTorch allocates is filled with NaN (ints: max value)."""
    was_on = torch.are_deterministic_algorithms_enabled()
    was_warn = torch.is_deterministic_algorithms_warn_only_enabled()
    was_fill = torch.utils.deterministic.fill_uninitialized_memory
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.utils.deterministic.fill_uninitialized_memory = True
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(was_on, warn_only=was_warn)
        torch.utils.deterministic.fill_uninitialized_memory = was_fill


def poison_(t: torch.Tensor) -> torch.Tensor:
    """Fill a buffer with the poison value for its dtype."""
    if t.is_floating_point() or t.is_complex():
        return t.fill_(float("nan"))
    if t.dtype == torch.bool:
        return t.fill_(True)
    return t.fill_(torch.iinfo(t.dtype).max)


def _is_poison(t: torch.Tensor) -> torch.Tensor:
    if t.is_floating_point() or t.is_complex():
        return torch.isnan(t)
    if t.dtype == torch.bool:
        return torch.zeros_like(t, dtype=torch.bool)  # no spare value to poison a bool with
    return t == torch.iinfo(t.dtype).max


def synchronize(device: str) -> None:
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def call_poisoned(fn: Callable[..., Any], args: tuple, out_factory: Callable[..., Any] | None = None) -> Any:
    """Call ``fn`` with its output allocations poisoned; with ``out_factory``, pass a poisoned ``out=``."""
    with poisoned_allocations():
        if out_factory is None:
            return fn(*args)
        out = out_factory(*args)
        for t in tensors(out):
            poison_(t)
        result = fn(*args, out=out)
        return out if result is None else result


def compare(out: Any, ref: Any, atol: float, rtol: float) -> Check:
    """Element-wise comparison of an output (tensor or tuple) with the float64 reference."""
    outs, refs = tensors(out), tensors(ref)
    if len(outs) != len(refs):
        return Check(False, f"returned {len(outs)} tensor(s), the reference {len(refs)}")
    worst, mismatched, unwritten, elements = 0.0, 0, 0, 0
    diff_sq, ref_sq = 0.0, 0.0
    for i, (o, r) in enumerate(zip(outs, refs)):
        if tuple(o.shape) != tuple(r.shape):
            return Check(False, f"output {i} has shape {tuple(o.shape)}, the reference {tuple(r.shape)}")
        r64 = r.detach().to(torch.float64)
        never_written = _is_poison(o.detach()) & ~torch.isnan(r64)
        o64 = o.detach().to(torch.float64)
        err = (o64 - r64).abs()
        both_nan = torch.isnan(o64) & torch.isnan(r64)
        ok = (err <= atol + rtol * r64.abs()) | both_nan
        finite = torch.isfinite(err)
        elements += o.numel()
        unwritten += int(never_written.sum())
        mismatched += int((~ok).sum())
        if bool(finite.any()):
            worst = max(worst, float(err[finite].max()))
            diff_sq += float((err[finite] ** 2).sum())
            ref_sq += float((r64[finite] ** 2).sum())
    rel = (diff_sq ** 0.5) / (ref_sq ** 0.5) if ref_sq > 0 else None
    if unwritten:
        msg = f"{unwritten} of {elements} output elements were never written (still poison)"
    elif mismatched:
        msg = (f"{mismatched} of {elements} elements differ from the reference beyond atol={atol:g}, "
               f"rtol={rtol:g} (max abs error {worst:.3g})")
    else:
        msg = f"matches the float64 reference (max abs error {worst:.3g}, atol={atol:g}, rtol={rtol:g})"
    return Check(not unwritten and not mismatched, msg, worst, rel, mismatched, unwritten, elements)


def check(fn: Callable[..., Any], contract: Contract, shape: tuple, device: str, seed: int,
          *, use_out: bool = False, poison: bool = True) -> Check:
    """Draw fresh inputs with ``seed``, run the reference in float64 and ``fn`` (poisoned), compare.

    ``poison=False`` is for baselines: PyTorch's own ops need no poisoning, and turning deterministic
    mode on and off would make ``torch.compile`` recompile for each mode."""
    args = make_inputs(contract, shape, device, seed)
    ref = contract.reference(*upcast_args(clone_args(args)))
    if poison:
        out = call_poisoned(fn, args, contract.out if use_out else None)
    else:
        out = fn(*args)
    synchronize(device)
    atol, rtol = contract.tolerances
    result = compare(out, ref, atol, rtol)
    result.seed = seed
    return result
