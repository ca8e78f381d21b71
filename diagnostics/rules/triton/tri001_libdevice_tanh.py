"""TRI001 libdevice-tanh: `libdevice.tanh` in a kernel is an out-of-line `__nv_tanhf` call.

Severity follows where the cost shows. A warning where the tanh runs on a tile (one value per
element) inside a loop that either works on `tl.dot` results (an attention softcap) or loads
nothing (repeated math on values already in registers). Information elsewhere: one tanh per
loaded element runs at memory speed (measured on an H200: 36-37 us with libdevice, the sigmoid
identity or `tanh.approx` alike). Nothing for a tanh on a reduced or scalar value (once per row:
a label's logit, a selected score) and nothing where the code targets another vendor than NVIDIA
(`ctx.target`): `__nv_tanhf` and `tanh.approx.f32` are NVIDIA's.
"""
from __future__ import annotations

import ast
from typing import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Applicability, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._kernel_flow import enclosing_loops, is_tl_call, taint
from tritonify.diagnostics.rules.triton._tile_values import tile_values
from tritonify.diagnostics.triton_ast import TL, Kernel, libdevice_name, walk_nodes

RULE = Rule(
    code="TRI001",
    name="libdevice-tanh",
    summary="slow libdevice tanh in a Triton kernel",
    severity=Severity.WARNING,
    fixable=True,
)

# Measured on an H200 (triton 3.6), 64 chained tanh per element over 16M fp32 elements:
# libdevice 0.682 ms, sigmoid identity 0.617 ms (max abs err 4.8e-7), tanh.approx.f32 0.266 ms
# (max abs err 1.2e-5). With one tanh per element all three run at memory speed.
ASM = 'tanh.approx.f32 $0, $1;'


def _is_tanh_callee(ctx: PythonContext, func: ast.expr) -> bool:
    if libdevice_name(ctx.imports, func) == "tanh":
        return True
    path = ctx.imports.resolve(func) or ""
    # triton 2.x spelling, still common: tl.math.tanh
    return path == f"{TL}.math.tanh"


def _loads_nothing(ctx: PythonContext, loop: ast.stmt) -> bool:
    """The loop body reads no memory: its math works on values already in registers."""
    return not any(
        is_tl_call(ctx, n, "load") or (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                                        and n.func.attr == "load")
        for n in walk_nodes(loop)
    )


def _hot_reason(ctx: PythonContext, kernel: Kernel, call: ast.Call, from_dot: set[str]) -> str | None:
    """Why this tanh is in compute-bound code, or None."""
    if not tile_values(ctx, kernel).is_tile(call.args[0]):
        return None
    loops = enclosing_loops(ctx, call, kernel.node)
    if not loops:
        return None
    arg = call.args[0]
    if any(is_tl_call(ctx, n, "dot") for n in walk_nodes(arg)) or any(
        isinstance(n, ast.Name) and n.id in from_dot for n in walk_nodes(arg)
    ):
        return "on tl.dot results inside a loop"
    if _loads_nothing(ctx, loops[0]):
        return "inside a loop"
    return None


def _operand(ctx: PythonContext, arg: ast.expr) -> str:
    text = ctx.segment(arg)
    if isinstance(arg, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)):
        return text
    return f"({text})"


def _tl(ctx: PythonContext) -> str:
    aliases = sorted(ctx.imports.aliases_of(TL))
    return "tl" if "tl" in aliases or not aliases else aliases[0]


def check(ctx: PythonContext) -> Iterator[Finding]:
    for kernel in ctx.kernels:
        calls = [c for c in kernel.calls() if _is_tanh_callee(ctx, c.func) and len(c.args) == 1 and not c.keywords]
        if not calls:
            continue
        values = tile_values(ctx, kernel)
        from_dot = taint(kernel, values.binds, lambda n: is_tl_call(ctx, n, "dot"))
        for call in calls:
            if values.per_row(call.args[0]) or not ctx.target.nvidia(call):
                continue   # paid once per row, or not NVIDIA code
            where = _hot_reason(ctx, kernel, call, from_dot)
            if where is None:
                # One tanh per loaded element runs at memory speed (the page's H200 measurement):
                # labelled noise on every such finding of the real-world study, so not reported.
                continue
            x = _operand(ctx, call.args[0])
            tl = _tl(ctx)
            message = (
                f"libdevice tanh is an out-of-line call ({where}); in compute-bound code use "
                f"`2 * {tl}.sigmoid(2 * x) - 1` (exact to 5e-7) or PTX `tanh.approx.f32` "
                "(2.6x faster on H200, abs error 1.2e-5, NVIDIA sm_75+ only)"
            )
            fixes = [
                Fix(
                    title="Replace with the sigmoid identity 2*sigmoid(2x)-1",
                    edits=(ctx.replace_expr(call, f"2 * {tl}.sigmoid(2 * {x}) - 1"),),
                    applicability=Applicability.SAFE,
                ),
                Fix(
                    title="Replace with PTX tanh.approx.f32 (NVIDIA sm_75+, abs error ~1e-5)",
                    edits=(ctx.replace(
                        call,
                        f'{tl}.inline_asm_elementwise("{ASM}", "=f,f", [{x}], dtype={tl}.float32, is_pure=True, pack=1)',
                    ),),
                    applicability=Applicability.UNSAFE,
                ),
            ]
            yield ctx.finding(call, message, fixes, severity=Severity.WARNING)
