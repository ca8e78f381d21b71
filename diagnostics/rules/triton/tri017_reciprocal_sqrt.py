"""TRI017 reciprocal-sqrt: `1 / tl.sqrt(x)` in a kernel, where `tl.rsqrt(x)` is one instruction.

`1.0 / tl.sqrt(x)` costs a square root and a full-precision division; `tl.rsqrt(x)` lowers to
a single `rsqrt.approx` (MUFU) instruction. The two agree to a few ulp in fp32. Also matched:
`libdevice.sqrt`, `tl.math.sqrt` and `tl.sqrt_rn` (the correctly rounded square root: the
division after it is not correctly rounded anyway, so the rewrite keeps the same error class).

Reported only where the cost repeats: the square root's argument is a tile (one value per
element, `_tile_values`), not a reduced row statistic. `1 / tl.sqrt(var + eps)` on a row variance
is paid once per row and is not worth a finding. Only where the code targets NVIDIA or an
unknown target (`ctx.target`): the single-instruction claim is about PTX `rsqrt.approx`.

Opt-in (`default=False`): on the real-world corpus nearly every `1 / tl.sqrt` is a row statistic
(once per row), and a row vector of statistics cannot be told from a tile syntactically.
"""
from __future__ import annotations

import ast
from typing import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Applicability, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._precision import in_loop, numeric_value, tl_alias
from tritonify.diagnostics.rules.triton._tile_values import tile_values
from tritonify.diagnostics.triton_ast import TL, libdevice_name

RULE = Rule(
    code="TRI017",
    name="reciprocal-sqrt",
    summary="1 / sqrt(x) in a Triton kernel instead of tl.rsqrt(x)",
    severity=Severity.INFO,
    fixable=True,
    default=False,
)

SQRT_PATHS = {f"{TL}.sqrt", f"{TL}.sqrt_rn", f"{TL}.math.sqrt", f"{TL}.math.sqrt_rn"}


def _is_sqrt(ctx: PythonContext, func: ast.expr) -> bool:
    if libdevice_name(ctx.imports, func) in ("sqrt", "sqrt_rn"):
        return True
    return (ctx.imports.resolve(func) or "") in SQRT_PATHS


def check(ctx: PythonContext) -> Iterator[Finding]:
    for kernel in ctx.kernels:
        for node in kernel.walk():
            if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)):
                continue
            call = node.right
            if numeric_value(node.left) != 1.0 or not isinstance(call, ast.Call):
                continue
            if not _is_sqrt(ctx, call.func) or len(call.args) != 1 or call.keywords:
                continue
            if not tile_values(ctx, kernel).is_tile(call.args[0]) or not ctx.target.nvidia(node):
                continue   # once per row (a reduced statistic), or not NVIDIA code
            tl = tl_alias(ctx)
            arg = ctx.segment(call.args[0])
            hot = in_loop(ctx, node, kernel)
            yield ctx.finding(
                node,
                f"`{ctx.segment(node)}` computes a square root and a division; use `{tl}.rsqrt({arg})` "
                "(one rsqrt.approx instruction, within a few ulp) on every element" + (" inside this loop" if hot else ""),
                [Fix(f"Replace with {tl}.rsqrt(...)", (ctx.replace(node, f"{tl}.rsqrt({arg})"),), Applicability.SAFE)],
                severity=Severity.WARNING if hot else Severity.INFO,
            )
