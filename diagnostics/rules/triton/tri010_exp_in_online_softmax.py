"""TRI010 exp-in-online-softmax: `tl.exp` in an attention or online-softmax loop, where
`tl.exp2` with log2(e) folded into the existing scale saves a multiply per element."""
from __future__ import annotations

import ast
from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Applicability, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._exp_calls import is_natural_tl_exp
from tritonify.diagnostics.rules.triton._kernel_flow import (
    enclosing_loops,
    is_tl_call,
    names_in,
)
from tritonify.diagnostics.triton_ast import TL, walk_nodes

RULE = Rule(
    code="TRI010",
    name="exp-in-online-softmax",
    summary="tl.exp in an attention / online-softmax loop (tl.exp2 with log2(e) folded into the scale is faster)",
    severity=Severity.INFO,
    fixable=True, safe_fix=False,
)

LOG2E = "1.44269504"
# Operators that bind less tightly than `*`: `E * c` needs parentheses around them.
_LOOSER = (ast.Add, ast.Sub, ast.LShift, ast.RShift, ast.BitOr, ast.BitXor, ast.BitAnd, ast.MatMult)


def _loop_facts(ctx: PythonContext, loop: ast.stmt) -> tuple[bool, set[str]]:
    """(whether the loop calls tl.dot, the names it assigns a `tl.maximum` to), once per loop:
    a loop often holds several exps."""
    nodes = walk_nodes(loop)
    if any(is_tl_call(ctx, n, "dot") for n in nodes):
        return True, set()
    running: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Assign) and is_tl_call(ctx, node.value, "maximum"):
            running |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return False, running


def _loop_kind(ctx: PythonContext, loop: ast.stmt, exp_call: ast.Call) -> str | None:
    """'attention' when the exp's innermost loop computes a tl.dot; 'online-softmax' when that loop
    keeps a running max (`m_new = tl.maximum(m, ...)`) and this exp takes a difference against
    it. Other exps in such a loop (a policy ratio, a gate) are left alone unless tl.dot is there."""
    computes_dot, running = ctx.per_file(("tri010-loop", loop), lambda: _loop_facts(ctx, loop))
    if computes_dot:
        return "attention"
    arg = exp_call.args[0]
    if isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Sub) and names_in(arg) & running:
        return "online-softmax"
    return None


def _exp2_callee(ctx: PythonContext, func: ast.expr) -> str | None:
    """`tl.exp2` for `tl.exp`, `tl.math.exp2` for `tl.math.exp`; for a bare `exp` imported from
    triton.language, the module alias if there is one."""
    if isinstance(func, ast.Attribute):
        return f"{ctx.segment(func.value)}.{func.attr}2"
    aliases = sorted(ctx.imports.aliases_of(TL))
    if aliases:
        return f"{'tl' if 'tl' in aliases else aliases[0]}.exp2"
    exp2 = [n for n, p in ctx.imports.names.items() if p == f"{TL}.exp2"]
    return exp2[0] if exp2 else None


def _scaled(ctx: PythonContext, arg: ast.expr) -> str:
    text = ctx.segment(arg)
    loose = (isinstance(arg, ast.BinOp) and isinstance(arg.op, _LOOSER)) or isinstance(
        arg, (ast.Compare, ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr)
    )
    return f"({text}) * {LOG2E}" if loose else f"{text} * {LOG2E}"


def check(ctx: PythonContext) -> Iterator[Finding]:
    for kernel in ctx.kernels:
        for call in kernel.calls():
            if not is_natural_tl_exp(ctx, call):
                continue
            loops = enclosing_loops(ctx, call, kernel.node)
            kind = _loop_kind(ctx, loops[0], call) if loops else None
            if kind is None:
                continue
            if kind == "attention":
                message = (
                    f"`tl.exp` in an attention loop (tl.dot) lowers to a multiply by log2(e) plus `ex2`; call "
                    f"`tl.exp2` and fold {LOG2E} into the scale you already apply after `tl.dot` "
                    f"(`qk_scale = sm_scale * {LOG2E}`, running max in the same base): 5-8% faster on an H200"
                )
            else:
                message = (
                    f"`tl.exp` in an online-softmax loop lowers to a multiply by log2(e) plus `ex2`; call `tl.exp2` "
                    f"on values pre-multiplied by {LOG2E} once (fold it into any existing scale, keep the running "
                    "max in the same base) to save one multiply per element"
                )
            callee = _exp2_callee(ctx, call.func)
            fixes = [Fix(
                title=f"Rewrite as exp2(E * {LOG2E}) (same value up to rounding; then fold the constant into the scale)",
                edits=(ctx.replace(call, f"{callee}({_scaled(ctx, call.args[0])})"),),
                applicability=Applicability.UNSAFE,
            )] if callee else []
            yield ctx.finding(call, message, fixes)
