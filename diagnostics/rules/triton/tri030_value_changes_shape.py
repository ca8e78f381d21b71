"""TRI030 value-changes-shape: a loop or run-time `if` turns a scalar into a block (or back).

Triton compiles a loop to `scf.for` and a run-time `if` to `scf.if`, whose carried values keep
one type: `acc = 0.0` before `for k in range(...): acc += tl.load(ptrs)` is rejected ("Loop-carried
variable acc has initial type fp32 but is re-assigned to <['1024'], fp32>"), and the same for a
branch ("Mismatched type for x between then block ... and else block"); the same where a name is
first bound in both branches of a run-time `if` with a scalar in one and a block in the other, and
for a run-time ternary `a if c else b` whose sides differ so ("Ternary expression with dynamic
condition has inconsistent types"; a Python number there becomes a scalar tensor). Found by the type
inference (`_types.py`): a name with a known scalar (or block of known rank) before the statement,
reassigned inside it to a block (or a scalar, or another rank). `tl.static_range` loops and
`tl.constexpr` conditions are unrolled or folded and left alone. Start the value as a block:
`acc = tl.zeros([BLOCK], dtype=tl.float32)`.
"""
from __future__ import annotations

import ast
from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Finding, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._types import VType, typed_kernels

RULE = Rule(
    code="TRI030",
    name="value-changes-shape",
    summary="loop-carried or branch-assigned value changes between scalar and block (or rank)",
    severity=Severity.ERROR,
    fixable=False,
    compile_break=True,
)


def _text(node: ast.AST, limit: int = 50) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe(t: VType) -> str:
    if t.block is False:
        return "a scalar"
    return f"a {t.rank}-D block" if t.rank is not None else "a block"


def check(ctx: PythonContext) -> Iterator[Finding]:
    for kernel, types in typed_kernels(ctx):
        seen: set[tuple[str, int]] = set()
        for where, changes in (("loop", types.loop_carried), ("branch", types.branch_changes)):
            for name, stmt, before, after, node in changes:
                if (name, stmt.lineno) in seen:
                    continue
                seen.add((name, stmt.lineno))
                start = ("start it as a block: `tl.zeros([BLOCK], dtype=tl.float32)` (or `tl.full`)"
                         if before.block is False else "keep its shape (reduce or broadcast explicitly)")
                statement = "the loop" if where == "loop" else "the `if` (a run-time condition)"
                yield ctx.finding(node, f"`{name}` is {_describe(before)} before {statement} on line "
                                        f"{stmt.lineno} and becomes {_describe(after)} inside it: Triton keeps "
                                        f"one type per {where}-carried value and rejects the change; {start}")
        for name, stmt, then, other, node in types.branch_mismatches:
            if (name, stmt.lineno) in seen:
                continue
            seen.add((name, stmt.lineno))
            yield ctx.finding(node, f"`{name}` is {_describe(then)} in the then block of the `if` on line "
                                    f"{stmt.lineno} (a run-time condition) and {_describe(other)} in its else block: "
                                    "Triton gives each name one type after the `if` (\"Mismatched type for "
                                    f"{name}\"); make both the same shape (`tl.full([BLOCK], v, dtype)` for the "
                                    "scalar, or a reduction of the block)")
        for ifexp, then, other in types.ternary_mismatches.values():
            yield ctx.finding(ifexp, f"`{_text(ifexp)}` picks {_describe(then)} or {_describe(other)} on a "
                                     "run-time condition: both values of a run-time ternary must have one type "
                                     "(\"Ternary expression with dynamic condition has inconsistent types\"); use "
                                     "`tl.where(cond, a, b)`, which broadcasts, or give both sides the same shape")
