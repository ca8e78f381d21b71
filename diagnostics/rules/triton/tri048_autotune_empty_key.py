"""TRI048 autotune-empty-key: `@triton.autotune(configs=[...several...], key=[])`.

The autotuner keys its cache on the values of the `key` arguments and the dtypes of the tensor
arguments (triton/runtime/autotuner.py, `Autotuner.run`: `key = [_args[k] for k in self.keys]`
plus `str(arg.dtype)` per tensor). With an empty key, one entry per dtype combination: it
benchmarks every config on the first call and reuses the winner for every later call, whatever
its shapes. Several configs with `key=[]` therefore tune once, on whichever shape
comes first, and never again: a decode-sized first call picks the config for every prefill. The
behaviour is certain from the decorator alone; it was split out of TRI011 (whose other checks
stay opt-in) so that the default set can carry it.

One config, or a key list that is not written literally (built at run time), is not reported. The
fix adds the sizes the tuned block sizes tile (TRI011's reading of the kernel) when it finds them.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import PurePath

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.liger.scope import VENDORED_FOLDERS
from tritonify.diagnostics.model import Finding, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._autotune_call import read_configs
from tritonify.diagnostics.rules.triton.tri011_autotune_key import add_to_key, key_entries, missing_sizes

RULE = Rule(
    code="TRI048",
    name="autotune-empty-key",
    summary="`key=[]` on an autotune with several configs: tuned once, on the first call's shapes",
    severity=Severity.WARNING,
    fixable=True, safe_fix=False,
    # Opt-in: round 5 of the real-world study (labelled blind, benchmarks/realworld/labels/
    # round5_default.csv) found its 4 corpus findings FP: all in vLLM's vendored copy of DeepGEMM's
    # legacy (Ampere-only) kernels. Vendored code is skipped since; it joins the default set once a
    # round measures it at 90% or more.
    default=False,
)


def _vendored(path: str | None) -> bool:
    """A file under a vendored folder (`third_party/`, `vendor/`): another project's code, kept as
    it is; its tuning is not this project's to change."""
    return any(part.lower() in VENDORED_FOLDERS for part in PurePath(path or "").parts[:-1])


def check(ctx: PythonContext) -> Iterator[Finding]:
    if _vendored(ctx.source.path):
        return
    for kernel in ctx.kernels:
        if kernel.autotune is None:
            continue
        key_list, entries = key_entries(ctx, kernel.autotune)
        if key_list is None or entries is None or entries:
            continue
        configs = read_configs(ctx, kernel.autotune)
        if not configs.many:
            continue  # one config: nothing is tuned
        missing, _ = missing_sizes(ctx, kernel, entries, configs)
        tail = (f"; add the sizes it tiles: {', '.join(missing)}" if missing
                else "; list the arguments whose values change the best config")
        yield ctx.finding(
            key_list,
            "`key=[]` with several configs tunes once, on the first call's shapes, and reuses that config for "
            "every later shape" + tail,
            add_to_key(ctx, kernel, key_list, missing),
        )
