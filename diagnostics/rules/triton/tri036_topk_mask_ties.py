"""TRI036 topk-mask-ties: a top-k loop that masks the chosen entry with 0 while the scores are
non-negative, so the mask ties with the remaining scores and the same entry can be chosen again.

The shape (an MoE router, a sampler's top-k): inside a loop, ``idx = tl.argmax(s, axis)``, then
``s = tl.where(<lane> == idx, 0.0, s)``. When ``s`` is a softmax, a sigmoid or an exp, every score is
>= 0 and scores far below the row's largest are exactly 0.0 (fp32 exp underflows below -103; bf16
rounds small probabilities to 0): once the remaining scores are all 0.0, the masked lane ties with
them, ``argmax`` returns the lowest index among the ties, and that can be the expert already chosen
(a token sent twice to one expert, another expert never). A mask no score can reach (``-inf``, or
-1.0 for probabilities) cannot tie.

Reported only when the masking constant is 0 and every binding of the scores before the loop is
non-negative by construction (exp/exp2, sigmoid, a ratio of those, relu, abs, squares, a masked
select of those with 0).
"""
from __future__ import annotations

import ast
from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Applicability, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._kernel_flow import bindings, is_tl_call, names_in
from tritonify.diagnostics.triton_ast import Kernel

RULE = Rule(
    code="TRI036",
    name="topk-mask-ties",
    summary="top-k loop masks the chosen score with 0 while scores are >= 0: a tie can pick the same entry again",
    severity=Severity.WARNING,
    fixable=True, safe_fix=False,
    # Opt-in: no finding on the real-world corpus (its routers mask with -inf), so its precision there is
    # not measured (references/rules/TRI036.md)
    default=False,
)

_NONNEG_CALLS = ("exp", "exp2", "sigmoid", "abs", "sqrt", "softmax")


def _is_zero(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(
        node.value, bool) and node.value == 0


class _Scores:
    """Whether an expression is >= 0 by construction, following local names to their bindings."""

    def __init__(self, ctx: PythonContext, binds, before_line: int):
        self.ctx, self.binds, self.before_line = ctx, binds, before_line

    def nonneg(self, expr: ast.AST, depth: int = 0, before: int | None = None) -> bool:
        """``expr`` >= 0, its names read as bound before line ``before`` (the loop, or the binding
        being followed: ``s = tl.where(m, s, 0.0)`` reads the earlier ``s``)."""
        if depth > 8:
            return False
        ctx = self.ctx
        before = self.before_line if before is None else before
        rec = lambda e: self.nonneg(e, depth + 1, before)  # noqa: E731
        if isinstance(expr, ast.Constant):
            return isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool) and expr.value >= 0
        if isinstance(expr, ast.Name):
            found = [b for b in self.binds.get(expr.id, []) if b.stmt.lineno < before]
            if not found:
                return False
            last = found[-1]  # straight-line code before the loop: the latest binding is the value
            return not isinstance(last.stmt, (ast.For, ast.AugAssign)) and self.nonneg(last.value, depth + 1,
                                                                                         last.stmt.lineno)
        if isinstance(expr, ast.Subscript):
            return rec(expr.value)
        if isinstance(expr, ast.BinOp):
            if isinstance(expr.op, (ast.Div, ast.Mult, ast.Add)):
                if isinstance(expr.op, ast.Mult) and ast.dump(expr.left) == ast.dump(expr.right):
                    return True  # x * x
                return rec(expr.left) and rec(expr.right)
            if isinstance(expr.op, ast.Pow) and isinstance(expr.right, ast.Constant) and expr.right.value == 2:
                return True
            return False
        if isinstance(expr, ast.Call):
            func = expr.func
            if isinstance(func, ast.Attribute) and func.attr in ("to", "cast") and not is_tl_call(ctx, expr, "cast"):
                return rec(func.value)
            if is_tl_call(ctx, expr, "cast") and expr.args:
                return rec(expr.args[0])
            if is_tl_call(ctx, expr, *_NONNEG_CALLS):
                return True
            if is_tl_call(ctx, expr, "sum", "max", "broadcast_to", "reshape", "expand_dims") and expr.args:
                return rec(expr.args[0])
            if is_tl_call(ctx, expr, "maximum") and len(expr.args) == 2:
                return rec(expr.args[0]) or rec(expr.args[1])
            if is_tl_call(ctx, expr, "where") and len(expr.args) == 3:
                return rec(expr.args[1]) and rec(expr.args[2])
        return False


def _argmax_targets(ctx: PythonContext, loop: ast.For) -> dict[str, str]:
    """index name -> the scores' name, for ``idx = tl.argmax(scores, ...)`` in the loop body."""
    out = {}
    for node in ast.walk(loop):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple) \
                and len(node.targets[0].elts) == 2 and isinstance(node.targets[0].elts[1], ast.Name):
            # `value, idx = tl.max(scores, axis, return_indices=True)`: flag-gems' topk_softmax form
            value = node.value
            ret = next((k.value for k in getattr(value, "keywords", ()) if k.arg == "return_indices"), None)
            if is_tl_call(ctx, value, "max") and value.args and isinstance(value.args[0], ast.Name) \
                    and isinstance(ret, ast.Constant) and ret.value is True:
                out[node.targets[0].elts[1].id] = value.args[0].id
            continue
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value
            while isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):  # argmax(...) + offset
                value = value.left
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in ("to", "cast"):
                value = value.func.value
            if is_tl_call(ctx, value, "argmax") and value.args and isinstance(value.args[0], ast.Name):
                out[node.targets[0].id] = value.args[0].id
            elif is_tl_call(ctx, value, "min") and value.args:
                scores = _lowest_lane_at_max(ctx, loop, value.args[0])
                if scores is not None:
                    out[node.targets[0].id] = scores
    return out


def _lowest_lane_at_max(ctx: PythonContext, loop: ast.For, expr: ast.AST) -> str | None:
    """``tl.min(tl.where(s == tl.max(s, 0), lanes, BIG), 0)``, through names bound in the loop (flag-gems'
    ``grouped_topk`` form): the lowest lane holding the maximum, an argmax by another name. -> ``s``."""
    local = {n.targets[0].id: n.value for n in ast.walk(loop)
             if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)}

    def follow(e: ast.AST) -> ast.AST:
        return local.get(e.id, e) if isinstance(e, ast.Name) else e

    where = follow(expr)
    if not (is_tl_call(ctx, where, "where") and len(where.args) == 3):
        return None
    cond = follow(where.args[0])
    if not (isinstance(cond, ast.Compare) and len(cond.ops) == 1 and isinstance(cond.ops[0], ast.Eq)):
        return None
    for s, m in ((cond.left, cond.comparators[0]), (cond.comparators[0], cond.left)):
        top = follow(m)
        if isinstance(s, ast.Name) and is_tl_call(ctx, top, "max") and top.args \
                and isinstance(top.args[0], ast.Name) and top.args[0].id == s.id:
            return s.id
    return None


def _mask_assignments(ctx: PythonContext, loop: ast.For, scores: str, index: str, binds) -> list[ast.Call]:
    """``scores = tl.where(cond_on_index, 0, scores)`` in the loop (the cond may go through a name)."""
    found = []
    for node in ast.walk(loop):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == scores):
            continue
        call = node.value
        if not (is_tl_call(ctx, call, "where") and len(call.args) == 3):
            continue
        cond, chosen, rest = call.args
        if not (_is_zero(chosen) and isinstance(rest, ast.Name) and rest.id == scores):
            continue
        reads = names_in(cond)
        for name in list(reads):
            for b in binds.get(name, []):
                if loop.lineno <= b.stmt.lineno <= getattr(loop, "end_lineno", b.stmt.lineno):
                    reads |= names_in(b.value)
        if index in reads:
            found.append(call)
    return found


def _fix(ctx: PythonContext, call: ast.Call) -> list[Fix]:
    return [Fix(title='Mask the chosen score with float("-inf")',
                edits=(ctx.replace(call.args[1], 'float("-inf")'),), applicability=Applicability.UNSAFE)]


def _loops(kernel: Kernel) -> list[ast.For]:
    return [n for n in kernel.walk() if isinstance(n, ast.For)]


def check(ctx: PythonContext) -> Iterator[Finding]:
    for kernel in ctx.kernels:
        loops = _loops(kernel)
        if not loops:
            continue
        binds = bindings(kernel)
        for loop in loops:
            for index, scores in _argmax_targets(ctx, loop).items():
                if not _Scores(ctx, binds, loop.lineno).nonneg(ast.Name(id=scores, ctx=ast.Load())):
                    continue
                for call in _mask_assignments(ctx, loop, scores, index, binds):
                    yield ctx.finding(
                        call.args[1],
                        f"`{scores}` is >= 0 (a softmax, sigmoid or exp) and the chosen entry is masked with 0: "
                        f"scores that underflow to 0.0 tie with it and `tl.argmax` can pick it again; "
                        f'mask with float("-inf")',
                        _fix(ctx, call))
