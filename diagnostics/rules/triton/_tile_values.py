"""Which values in a kernel hold one number per element of a tile, and which one per row or program.

A cost paid on a tile value (`x = tl.load(p + offs)`, `qk = tl.dot(q, k)`, `x * w`) is paid
BLOCK times per program; a cost paid on a reduced value (`var = tl.sum(x * x) / n`,
`m = tl.max(qk, 1)`, a scalar `tl.load(p + row)`) once per row. The precision rules use this
to tell a hot cost (warning) from a once-per-row one (info, or nothing).

A value is a tile when it comes from `tl.arange`, a `tl.dot`, a block pointer or descriptor, a
load through a tile of pointers, or any expression that reads a tile value outside a reduction
(`tl.sum`, `tl.max`, `tl.min`, `tl.reduce`, ...). Broadcasting a reduced vector (`m[:, None]`) does
not make it a tile, and neither does `tl.zeros`/`tl.full` by itself: an accumulator becomes a tile
when a tile is added into it (`acc += x`), not when it only collects row maxima
(`m = tl.maximum(m, tl.max(x, 1))`). Flow-insensitive: a name is a tile when any of its bindings is one.
"""
from __future__ import annotations

import ast

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.rules.triton._kernel_flow import bindings
from tritonify.diagnostics.triton_ast import Kernel, tl_name

_SEEDS = {"arange", "dot", "dot_scaled", "make_block_ptr", "make_tensor_descriptor", "rand", "randn", "randint",
          "rand4x", "randint4x", "histogram", "gather"}
_REDUCTIONS = {"sum", "max", "min", "reduce", "argmax", "argmin", "xor_sum", "prod", "math.max", "math.min"}
_REDUCING_METHODS = {"sum", "max", "min", "argmax", "argmin"}


class TileValues:
    def __init__(self, ctx: PythonContext, kernel: Kernel):
        self.ctx = ctx
        self.binds = bindings(kernel)
        self.names: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name, blist in self.binds.items():
                if name in self.names:
                    continue
                if any(not isinstance(b.stmt, ast.For) and not _unpacked_from_helper(b) and self.is_tile(b.value)
                       for b in blist):
                    self.names.add(name)
                    changed = True
        self._memo: dict[int, bool] = {}   # the names are final now: answers can be kept

    def is_tile(self, expr: ast.AST, depth: int = 0) -> bool:
        """`expr` holds one value per element of a tile (as far as the source tells)."""
        memo = self.__dict__.get("_memo")
        if memo is not None:
            key = id(expr)
            found = memo.get(key)
            if found is None:
                found = memo[key] = self._is_tile(expr, depth)
            return found
        return self._is_tile(expr, depth)

    def _is_tile(self, expr: ast.AST, depth: int) -> bool:
        if depth > 40:
            return False
        if isinstance(expr, ast.Name):
            return expr.id in self.names
        if isinstance(expr, ast.Constant):
            return False
        if isinstance(expr, ast.Call):
            return self._call(expr, depth)
        if isinstance(expr, ast.Subscript):
            return self.is_tile(expr.value, depth + 1)
        if isinstance(expr, ast.Attribute):
            return self.is_tile(expr.value, depth + 1) and expr.attr in ("T",)
        if isinstance(expr, ast.IfExp):
            return self.is_tile(expr.body, depth + 1) or self.is_tile(expr.orelse, depth + 1)
        return any(self.is_tile(c, depth + 1) for c in ast.iter_child_nodes(expr)
                   if isinstance(c, ast.expr))

    def per_row(self, expr: ast.AST) -> bool:
        """`expr` is known to hold one value per row or program: not a tile, and computed from a
        reduction, a scalar load or `tl.program_id` (a bare parameter says nothing either way)."""
        if self.is_tile(expr):
            return False
        return self._reads_row_value(expr, set())

    def _reads_row_value(self, expr: ast.AST, seen: set[str]) -> bool:
        for node in ast.walk(expr):
            if isinstance(node, ast.Call):
                name = tl_name(self.ctx.imports, node.func)
                if name in _REDUCTIONS or name in ("load", "program_id", "num_programs"):
                    return True
                if isinstance(node.func, ast.Attribute) and name is None and node.func.attr in _REDUCING_METHODS:
                    return True
            elif isinstance(node, ast.Name) and node.id not in seen and node.id in self.binds:
                seen.add(node.id)
                if any(not isinstance(b.stmt, ast.For) and self._reads_row_value(b.value, seen)
                       for b in self.binds[node.id]):
                    return True
        return False

    def _call(self, call: ast.Call, depth: int) -> bool:
        name = tl_name(self.ctx.imports, call.func)
        if name in _REDUCTIONS:
            return False
        if name in _SEEDS:
            return True
        func = call.func
        if isinstance(func, ast.Attribute) and name is None:
            if func.attr in _REDUCING_METHODS:
                return False
            if self.is_tile(func.value, depth + 1):
                return True
        args = [*call.args, *(kw.value for kw in call.keywords if kw.arg not in ("mask", "other", "dtype"))]
        return any(self.is_tile(a, depth + 1) for a in args)


def _unpacked_from_helper(b) -> bool:
    """`idx, score, mask = _select_one(tile, ...)`: one of several results of a helper; which of
    them is a tile and which a scalar cannot be told here, so none counts as a tile."""
    stmt = b.stmt
    return (isinstance(stmt, ast.Assign) and any(isinstance(t, (ast.Tuple, ast.List)) for t in stmt.targets)
            and b.value is stmt.value and isinstance(b.value, ast.Call))


def derived_from(ctx: PythonContext, kernel: Kernel, seed) -> set[str]:
    """Names whose value comes from a node matching `seed` elementwise: not through a reduction
    (`m = tl.max(qk, 1)` does not carry `qk`'s per-element values; `p = tl.exp(qk - m)` does)."""
    values = tile_values(ctx, kernel)
    names: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, blist in values.binds.items():
            if name not in names and any(
                not isinstance(b.stmt, ast.For) and reads_elementwise(ctx, b.value, seed, names) for b in blist
            ):
                names.add(name)
                changed = True
    return names


def reads_elementwise(ctx: PythonContext, expr: ast.AST, seed, names: set[str]) -> bool:
    """`expr` contains a `seed` node or one of `names` outside any reduction call."""
    if isinstance(expr, ast.Name):
        return expr.id in names
    if isinstance(expr, ast.Call):
        name = tl_name(ctx.imports, expr.func)
        if name in _REDUCTIONS or (isinstance(expr.func, ast.Attribute) and name is None
                                   and expr.func.attr in _REDUCING_METHODS):
            return False
        if seed(expr):
            return True
    return any(reads_elementwise(ctx, c, seed, names) for c in ast.iter_child_nodes(expr))


def tile_values(ctx: PythonContext, kernel: Kernel) -> TileValues:
    """The kernel's tile facts, built once per file and shared by the rules that ask."""
    return ctx.per_file(("tile-values", kernel.node), lambda: TileValues(ctx, kernel))
