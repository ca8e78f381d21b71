"""CUD002 double-math-function-on-float: `exp(x * 0.5)` with `float x` calls the FP64 `exp`.

CUDA overloads the math functions (`float exp(float)` next to `double exp(double)`), so
`exp(x)` with a float `x` already runs the float version: measured, nvcc and NVRTC (CUDA 13.0)
emit no FP64 instruction for it, with or without <cmath>, also for `::exp` and `std::exp`.
That case is NOT reported. The call runs in double when an argument is double only because of
a double constant (`exp(x * 0.5)`, `pow(x, 2.0)`, `rsqrt(var + 1e-5)`), and, under nvcc only,
for `pow(float, int)` (C++11 promotes the int to double; NVRTC has a float overload). Those are
reported, with the float function (`expf`, `powf`, `rsqrtf`) as the fix.
"""
from __future__ import annotations

from typing import Iterator

from tritonify.diagnostics.cuda import syntax
from tritonify.diagnostics.cuda.context import CudaContext
from tritonify.diagnostics.cuda.types import DOUBLE_MATH_TO_FLOAT, Kind
from tritonify.diagnostics.model import Applicability, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule

RULE = Rule(
    code="CUD002",
    name="double-math-function-on-float",
    summary="double-precision math function called on single-precision data",
    severity=Severity.WARNING,
    language="cuda",
    fixable=True,
)


def _why(ctx: CudaContext, name: str, kinds: list[Kind]) -> str | None:
    """Why this call runs the double version, or None when it does not (or we cannot tell)."""
    if ctx.types.math_result(name, kinds) != Kind.PROMOTED:
        return None
    if ctx.types.pow_float_int_is_double(name, kinds):
        return "`pow(float, int)` resolves to the double pow under nvcc (C++11 promotes the int)"
    return "a double constant in its arguments makes them double, so the double overload is called"


def check(ctx: CudaContext) -> Iterator[Finding]:
    for call in ctx.device_nodes("call_expression"):
        name = syntax.callee_name(call)
        if name not in DOUBLE_MATH_TO_FLOAT:
            continue
        args = syntax.call_arguments(call)
        kinds = [ctx.types.kind(a) for a in args]
        why = _why(ctx, name, kinds)
        if why is None:
            continue
        if ctx.types.final_destination(call) == "double":
            continue   # the result is kept as double: FP64 is what the author asked for
        float_name = DOUBLE_MATH_TO_FLOAT[name]
        callee = call.child_by_field_name("function")
        fix = Fix(
            title=f"Call `{float_name}`",
            edits=(ctx.replace(callee, float_name),),
            applicability=Applicability.SAFE,
        )
        message = f"`{ctx.text_of(callee)}` runs in FP64 here: {why}; call `{float_name}`"
        if any(k in (Kind.PROMOTED, Kind.CONSTANT, Kind.INT_DOUBLE) for k in kinds):
            message += " and give the constants an `f` suffix"
        yield ctx.finding(call, message, [fix])
