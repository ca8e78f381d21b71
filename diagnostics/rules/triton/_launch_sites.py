"""Launches of a kernel in the same file (`kernel[grid](...)`) and where their arguments come from.

Used by TRI004 to see whether a block size passed from the host is a power of two. The host code
is read, never run: an argument is classified only when its origin is visible in the launching
function (a literal, `triton.next_power_of_2(n)`, or a tensor dimension such as `x.shape[-1]`).

The leading underscore keeps the registry from loading it as a rule.
"""
from __future__ import annotations

import ast
import enum
from dataclasses import dataclass

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.triton_ast import Kernel, call_path, walk_nodes


@dataclass(frozen=True)
class Launch:
    call: ast.Call
    args: dict[str, ast.expr]            # parameter name -> argument expression
    host: ast.FunctionDef | None         # the function that launches (None at module level)


@dataclass
class _ModuleCalls:
    """Every call of the module by callee name (`f(...)` and `f[grid](...)`), so that rules do not
    walk the module per kernel."""

    by_name: dict[str, list[ast.Call]]


def module_calls(ctx: PythonContext) -> _ModuleCalls:
    return ctx.per_file(("calls-by-name",), lambda: _ModuleCalls(_calls_by_name(ctx)))


def _calls_by_name(ctx: PythonContext) -> dict[str, list[ast.Call]]:
    by_name: dict[str, list[ast.Call]] = {}
    for node in ctx.module_calls:
        func = node.func.value if isinstance(node.func, ast.Subscript) else node.func
        if isinstance(func, ast.Name):
            by_name.setdefault(func.id, []).append(node)
    return by_name


def _names_bound_by(ctx: PythonContext, node: ast.AST) -> set[str]:
    """Names that `x = <expression containing node>` binds (`k` in `k = triton.jit(f)`): the
    statement around an expression is its nearest statement ancestor."""
    child, parent = node, ctx.parents.get(node)
    while parent is not None and not isinstance(parent, ast.stmt):
        child, parent = parent, ctx.parents.get(parent)
    if isinstance(parent, ast.Assign) and child is parent.value:
        return {t.id for t in parent.targets if isinstance(t, ast.Name)}
    return set()


def kernel_aliases(ctx: PythonContext, kernel: Kernel) -> set[str]:
    """Names the kernel is launched by: its own and `k = triton.jit(f)` targets."""
    names = {kernel.name}
    if isinstance(kernel.jit, ast.Call):
        names |= _names_bound_by(ctx, kernel.jit)
    return names


def launches(ctx: PythonContext, kernel: Kernel) -> list[Launch]:
    calls = module_calls(ctx).by_name
    out = []
    for name in sorted(kernel_aliases(ctx, kernel)):
        for node in calls.get(name, []):
            if isinstance(node.func, ast.Subscript):
                launch = _launch(ctx, kernel, node)
                if launch is not None:
                    out.append(launch)
    return out


def _launch(ctx: PythonContext, kernel: Kernel, node: ast.Call) -> Launch | None:
    if any(isinstance(a, ast.Starred) for a in node.args):
        return None  # positions unknown after *args
    args = dict(zip(kernel.param_names, node.args))
    args.update({k.arg: k.value for k in node.keywords if k.arg})
    return Launch(node, args, _enclosing_function(ctx, node))


def _enclosing_function(ctx: PythonContext, node: ast.AST) -> ast.FunctionDef | None:
    for anc in ctx.ancestors(node):
        if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return anc  # type: ignore[return-value]
    return None


class Origin(enum.Enum):
    POWER_OF_TWO = "power-of-two"     # next_power_of_2(...), 1 << k, a power-of-two literal
    DIMENSION = "dimension"           # a tensor size read at run time: x.shape[1], x.size(-1), numel()
    LITERAL = "literal"               # an integer literal that is not a power of two
    UNKNOWN = "unknown"


_DIMENSION_METHODS = {"size", "numel", "stride", "dim"}


def _is_dimension(ctx: PythonContext, expr: ast.expr) -> bool:
    """`x.shape[i]`, `x.shape`, `x.size(i)`, `x.numel()`, `len(x)`, `x.shape[-1] * k` ..."""
    if isinstance(expr, ast.Subscript):
        return _is_dimension(ctx, expr.value)
    if isinstance(expr, ast.Attribute) and expr.attr == "shape":
        return True
    if isinstance(expr, ast.Call):
        if isinstance(expr.func, ast.Attribute) and expr.func.attr in _DIMENSION_METHODS:
            return True
        if isinstance(expr.func, ast.Name) and expr.func.id == "len":
            return True
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Mult, ast.Add, ast.Sub, ast.FloorDiv)):
        return _is_dimension(ctx, expr.left) or _is_dimension(ctx, expr.right)
    return False


def _host_bindings(host: ast.FunctionDef | None, ctx: PythonContext, name: str) -> list[ast.expr] | None:
    """Values assigned to `name` in the launching function (None for one it cannot follow:
    a parameter, a loop variable, an augmented assignment)."""
    scope = host if host is not None else ctx.tree
    if host is not None and name in {a.arg for a in (*host.args.posonlyargs, *host.args.args, *host.args.kwonlyargs)}:
        return None
    values: list[ast.expr] = []
    for node in ctx.walk(scope):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id == name:
                    values.append(node.value)
                elif isinstance(target, (ast.Tuple, ast.List)) and any(isinstance(e, ast.Name) and e.id == name for e in target.elts):
                    if isinstance(node.value, (ast.Tuple, ast.List)) and len(node.value.elts) == len(target.elts):
                        idx = next(i for i, e in enumerate(target.elts) if isinstance(e, ast.Name) and e.id == name)
                        values.append(node.value.elts[idx])
                    else:
                        values.append(node.value)  # `M, N = x.shape`: the whole right side
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name and node.value:
            values.append(node.value)
        elif isinstance(node, (ast.AugAssign, ast.For)) and name in {n.id for n in walk_nodes(node.target) if isinstance(n, ast.Name)}:
            return None
    return values or None


def _checks_power_of_two(ctx: PythonContext, scope: ast.AST, name: str) -> bool:
    """An `assert` or `if` on the name (e.g. `assert n & (n - 1) == 0`) may guarantee the shape, and
    so may a call that hands it to a checking function of this file (`_check_head_dim(D)`, whose
    body raises or asserts)."""
    checkers = _checking_functions(ctx)
    for node in ctx.walk(scope):
        if isinstance(node, (ast.Assert, ast.If)) and any(isinstance(n, ast.Name) and n.id == name for n in walk_nodes(node.test)):
            return True
        if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)
                and node.value.func.id in checkers
                and any(isinstance(a, ast.Name) and a.id == name for a in node.value.args)):
            return True
    return False


def _checking_functions(ctx: PythonContext) -> set[str]:
    """Module-level functions whose body raises or asserts: called as a statement, they guard their arguments."""
    def build() -> set[str]:
        out = set()
        for stmt in ctx.tree.body:
            if isinstance(stmt, ast.FunctionDef) and any(isinstance(n, (ast.Raise, ast.Assert)) for n in walk_nodes(stmt)):
                out.add(stmt.name)
        return out
    return ctx.per_file(("checking-functions",), build)


def _produced_here(ctx: PythonContext, expr: ast.expr, host: ast.FunctionDef | None) -> bool:
    """`part.shape[1]` where `part` comes from a call of a function of this file: an intermediate the
    library allocated itself (often already rounded: `torch.empty((bs, next_power_of_2(n)))`), not
    a caller's tensor, so its dimension is no evidence of an arbitrary size."""
    base = expr
    while isinstance(base, (ast.Subscript, ast.Attribute, ast.Call)):
        base = base.value if not isinstance(base, ast.Call) else base.func
    if not isinstance(base, ast.Name) or host is None:
        return False
    local_functions = {s.name for s in ctx.tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for node in ctx.walk(host):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) \
                and node.value.func.id in local_functions \
                and any(isinstance(n, ast.Name) and n.id == base.id for t in node.targets for n in walk_nodes(t)):
            return True
    return False


def origin(ctx: PythonContext, expr: ast.expr, host: ast.FunctionDef | None, depth: int = 0) -> Origin:
    """Where a launch argument's value comes from, as far as the launching function shows."""
    if depth > 6:
        return Origin.UNKNOWN
    if isinstance(expr, ast.Constant) and isinstance(expr.value, int) and not isinstance(expr.value, bool):
        v = expr.value
        return Origin.POWER_OF_TWO if v > 0 and v & (v - 1) == 0 else Origin.LITERAL
    if isinstance(expr, ast.Call):
        path = call_path(ctx.imports, expr) or ""
        if path.endswith(("next_power_of_2", "next_pow2")):
            return Origin.POWER_OF_TWO
        if path in ("min", "max") and expr.args:
            kinds = {origin(ctx, a, host, depth + 1) for a in expr.args}
            return Origin.POWER_OF_TWO if kinds == {Origin.POWER_OF_TWO} else Origin.UNKNOWN
    if isinstance(expr, ast.BinOp):
        if isinstance(expr.op, ast.LShift) and isinstance(expr.left, ast.Constant) and expr.left.value == 1:
            return Origin.POWER_OF_TWO
        if isinstance(expr.op, ast.Pow) and isinstance(expr.left, ast.Constant) and expr.left.value == 2:
            return Origin.POWER_OF_TWO
    if _is_dimension(ctx, expr):
        return Origin.UNKNOWN if _produced_here(ctx, expr, host) else Origin.DIMENSION
    if isinstance(expr, ast.Name):
        scope = host if host is not None else ctx.tree
        if _checks_power_of_two(ctx, scope, expr.id):
            return Origin.UNKNOWN
        values = _host_bindings(host, ctx, expr.id)
        if not values:
            return Origin.UNKNOWN
        kinds = {origin(ctx, v, host, depth + 1) for v in values}
        if kinds == {Origin.POWER_OF_TWO}:
            return Origin.POWER_OF_TWO
        if kinds == {Origin.DIMENSION}:
            return Origin.DIMENSION
        if kinds == {Origin.LITERAL}:
            return Origin.LITERAL
    return Origin.UNKNOWN
