"""Exponentials in Triton kernels: which calls are `exp`, and whether an argument is known <= 0.

Shared by TRI009 (softmax without a max shift) and TRI010 (exp in attention loops).
"""
from __future__ import annotations

import ast

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.rules.triton._kernel_flow import Binding
from tritonify.diagnostics.triton_ast import libdevice_name, tl_name

_NATURAL = {"exp", "math.exp"}
_BASE2 = {"exp2", "math.exp2"}


def exp_kind(ctx: PythonContext, node: ast.AST) -> str | None:
    """'exp' for tl.exp / tl.math.exp, 'exp2' for the base-2 forms (libdevice's too), else None."""
    if not isinstance(node, ast.Call) or len(node.args) != 1:
        return None
    name = tl_name(ctx.imports, node.func)
    if name in _NATURAL:
        return "exp"
    if name in _BASE2:
        return "exp2"
    lib = libdevice_name(ctx.imports, node.func)
    if lib in ("exp", "expf", "fast_expf"):
        return "exp"
    if lib in ("exp2", "exp2f"):
        return "exp2"
    return None


def is_natural_tl_exp(ctx: PythonContext, node: ast.AST) -> bool:
    """`tl.exp(x)` / `tl.math.exp(x)` (libdevice's exp is another rule's business)."""
    return isinstance(node, ast.Call) and len(node.args) == 1 and tl_name(ctx.imports, node.func) in _NATURAL


def _is_nonpositive_constant(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value <= 0
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "float" and node.args:
        text = node.args[0]
        return isinstance(text, ast.Constant) and isinstance(text.value, str) and text.value.strip().startswith("-")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = node.operand
        if isinstance(inner, ast.Constant) and isinstance(inner.value, (int, float)):
            return inner.value >= 0
        # -float("inf")
        return isinstance(inner, ast.Call) and getattr(inner.func, "id", None) == "float"
    return False


def _other_branch(ctx: PythonContext, stmt: ast.AST, use: ast.AST) -> bool:
    """`stmt` and `use` sit in different branches of one `if` (`if A: x = f() else: g(x)`): the
    binding never reaches the use."""
    def path(node: ast.AST) -> dict[int, str]:
        out, child = {}, node
        for anc in ctx.ancestors(node):
            if isinstance(anc, ast.If):
                if any(child is s for s in anc.body):
                    out[id(anc)] = "body"
                elif any(child is s for s in anc.orelse):
                    out[id(anc)] = "else"
            child = anc
        return out

    a, b = path(stmt), path(use)
    return any(k in b and b[k] != v for k, v in a.items())


def _negated_pair(a: ast.AST, b: ast.AST) -> bool:
    """`-x` and `x` (either order): a `where` choosing between them by sign yields -|x| or |x|;
    chosen as the exponent of a stable sigmoid it is the non-positive one."""
    for neg, pos in ((a, b), (b, a)):
        if isinstance(neg, ast.UnaryOp) and isinstance(neg.op, ast.USub) and ast.dump(neg.operand) == ast.dump(pos):
            return True
    return False


class Bounds:
    """Decides whether an exponent is shifted by a maximum or otherwise known <= 0.

    Deliberately generous: any subtraction of a non-constant (`x - m`, `qk - lse`,
    `m_old - m_new`) counts as shifted, because the point of the rule is to find the exps
    that were never shifted at all."""

    def __init__(self, ctx: PythonContext, binds: dict[str, list[Binding]], trusted: set[str] | None = None):
        self.ctx = ctx
        self.binds = binds
        self.trusted = trusted or set()   # names whose values the caller is responsible for

    def shifted(self, expr: ast.AST, before_line: int, depth: int = 0) -> bool:
        if depth > 10:
            return True  # give up quietly
        ctx = self.ctx
        if _is_nonpositive_constant(expr):
            return True
        if isinstance(expr, ast.BinOp):
            if isinstance(expr.op, ast.Sub):
                return not isinstance(expr.right, ast.Constant)
            if isinstance(expr.op, (ast.Mult, ast.Div)):
                return self.shifted(expr.left, before_line, depth + 1) or self.shifted(expr.right, before_line, depth + 1)
            return False
        if isinstance(expr, ast.UnaryOp):
            if isinstance(expr.op, ast.USub):
                return self._nonnegative(expr.operand)
            return self.shifted(expr.operand, before_line, depth + 1) if isinstance(expr.op, ast.UAdd) else False
        if isinstance(expr, ast.Subscript):
            return self.shifted(expr.value, before_line, depth + 1)
        if isinstance(expr, ast.Call):
            name = tl_name(ctx.imports, expr.func)
            if name in ("minimum", "math.minimum") and any(_is_nonpositive_constant(a) for a in expr.args):
                return True
            if name == "where" and len(expr.args) == 3:
                if _negated_pair(expr.args[1], expr.args[2]):
                    return True   # where(x >= 0, -x, x): -|x|, the stable sigmoid's exponent
                return all(self.shifted(a, before_line, depth + 1) for a in expr.args[1:])
            if isinstance(expr.func, ast.Attribute) and expr.func.attr in ("to", "cast"):
                return self.shifted(expr.func.value, before_line, depth + 1)
            return False
        if isinstance(expr, ast.Name):
            blist = [b for b in self.binds.get(expr.id, []) if not isinstance(b.stmt, ast.For)]
            if not blist:
                # a helper's parameter may arrive shifted (`_softmax(x - m)`); a kernel's cannot
                return expr.id in self.trusted
            earlier = [b for b in blist if b.stmt.lineno < before_line and not _other_branch(ctx, b.stmt, expr)]
            if earlier:
                last = earlier[-1]
                if isinstance(last.stmt, ast.AugAssign):
                    # `qk -= m[:, None]` shifts; `x *= scale` keeps whatever x was before
                    if isinstance(last.stmt.op, ast.Sub):
                        return not isinstance(last.value, ast.Constant)
                    if isinstance(last.stmt.op, (ast.Mult, ast.Div)):
                        return self.shifted(expr, last.stmt.lineno, depth + 1)
                    return False
                return self.shifted(last.value, last.stmt.lineno, depth + 1)
            return any(self.shifted(b.value, b.stmt.lineno, depth + 1) for b in blist)
        return False

    def _nonnegative(self, expr: ast.AST) -> bool:
        """abs(x), x*x, exp(x), sqrt(x), softplus-like log1p: values that are >= 0."""
        if isinstance(expr, ast.Call):
            name = tl_name(self.ctx.imports, expr.func) or ""
            return name.split(".")[-1] in {"abs", "exp", "exp2", "sqrt", "sqrt_rn", "sigmoid"}
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
            return ast.dump(expr.left) == ast.dump(expr.right)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Pow):
            return isinstance(expr.right, ast.Constant) and expr.right.value == 2
        return False
