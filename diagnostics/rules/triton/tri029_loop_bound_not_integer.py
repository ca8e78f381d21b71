"""TRI029 loop-bound-not-integer: a `for` loop whose bound is a pointer, a float or a block.

`for i in range(a, b, step)` (or `tl.range`) inside a kernel becomes an `scf.for` over integers:
a bound that is a block ("For lower bound must be a scalar"), a pointer or a float does not
compile. Kinds come from the type inference (`_types.py`): a pointer parameter, a loaded block,
a float argument from the launch. Pass the count as an int (`n_elements`, not the tensor), and
reduce a block to a scalar before looping over it.
"""
from __future__ import annotations

import ast
from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Finding, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._types import typed_kernels
from tritonify.diagnostics.triton_ast import tl_name

RULE = Rule(
    code="TRI029",
    name="loop-bound-not-integer",
    summary="range() loop bound inside a kernel that is a pointer, a float or a block",
    severity=Severity.ERROR,
    fixable=False,
    compile_break=True,
)


def check(ctx: PythonContext) -> Iterator[Finding]:
    for kernel, types in typed_kernels(ctx):
        for node in kernel.walk():
            if not isinstance(node, ast.For) or not isinstance(node.iter, ast.Call):
                continue
            call = node.iter
            is_range = (isinstance(call.func, ast.Name) and call.func.id == "range") or \
                tl_name(ctx.imports, call.func) == "range"
            if not is_range:
                continue
            for arg in call.args:
                t = types.of(arg)
                what = ("a block" if t.block is True and not t.constexpr else
                        "a pointer" if t.kind == "pointer" else
                        "a float" if t.kind == "float" and t.is_runtime else None)
                if what:
                    yield ctx.finding(arg, f"loop bound `{ast.unparse(arg)}` is {what}: a kernel loop runs "
                                           "over integers and Triton rejects it; pass the count as an int "
                                           "(a size, not the tensor) or reduce the block first")
                    break
