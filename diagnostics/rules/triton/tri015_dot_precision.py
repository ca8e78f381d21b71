"""TRI015 dot-precision: implicit fp32 `tl.dot` precision, and the deprecated `allow_tf32=`.

An fp32 x fp32 `tl.dot` without `input_precision=` does not run in fp32: on NVIDIA it uses TF32
tensor cores (10-bit mantissa) by default, the default has moved between Triton versions
(triton#9080 made it "tf32x3", later reverted; Triton 3.9's `tl.dot` resolves it to "tf32" on
NVIDIA and "ieee" on AMD except gfx942) and `TRITON_F32_DEFAULT` can change it per process.
Saying it explicitly is the only way the kernel means the same thing everywhere.

Fires only where both operands are fp32 for sure: cast with `.to(tl.float32)`, built with
`tl.zeros(..., dtype=tl.float32)`, a previous `tl.dot` result, or loaded through a pointer whose
tensor the launch site in the same file makes fp32. Unknown dtypes stay quiet; fp16/bf16/fp8/int8
operands are never affected.

`allow_tf32=` is deprecated (triton#3498). `allow_tf32=False` -> `input_precision="ieee"` is a
safe fix. `allow_tf32=True` -> `input_precision="tf32"` is unsafe: Triton silently fell back to
IEEE for `allow_tf32=True` on backends without TF32 (AMD other than gfx942), where an explicit
`"tf32"` is rejected at compile time.
"""
from __future__ import annotations

import ast
from typing import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Applicability, Edit, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._precision import (
    HostDtypes, KernelDtypes, launches, pointer_dtypes,
)
from tritonify.diagnostics.triton_ast import TL, keyword

RULE = Rule(
    code="TRI015",
    name="dot-precision",
    summary="fp32 tl.dot without input_precision=, or deprecated allow_tf32=",
    severity=Severity.WARNING,
    fixable=True,
)

NOT_FP32 = {"fp16", "bf16", "fp8", "int", "fp64", "bool"}


def _is_dot(ctx: PythonContext, call: ast.Call) -> bool:
    return (ctx.imports.resolve(call.func) or "") == f"{TL}.dot"


def _allow_tf32_fixes(ctx: PythonContext, kw: ast.keyword) -> list[Fix]:
    value = kw.value
    if isinstance(value, ast.Constant) and value.value is False:
        return [Fix('Replace allow_tf32=False with input_precision="ieee"',
                    (ctx.replace(kw, 'input_precision="ieee"'),), Applicability.SAFE)]
    if isinstance(value, ast.Constant) and value.value is True:
        return [Fix('Replace allow_tf32=True with input_precision="tf32" (NVIDIA and AMD gfx942 only)',
                    (ctx.replace(kw, 'input_precision="tf32"'),), Applicability.UNSAFE)]
    flag = ctx.segment(value)
    return [Fix(f'Replace allow_tf32={flag} with input_precision="tf32" if {flag} else "ieee"',
                (ctx.replace(kw, f'input_precision="tf32" if {flag} else "ieee"'),), Applicability.UNSAFE)]


def _add_keyword(ctx: PythonContext, call: ast.Call, text: str) -> Edit:
    """Insert `, text` after the call's last argument."""
    last = max([*call.args, *call.keywords], key=lambda n: (n.end_lineno, n.end_col_offset))
    _, _, line, col = ctx.source.node_range(last)
    return Edit.insert(line, col, f", {text}")


def check(ctx: PythonContext) -> Iterator[Finding]:
    all_launches = None
    host = None
    for kernel in ctx.kernels:
        types = None
        for call in kernel.calls():
            if not _is_dot(ctx, call):
                continue
            kw = keyword(call, "allow_tf32")
            if kw is not None:
                yield ctx.finding(
                    kw,
                    "`allow_tf32=` is deprecated; say the precision with `input_precision=` "
                    '("ieee" for fp32 accuracy, "tf32" for speed, "tf32x3" in between)',
                    _allow_tf32_fixes(ctx, kw),
                )
                continue
            if keyword(call, "input_precision") is not None or len(call.args) > 3 or len(call.args) < 2:
                continue
            if types is None:
                if all_launches is None:
                    all_launches, host = launches(ctx), HostDtypes(ctx)
                types = KernelDtypes(ctx, kernel, pointer_dtypes(ctx, kernel, host, all_launches))
            kinds = [types.of(a) for a in call.args[:2]]
            # tl.dot requires equal operand dtypes, so one known fp32 operand settles both.
            if "fp32" not in kinds or any(k in NOT_FP32 for k in kinds):
                continue
            fixes = [
                Fix('Add input_precision="tf32" (today\'s NVIDIA default, made explicit)',
                    (_add_keyword(ctx, call, 'input_precision="tf32"'),), Applicability.UNSAFE),
                Fix('Add input_precision="ieee" (true fp32, several times slower)',
                    (_add_keyword(ctx, call, 'input_precision="ieee"'),), Applicability.UNSAFE),
            ]
            yield ctx.finding(
                call,
                "fp32 `tl.dot` without `input_precision=` runs on TF32 tensor cores by default "
                "(10-bit mantissa; the default has changed between Triton versions and backends); "
                'pass `input_precision="ieee"` for fp32 accuracy or `"tf32"` to keep the speed explicitly',
                fixes,
            )
