"""The implementations a kernel is timed against: eager, ``torch.compile``, Liger-Kernel, any callable.

* ``eager``: the contract's reference at the kernel's own dtype (what a user would otherwise run).
* ``compile``: ``torch.compile(reference)`` (default mode; compiled once per process, warm-up excluded).
* ``liger``: the contract's ``liger`` callable, or an op name from ``LIGER_OPS``, called with the
  entry's arguments in the order listed there. Liger-Kernel (0.8.5) is imported only when asked for.
* any other name: a callable from the contract's ``baselines``.

A baseline that cannot be built is skipped with the reason, never silently dropped.
"""
from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tritonify.kernels.bench.contract import KNOWN_BASELINES, Contract

# op name -> (module, function, the arguments it takes, in order)
LIGER_OPS: dict[str, tuple[str, str, str]] = {
    "rms_norm": ("liger_kernel.transformers.functional", "liger_rms_norm", "(x, weight, eps)"),
    "layer_norm": ("liger_kernel.transformers.functional", "liger_layer_norm", "(x, weight, bias, eps)"),
    "swiglu": ("liger_kernel.transformers.functional", "liger_swiglu", "(a, b): silu(a) * b"),
    "geglu": ("liger_kernel.transformers.functional", "liger_geglu", "(a, b): gelu_tanh(a) * b"),
    "softmax": ("liger_kernel.transformers.functional", "liger_softmax", "(x): softmax over the last dim"),
    "relu_squared": ("liger_kernel.transformers.functional", "liger_relu_squared", "(x)"),
    "cross_entropy": ("liger_kernel.transformers.functional", "liger_cross_entropy", "(logits, target)"),
    "fused_add_rms_norm": ("liger_kernel.transformers.functional", "liger_fused_add_rms_norm", "(x, residual, weight, eps)"),
}


@dataclass
class Baseline:
    name: str
    fn: Callable[..., Any] | None
    skipped: str | None = None      # why it is not run


def _quiet_liger() -> None:
    # Liger logs a warning per unavailable backend (cutedsl, ascend) on import: noise, not news.
    logging.getLogger("liger_kernel.backends.registry").setLevel(logging.ERROR)


def liger_callable(spec: Callable[..., Any] | str) -> Callable[..., Any]:
    if callable(spec):
        return spec
    if spec not in LIGER_OPS:
        raise LookupError(f"unknown Liger op {spec!r}; known: {', '.join(sorted(LIGER_OPS))} (or pass a callable)")
    module, func, _ = LIGER_OPS[spec]
    _quiet_liger()
    return getattr(importlib.import_module(module), func)


def build(contract: Contract, names: list[str] | None) -> list[Baseline]:
    """The baselines to run, in order; ``names`` None means eager, compile, liger and every custom one."""
    wanted = list(names) if names else [*KNOWN_BASELINES, *contract.baselines]
    out: list[Baseline] = []
    for name in wanted:
        if name == "eager":
            out.append(Baseline("eager", contract.reference))
        elif name == "compile":
            if not contract.compile:
                out.append(Baseline("compile", None, "the contract sets compile=False"))
                continue
            try:
                import torch

                out.append(Baseline("compile", torch.compile(contract.reference)))
            except Exception as exc:
                out.append(Baseline("compile", None, f"torch.compile failed: {type(exc).__name__}: {exc}"))
        elif name == "liger":
            if contract.liger is None:
                out.append(Baseline("liger", None, "Liger-Kernel has no such op (the contract's liger is None)"))
                continue
            try:
                out.append(Baseline("liger", liger_callable(contract.liger)))
            except ImportError as exc:
                out.append(Baseline("liger", None, f"Liger-Kernel is not importable here ({exc})"))
            except LookupError as exc:
                out.append(Baseline("liger", None, str(exc)))
        elif name in contract.baselines:
            out.append(Baseline(name, contract.baselines[name]))
        else:
            out.append(Baseline(name, None, f"unknown baseline {name!r} (eager, compile, liger"
                                            + "".join(f", {n}" for n in contract.baselines) + ")"))
    return out
