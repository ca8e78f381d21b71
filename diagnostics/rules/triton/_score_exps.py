"""`tl.exp` on the scores of an attention loop, and its mechanical exp2 rewrite.

TRI010's detection, shared with TRI063 (its dense prefill/extend part, in the default set): an exp
inside a loop that computes `tl.dot`, whose argument carries the `tl.dot` results elementwise
(`tl.exp(qk - m[:, None])`), in a kernel that is not a decode or split-KV kernel, on NVIDIA (or an
unknown target), and not one branch of an `if` whose other branch uses exp2. TRI010's page lists
what that leaves out and why.

The leading underscore keeps the registry from loading it as a rule.
"""
from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Applicability, Fix
from tritonify.diagnostics.rules.triton._exp_calls import is_natural_tl_exp
from tritonify.diagnostics.rules.triton._kernel_flow import enclosing_loops, is_tl_call
from tritonify.diagnostics.rules.triton._tile_values import derived_from, reads_elementwise
from tritonify.diagnostics.triton_ast import TL, Kernel, walk_nodes

LOG2E = "1.44269504"
# Operators that bind less tightly than `*`: `E * c` needs parentheses around them.
_LOOSER = (ast.Add, ast.Sub, ast.LShift, ast.RShift, ast.BitOr, ast.BitXor, ast.BitAnd, ast.MatMult)


@dataclass(frozen=True)
class ScoreExp:
    kernel: Kernel
    call: ast.Call        # the tl.exp call
    loop: ast.stmt        # its innermost loop (the one that calls tl.dot)


def is_dot(ctx: PythonContext, n: ast.AST) -> bool:
    return is_tl_call(ctx, n, "dot")


def _computes_dot(ctx: PythonContext, loop: ast.stmt) -> bool:
    """The loop calls tl.dot (asked once per loop: a loop often holds several exps)."""
    return ctx.per_file(("tri010-loop", loop), lambda: any(is_dot(ctx, n) for n in walk_nodes(loop)))


def scores(ctx: PythonContext, kernel: Kernel) -> set[str]:
    """Names that carry `tl.dot` results elementwise (not through a reduction)."""
    return ctx.per_file(("tri010-scores", kernel.node), lambda: derived_from(ctx, kernel, lambda n: is_dot(ctx, n)))


def on_scores(ctx: PythonContext, kernel: Kernel, expr: ast.AST) -> bool:
    return reads_elementwise(ctx, expr, lambda n: is_dot(ctx, n), scores(ctx, kernel))


def memory_bound_decode(kernel: Kernel) -> bool:
    """A decode or split-KV kernel: the kernel's name says `decode`, or a parameter names the
    splits (`NUM_KV_SPLITS`, `num_splits`, `N_SPLITS`, `MAX_SPLITS`). A few query rows against a
    long KV: the loop streams K/V from memory and one multiply per score is not measurable
    (round 2 of the real-world study labelled all four such findings NOISE)."""
    return "decode" in kernel.name.lower() or any("split" in p.name.lower() for p in kernel.params)


def _exp2_alternative(ctx: PythonContext, call: ast.Call, kernel_node: ast.AST) -> bool:
    """The exp sits in one branch of an `if` whose other branch already uses exp2 (`if USE_EXP2:
    ... exp2 ... else: ... exp ...`): the author chose between them on purpose."""
    child = call
    for anc in ctx.ancestors(call):
        if anc is kernel_node:
            return False
        if isinstance(anc, ast.If) and child is not anc.test:
            other = anc.orelse if any(child is st for st in anc.body) else anc.body
            if any(is_tl_call(ctx, n, "exp2", "math.exp2") for st in other for n in walk_nodes(st)):
                return True
        child = anc
    return False


def score_exps(ctx: PythonContext, kernel_filter: Callable[[Kernel], bool] | None = None,
               arg_filter: Callable[[ast.expr], bool] | None = None) -> Iterator[ScoreExp]:
    """Every exp TRI010 reports (before TRI063 takes its dense prefill part); `kernel_filter` and
    `arg_filter` are cheap tests a caller applies before the data flow is asked (TRI063's)."""
    for kernel in ctx.kernels:
        if memory_bound_decode(kernel) or (kernel_filter is not None and not kernel_filter(kernel)):
            continue
        for call in kernel.calls():
            func = call.func
            if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)) != "exp":
                continue  # a cheap test before resolving the callee: most calls are not exps
            if not is_natural_tl_exp(ctx, call) or (arg_filter is not None and not arg_filter(call.args[0])):
                continue
            loops = enclosing_loops(ctx, call, kernel.node)
            if not loops or not _computes_dot(ctx, loops[0]) or not on_scores(ctx, kernel, call.args[0]):
                continue
            if not ctx.target.nvidia(call) or _exp2_alternative(ctx, call, kernel.node):
                continue
            yield ScoreExp(kernel, call, loops[0])


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


def exp2_fixes(ctx: PythonContext, call: ast.Call) -> list[Fix]:
    """`tl.exp(E)` -> `tl.exp2(E * 1.44269504)` (unsafe: the last bits change)."""
    callee = _exp2_callee(ctx, call.func)
    if not callee:
        return []
    return [Fix(
        title=f"Rewrite as exp2(E * {LOG2E}) (same value up to rounding; then fold the constant into the scale)",
        edits=(ctx.replace(call, f"{callee}({_scaled(ctx, call.args[0])})"),),
        applicability=Applicability.UNSAFE,
    )]
