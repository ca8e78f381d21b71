"""TRI053 autotune-key-not-a-parameter: a `@triton.autotune` `key=` entry (or a `reset_to_zero=` /
`restore_value=` entry) that names no parameter of the kernel.

Triton's autotuner keys its cache on the values of the arguments the key names. An entry that is not
an argument is dropped silently by Triton up to 3.8 (`Autotuner.run` keeps only the names it finds
among the arguments): the sizes the author meant to re-tune on never re-tune, and with no other entry
the kernel tunes once, on the first call's shapes. Triton 3.9 validates the names and raises
`ValueError` when the decorator runs, so the module no longer imports (pytorch/ao#4880: TorchAO's
`key=["num_elements"]` on a kernel whose parameters are `E, N, K`). Either way the key is a bug; the
fix renames the entry to the parameter it most likely means (`n_element` -> `n_elements`) when there
is one. Split out of TRI011 (whose size-omission findings stay opt-in) to be in the default set.
The key is read as TRI011 reads it: a literal list in the decorator or a module-level name bound to
one; a key it cannot read is not judged.
"""
from __future__ import annotations

from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Applicability, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton.tri011_autotune_key import closest_parameter, key_entries

RULE = Rule(
    code="TRI053",
    name="autotune-key-not-a-parameter",
    summary="autotune key entry that names no parameter of the kernel (silently dropped; ValueError on Triton 3.9)",
    severity=Severity.ERROR,
    fixable=True, safe_fix=False,
    # Default: a key name that is not an argument is a bug on every Triton version (dropped, or an
    # import-time ValueError from 3.9); on the real-world corpus its one finding is pytorch/ao#4880's.
)


# (argument, position in triton.autotune, what Triton up to 3.8 does with a name that is no argument)
_NAME_LISTS = (
    ("key", 1, "drops it silently (the kernel never re-tunes on it)"),
    ("reset_to_zero", 3, "fails with KeyError when the autotuner benchmarks (`kwargs[name].zero_()`)"),
    ("restore_value", 4, "fails with KeyError when the autotuner benchmarks (`kwargs[name].clone()`)"),
)


def check(ctx: PythonContext) -> Iterator[Finding]:
    for kernel in ctx.kernels:
        if kernel.autotune is None:
            continue
        for arg, index, older in _NAME_LISTS:
            _, entries = key_entries(ctx, kernel.autotune, index, arg)
            for entry in entries or ():
                if entry.value in kernel.param_names:
                    continue
                close = closest_parameter(entry.value, kernel.param_names)
                hint = f" (did you mean `{close}`?)" if close else ""
                fixes = [Fix(
                    title=f'Use the parameter name "{close}"',
                    edits=(ctx.replace(entry, f'"{close}"'),),
                    applicability=Applicability.UNSAFE,
                )] if close else []
                what = "autotune key" if arg == "key" else f"autotune `{arg}` entry"
                yield ctx.finding(
                    entry,
                    f"{what} `{entry.value}` is not a parameter of `{kernel.name}`{hint}: Triton up to 3.8 "
                    f"{older}, Triton 3.9 raises ValueError at import; name a kernel argument",
                    fixes,
                    severity=Severity.ERROR,
                )
