"""TRI028 dot-operands: `tl.dot` on a scalar or a 1-D block, or on an int and a float operand.

`tl.dot(a, b)` multiplies 2-D (or batched 3-D) blocks on the tensor cores. A scalar (a value
loaded through a single pointer, a reduction without an axis) or a 1-D block (`tl.arange`-indexed
row) stops the compile with "input and other must have equal ranks >= 2"; an int operand with a
float one with "Both operands must be same dtype". Ranks and kinds come from the type inference
(`_types.py`). For a dot product of vectors write `tl.sum(a * b, axis=0)`. TRI021 (opt-in) checks
`tl.dot` sizes where it knows them and leaves the ranks this rule reports to it.
"""
from __future__ import annotations

import ast
from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Finding, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._types import dot_rank_problem, typed_kernels
from tritonify.diagnostics.triton_ast import tl_name

RULE = Rule(
    code="TRI028",
    name="dot-operands",
    summary="tl.dot on a scalar or 1-D value, or on operands of int and float kinds",
    severity=Severity.ERROR,
    fixable=False,
    compile_break=True,
)


def check(ctx: PythonContext) -> Iterator[Finding]:
    for kernel, types in typed_kernels(ctx):
        for call in kernel.calls():
            if tl_name(ctx.imports, call.func) != "dot" or len(call.args) < 2:
                continue
            a, b = call.args[0], call.args[1]
            problem = dot_rank_problem(types, call)
            if problem is not None:
                operand, what = problem
                yield ctx.finding(operand, f"`{ast.unparse(operand)}` is {what}: `tl.dot` needs 2-D blocks "
                                           "(\"input and other must have equal ranks >= 2\"); for a vector "
                                           "product write `tl.sum(a * b, axis=0)`, or load 2-D tiles")
            else:
                ka, kb = types.of(a).kind, types.of(b).kind
                if {ka, kb} == {"int", "float"}:
                    yield ctx.finding(call, f"`tl.dot` of an {ka} and a {kb} operand: Triton wants both of one "
                                            "dtype; convert with `.to(tl.float16)` (or the other operand's dtype)")
