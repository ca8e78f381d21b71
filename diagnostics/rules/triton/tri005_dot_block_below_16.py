"""TRI005 dot-block-below-16: `tl.dot` on a tile with a dimension under 16.

`tl.dot` maps onto tensor-core MMA tiles. In Triton 3.9 (checked by compiling for sm_90 and
gfx942 on 2026-11-29) NVIDIA needs the reduction dimension K >= 16 for fp16/bf16 operands
(>= 32 for fp8/int8, >= 8 for fp32); anything smaller is a compile error. M and N under 16 now
compile on NVIDIA (padded to the MMA tile since triton#7411) and AMD (FMA fallback), but older
Triton and Intel's backend reject them, and the padding is wasted tensor-core work.

The rule fires only when the shapes are known statically: literal shapes, constexpr defaults,
module constants, autotune `triton.Config` values, traced through `tl.arange`, `tl.zeros`,
`tl.load` of pointer grids and block pointers.
"""
from __future__ import annotations

from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Finding, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._static_sizes import KernelSizes, Scenario, kernel_sizes
from tritonify.diagnostics.triton_ast import keyword, tl_name

RULE = Rule(
    code="TRI005",
    name="dot-block-below-16",
    summary="tl.dot on a block with a dimension below 16",
    severity=Severity.WARNING,
    fixable=False,
    compile_break=True,
)

MIN_DIM = 16
MIN_K_ANY_DTYPE = 8   # fp32 operands (tf32 MMA) accept K = 8; nothing common accepts less


def _operands(call):
    a = call.args[0] if call.args else (keyword(call, "input").value if keyword(call, "input") else None)
    b = call.args[1] if len(call.args) > 1 else (keyword(call, "other").value if keyword(call, "other") else None)
    return a, b


def _dims(sizes: KernelSizes, call, scenario: Scenario) -> tuple[int | None, int | None, int | None]:
    """(M, N, K) of a dot under a scenario; None where unknown."""
    a, b = _operands(call)
    sa = sizes.shape(a, scenario) if a is not None else None
    sb = sizes.shape(b, scenario) if b is not None else None
    sa = sa if sa is not None and len(sa) >= 2 else None
    sb = sb if sb is not None and len(sb) >= 2 else None
    m = sa[-2] if sa else None
    n = sb[-1] if sb else None
    k = sa[-1] if sa else (sb[-2] if sb else None)
    return m, n, k


def _small_k_message(k: int, shape: str, where: str) -> str:
    return (
        f"`tl.dot` reduces over K={k}{where} ({shape}): below 16 it fails to compile on NVIDIA for fp16/bf16 "
        "operands (K >= 16; fp8/int8 need 32, fp32 needs 8); pad K to 16 with masked loads (`other=0`) or, "
        "for tiles this small, use `tl.sum(a[:, :, None] * b[None, :, :], 1)`"
    )


def _small_mn_message(m: int | None, n: int | None, shape: str, where: str) -> str:
    small = " and ".join(f"{label}={v}" for label, v in (("M", m), ("N", n)) if v is not None and v < MIN_DIM)
    gemv = (m == 1 or n == 1)
    alternative = ("`tl.sum(a * b[None, :], 1)` for a matrix-vector product" if gemv
                   else "`tl.sum(a[:, :, None] * b[None, :, :], 1)` for tiles this small")
    padded = " (the MMA pads M to 16: the extra rows are wasted work)" if m is not None and m < MIN_DIM else ""
    return (
        f"`tl.dot` on a tile with {small}{where} ({shape}): current Triton compiles it on NVIDIA (since "
        f"triton#7411, mid-2025) and AMD{padded}, but older Triton and Intel XPU reject dimensions below 16; "
        f"to stay portable pad to 16 with masked loads or use {alternative}"
    )


def check(ctx: PythonContext) -> Iterator[Finding]:
    for kernel in ctx.kernels:
        dots = [call for call in kernel.calls() if tl_name(ctx.imports, call.func) == "dot"]
        if not dots:
            continue   # most kernels have no `tl.dot`: their sizes are not worked out here
        sizes = kernel_sizes(ctx, kernel)   # shared with TRI004
        for call in dots:
            worst = None  # (rank, m, n, k, scenario): K problems outrank M/N problems
            for scenario in sizes.scenarios:
                m, n, k = _dims(sizes, call, scenario)
                if k is not None and 0 < k < MIN_DIM:
                    rank = 2 if k < MIN_K_ANY_DTYPE else 1
                elif any(v is not None and 0 < v < MIN_DIM for v in (m, n)):
                    rank = 0
                else:
                    continue
                if worst is None or rank > worst[0]:
                    worst = (rank, m, n, k, scenario)
            if worst is None:
                continue
            rank, m, n, k, scenario = worst
            described = scenario.describe(sizes.names(call))
            where = f" with {described}" if described else ""
            shape = f"M={m if m is not None else '?'}, N={n if n is not None else '?'}, K={k if k is not None else '?'}"
            if rank > 0:
                severity = Severity.ERROR if rank == 2 else Severity.WARNING
                message = _small_k_message(k, shape, where)  # type: ignore[arg-type]
                if scenario.config_index is not None:
                    message += ("; a config that fails to compile aborts autotuning (triton 3.9 skips only "
                                "configs that run out of resources, fail ptxas or a `tl.static_assert`), so drop it from the list")
                yield ctx.finding(call, message, severity=severity)
            else:
                yield ctx.finding(call, _small_mn_message(m, n, shape, where), severity=Severity.INFO)
