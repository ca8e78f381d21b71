"""TRI001 libdevice-tanh: `libdevice.tanh` in a kernel is an out-of-line `__nv_tanhf` call."""
from __future__ import annotations

import ast
from typing import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Applicability, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.triton_ast import TL, libdevice_name

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


def _in_loop(ctx: PythonContext, node: ast.AST, kernel_node: ast.AST) -> bool:
    for anc in ctx.ancestors(node):
        if anc is kernel_node:
            return False
        if isinstance(anc, (ast.For, ast.While)):
            return True
    return False


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
        for call in calls:
            hot = _in_loop(ctx, call, kernel.node) or len(calls) > 1
            x = _operand(ctx, call.args[0])
            tl = _tl(ctx)
            where = ("inside a loop" if _in_loop(ctx, call, kernel.node) else f"{len(calls)} tanh calls in this kernel") if hot else ""
            message = (
                f"libdevice tanh is an out-of-line call{f' ({where})' if where else ''}; in compute-bound code use "
                f"`2 * {tl}.sigmoid(2 * x) - 1` (exact to 5e-7) or PTX `tanh.approx.f32` "
                "(2.6x faster on H200, abs error 1.2e-5, NVIDIA sm_75+ only)"
            )
            if not hot:
                message += "; a single tanh in a memory-bound kernel costs nothing measurable"
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
            yield ctx.finding(call, message, fixes, severity=Severity.WARNING if hot else Severity.INFO)
