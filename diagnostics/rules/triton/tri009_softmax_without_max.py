"""TRI009 softmax-without-max: exp -> sum -> divide (softmax) or log (log-sum-exp) with an
exponent that nothing shifted by a maximum, so large logits overflow to inf.

Not a softmax: an exp used as `1 + exp(x)` / `exp(x) - 1` (sigmoid, SiLU, tanh written with exp,
expm1) or inside `log`/`log1p` (softplus); the division must divide the exp's values (or a
constant, `1 / sum`) by their sum. Shifts are followed through `x -= m` and through
`tl.where(x >= 0, -x, x)` (the stable sigmoid's -|x|).
"""
from __future__ import annotations

import ast
from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Applicability, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._exp_calls import Bounds, exp_kind
from tritonify.diagnostics.rules.triton._kernel_flow import (
    bindings,
    depends_on,
    is_tl_call,
    taint,
)
from tritonify.diagnostics.triton_ast import TL, Kernel, keyword, libdevice_name

RULE = Rule(
    code="TRI009",
    name="softmax-without-max",
    summary="softmax or log-sum-exp whose exponent is not shifted by the row max (overflows for logits > 88)",
    severity=Severity.WARNING,
    fixable=True, safe_fix=False,
)

_LOGS = ("log", "log2", "math.log", "math.log2", "log1p")


def _tl(ctx: PythonContext) -> str:
    aliases = sorted(ctx.imports.aliases_of(TL))
    return "tl" if "tl" in aliases or not aliases else aliases[0]


class _Chain:
    """How one exp's value flows: the sums over it, and whether a sum is divided by or logged."""

    def __init__(self, ctx: PythonContext, kernel: Kernel, binds, exp_call: ast.Call):
        self.ctx = ctx
        self.binds = binds
        self.exp_call = exp_call
        self.sums = [
            c for c in kernel.calls()
            if is_tl_call(ctx, c, "sum") and c.args and self.direct(c.args[0])
        ]
        # a running sum: `denom += tl.exp(v)` (or `acc = acc + tl.exp(x)`) over a loop, the form a
        # router's renormalisation over its K chosen logits or a streaming softmax takes
        self.accumulators = _accumulators(ctx, kernel, self.direct)
        sum_ids = {id(c) for c in self.sums}
        # nothing seeds the taint without a sum or an accumulator: no name depends on one
        from_sum = taint(kernel, binds, lambda n: id(n) in sum_ids, self.accumulators) \
            if sum_ids or self.accumulators else set()

        def uses_sum(e: ast.AST) -> bool:
            return depends_on(e, from_sum, lambda n: id(n) in sum_ids)

        self.divides = any(
            uses_sum(d.right) and (isinstance(d.left, ast.Constant) or self.direct(d.left)
                                   or (bool(self.accumulators) and self.recomputed(d.left)))
            for d in _divisions(ctx, kernel)
        )
        self.logs = any(is_tl_call(ctx, c, *_LOGS) and c.args and uses_sum(c.args[0]) for c in kernel.calls())

    def recomputed(self, expr: ast.AST) -> bool:
        """`expr` is the same exponential computed again (`tl.exp(v) / denom` after `denom += tl.exp(v)`:
        the numerator is recomputed in a second pass over the row)."""
        call = self.exp_call
        return (isinstance(expr, ast.Call) and ast.dump(expr.func) == ast.dump(call.func)
                and [ast.dump(a) for a in expr.args] == [ast.dump(a) for a in call.args])

    def direct(self, expr: ast.AST, depth: int = 0) -> bool:
        """`expr` holds the exp's own values: the call, a cast of it, a masked `tl.where` of it, a
        broadcast, or a name bound to one of those (the softmax's numerator and the summand)."""
        if depth > 6:
            return False
        if expr is self.exp_call:
            return True
        if isinstance(expr, ast.Subscript):
            return self.direct(expr.value, depth + 1)
        if isinstance(expr, ast.Name):
            return any(not isinstance(b.stmt, (ast.For, ast.AugAssign)) and self.direct(b.value, depth + 1)
                       for b in self.binds.get(expr.id, []))
        if isinstance(expr, ast.Call):
            func = expr.func
            if isinstance(func, ast.Attribute) and func.attr in ("to", "cast"):
                return self.direct(func.value, depth + 1)
            if is_tl_call(self.ctx, expr, "where") and len(expr.args) == 3:
                return any(self.direct(a, depth + 1) for a in expr.args[1:])
        return False


def _accumulators(ctx: PythonContext, kernel: Kernel, direct) -> set[str]:
    """Names that add the exp's own values to themselves: `s += e`, `s = s + e`, `s = e + s`."""
    return {name for name, added in _accumulations(ctx, kernel) if any(direct(e) for e in added)}


def _accumulations(ctx: PythonContext, kernel: Kernel) -> list[tuple[str, tuple[ast.AST, ...]]]:
    """The kernel's `s += e`, `s = s + e` and `s = e + s`, as (s, the terms that must be the exp's
    for s to accumulate it), found once per kernel (each exp of the kernel asks)."""
    def build() -> list[tuple[str, tuple[ast.AST, ...]]]:
        out = []
        for node in kernel.walk():
            if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and isinstance(node.target, ast.Name):
                out.append((node.target.id, (node.value,)))
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and isinstance(node.value, ast.BinOp) and isinstance(node.value.op, ast.Add):
                name, (left, right) = node.targets[0].id, (node.value.left, node.value.right)
                added = tuple(term for term, other in ((right, left), (left, right))
                              if isinstance(other, ast.Name) and other.id == name)
                if added:
                    out.append((name, added))
        return out
    return ctx.per_file(("tri009-accumulations", kernel.node), build)


def _divisions(ctx: PythonContext, kernel: Kernel) -> list[ast.BinOp]:
    """Every `/` in the kernel (listed once per kernel, not once per exp)."""
    return ctx.per_file(("divisions", kernel.node), lambda: [
        n for n in kernel.walk() if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div)])


def _axis(call: ast.Call) -> ast.expr | None:
    kw = keyword(call, "axis")
    if kw is not None:
        return kw.value
    return call.args[1] if len(call.args) > 1 else None


def _shift_fix(ctx: PythonContext, exp_call: ast.Call, chain: _Chain) -> list[Fix]:
    """`tl.exp(x)` -> `tl.exp(x - tl.max(x, axis=<the sum's axis>))` when the exp feeds one
    `tl.sum(e, axis)` of a plain name and the result is only divided (a log-sum-exp would then
    need the max added back, which is not mechanical)."""
    arg = exp_call.args[0]
    if not isinstance(arg, ast.Name) or chain.logs or not chain.divides or len(chain.sums) != 1:
        return []
    total = chain.sums[0]
    axis = _axis(total)
    tl = _tl(ctx)
    x = arg.id
    if axis is None:
        row_max = f"{tl}.max({x})"
    elif isinstance(axis, ast.Constant) and axis.value == 0:
        row_max = f"{tl}.max({x}, axis=0)"
    else:
        row_max = f"{tl}.max({x}, axis={ctx.segment(axis)}, keep_dims=True)"
    return [Fix(
        title=f"Shift by the row max: {x} - {row_max}",
        edits=(ctx.replace(arg, f"{x} - {row_max}"),),
        applicability=Applicability.UNSAFE,
    )]


def _helper_params(ctx: PythonContext, kernel: Kernel) -> set[str]:
    """Parameters of a value-level helper (called from another kernel, or touching no memory):
    whoever calls `_softmax(x)` may already have shifted x, so its exponent is not judged here."""
    touches_memory = any(is_tl_call(ctx, c, "load", "store", "program_id") for c in kernel.calls())
    return set(kernel.param_names) if kernel.is_helper or not touches_memory else set()


def _activation_form(ctx: PythonContext, exp_call: ast.Call, kernel: Kernel | None = None) -> bool:
    """`1 + exp(x)`, `exp(x) - 1`, `log1p(exp(x))`, `log(1 + exp(x))`: sigmoid, tanh, expm1, softplus;
    also through a name (`e = tl.exp(2 * x)`, then only `e - 1` and `e + 1`)."""
    node = exp_call
    parent = ctx.parents.get(node)
    if kernel is not None and isinstance(parent, ast.Assign) and len(parent.targets) == 1 \
            and isinstance(parent.targets[0], ast.Name):
        name = parent.targets[0].id
        uses = [n for n in kernel.walk() if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
        return bool(uses) and all(_plus_constant(ctx, u) for u in uses)
    return _plus_constant(ctx, node)


def _plus_constant(ctx: PythonContext, node: ast.AST) -> bool:
    parent = ctx.parents.get(node)
    while isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute) and parent.func.attr in ("to", "cast"):
        node, parent = parent, ctx.parents.get(parent)
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.Add, ast.Sub)):
        other = parent.right if parent.left is node else parent.left
        return isinstance(other, ast.Constant) or (
            isinstance(other, ast.UnaryOp) and isinstance(other.operand, ast.Constant))
    if not isinstance(parent, ast.Call):
        return False
    return is_tl_call(ctx, parent, *_LOGS) or libdevice_name(ctx.imports, parent.func) in ("log", "log1p", "logf", "log1pf")


def check(ctx: PythonContext) -> Iterator[Finding]:
    for kernel in ctx.kernels:
        exps = [c for c in kernel.calls() if exp_kind(ctx, c)]
        if not exps:
            continue
        binds = bindings(kernel)
        bounds = Bounds(ctx, binds, _helper_params(ctx, kernel))
        for call in exps:
            if bounds.shifted(call.args[0], call.lineno) or _activation_form(ctx, call, kernel):
                continue
            chain = _Chain(ctx, kernel, binds, call)
            if not (chain.sums or chain.accumulators) or not (chain.divides or chain.logs):
                continue
            kind = exp_kind(ctx, call)
            limit = "88" if kind == "exp" else "128"
            what = "a softmax (sum, then divide)" if chain.divides else "a log-sum-exp (sum, then log)"
            if chain.accumulators and not chain.sums:
                tail = ("the sum is accumulated: take the max of the values first (or keep a running max m and "
                        "rescale the sum by `tl.exp(m - m_new)`) and subtract it in every exp")
            elif chain.divides and not chain.logs:
                tail = "subtract the row max first: `x - tl.max(x, axis)` (softmax is unchanged)"
            else:
                tail = "subtract the row max m first and add it back: `lse = m + tl.log(tl.sum(tl.exp(x - m), axis))`"
            message = (
                f"`{ctx.segment(call.func)}` feeds {what} but its argument is not shifted by a max: fp32 {kind} "
                f"overflows to inf above {limit} and the result becomes nan; {tail}"
            )
            yield ctx.finding(call, message, _shift_fix(ctx, call, chain))
