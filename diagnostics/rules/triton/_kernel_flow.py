"""Name-level data flow inside one Triton kernel, shared by the synchronisation and softmax rules.

Triton kernels are straight-line code over a handful of local names, so a flow-insensitive
view is enough for the questions these rules ask: "does this value depend on
`tl.program_id`?", "which local names carry the result of this `tl.exp`?", "which parameter
is this pointer expression based on?". Nothing here runs user code.
"""
from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.triton_ast import Kernel, tl_name, walk_nodes


@dataclass(frozen=True)
class Binding:
    """One place a local name gets a value: `stmt` binds `name` to (something computed from) `value`."""

    name: str
    value: ast.expr
    stmt: ast.stmt

    @cached_property
    def value_nodes(self) -> list[ast.AST]:
        """`walk_nodes(value)`, walked once however many fixpoints ask."""
        return walk_nodes(self.value)

    @cached_property
    def reads(self) -> frozenset[str]:
        """Names the value reads."""
        return frozenset(n.id for n in self.value_nodes if isinstance(n, ast.Name))


def _target_bindings(target: ast.expr, value: ast.expr, stmt: ast.stmt) -> Iterator[Binding]:
    if isinstance(target, ast.Name):
        yield Binding(target.id, value, stmt)
    elif isinstance(target, (ast.Tuple, ast.List)):
        values = value.elts if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) else None
        for i, elt in enumerate(target.elts):
            yield from _target_bindings(elt, values[i] if values else value, stmt)
    elif isinstance(target, ast.Starred):
        yield from _target_bindings(target.value, value, stmt)


# the node classes that `bindings` reads
_BINDING_CLASSES = frozenset({ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For})


def bindings(kernel: Kernel) -> dict[str, list[Binding]]:
    """Every assignment to a local name in the kernel body, in source order.

    `x += y` binds x to `y` (its old value is already one of x's bindings); a `for` target
    is bound to the loop's iterable."""
    out: dict[str, list[Binding]] = {}
    binding_classes = _BINDING_CLASSES
    for node in kernel.walk():
        if node.__class__ not in binding_classes:
            continue   # nearly every node (parsed nodes are never subclasses)
        found: Iterable[Binding] = ()
        if isinstance(node, ast.Assign):
            found = [b for t in node.targets for b in _target_bindings(t, node.value, node)]
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            found = _target_bindings(node.target, node.value, node)
        elif isinstance(node, ast.For):
            found = _target_bindings(node.target, node.iter, node)
        for b in found:
            out.setdefault(b.name, []).append(b)
    for lst in out.values():
        lst.sort(key=lambda b: (b.stmt.lineno, b.stmt.col_offset))
    return out


def names_in(expr: ast.AST) -> set[str]:
    """Names read anywhere in an expression."""
    return {n.id for n in walk_nodes(expr) if isinstance(n, ast.Name)}


def taint(
    kernel: Kernel,
    binds: dict[str, list[Binding]],
    seed: Callable[[ast.AST], bool],
    seed_names: Iterable[str] = (),
) -> set[str]:
    """Local names whose value can depend on a node matching `seed` (or on `seed_names`).

    A fixpoint over the bindings: a name is tainted when any value bound to it contains a seed
    node or a tainted name."""
    tainted = set(seed_names)
    seeded: dict[int, bool] = {}
    readers: dict[str, set[str]] = {}  # name -> the names bound to a value that reads it
    todo: list[str] = list(tainted)
    for name, blist in binds.items():
        for b in blist:
            key = id(b.value)
            if key not in seeded:
                seeded[key] = any(map(seed, b.value_nodes))
            if seeded[key] and name not in tainted:
                tainted.add(name)
                todo.append(name)
            for read in b.reads:
                readers.setdefault(read, set()).add(name)
    # the least fixpoint, by a worklist: each newly tainted name taints the names read from it
    while todo:
        for name in readers.get(todo.pop(), ()):
            if name not in tainted:
                tainted.add(name)
                todo.append(name)
    return tainted


def depends_on(expr: ast.AST, tainted: set[str], seed: Callable[[ast.AST], bool]) -> bool:
    """`expr` contains a seed node or reads a tainted name."""
    return any(seed(n) for n in walk_nodes(expr)) or bool(names_in(expr) & tainted)


def is_tl_call(ctx: PythonContext, node: ast.AST, *names: str) -> bool:
    """`node` is a call to `tl.<one of names>` under any alias of triton.language."""
    return isinstance(node, ast.Call) and tl_name(ctx.imports, node.func) in names


def program_dependent(
    ctx: PythonContext, kernel: Kernel, binds: dict[str, list[Binding]] | None = None
) -> tuple[set[str], Callable[[ast.AST], bool]]:
    """Names that differ between programs or lanes (derived from `tl.program_id` or `tl.arange`),
    with the seed predicate so callers can test expressions."""
    binds = binds if binds is not None else bindings(kernel)

    def seed(n: ast.AST) -> bool:
        return is_tl_call(ctx, n, "program_id", "arange")

    return taint(kernel, binds, seed), seed


def enclosing_loops(ctx: PythonContext, node: ast.AST, kernel_node: ast.AST) -> list[ast.stmt]:
    """`for`/`while` statements that execute `node` on every iteration, innermost first.

    A node in a `for` loop's iterable or in a loop's `else:` runs once, so it does not count;
    a node in a `while` test runs every iteration, so it does."""
    loops: list[ast.stmt] = []
    child = node
    for anc in ctx.ancestors(node):
        if anc is kernel_node:
            break
        if _repeats(anc, child):
            loops.append(anc)
        child = anc
    return loops


def _repeats(loop: ast.AST, child: ast.AST) -> bool:
    """`child` (a direct child of `loop`) runs on every iteration: the body, or a while's test."""
    if isinstance(loop, ast.For):
        return any(child is s for s in loop.body)
    if isinstance(loop, ast.While):
        return child is loop.test or any(child is s for s in loop.body)
    return False


def assigned_in(loop: ast.stmt) -> set[str]:
    """Names (re)bound anywhere inside a loop, its own target included."""
    names: set[str] = set()
    if isinstance(loop, ast.For):
        names |= names_in(loop.target)
    for stmt in loop.body:  # type: ignore[attr-defined]
        for n in walk_nodes(stmt):
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    names |= names_in(t)
            elif isinstance(n, (ast.AugAssign, ast.AnnAssign, ast.For)):
                names |= names_in(n.target)
    return names


def value_is_used(ctx: PythonContext, call: ast.Call) -> bool:
    """False when a call is a statement of its own (`tl.atomic_add(p, v)`): its result is dropped."""
    return not isinstance(ctx.parents.get(call), ast.Expr)


_SHAPE_CALLS = {"range", "static_range", "cdiv", "arange", "zeros", "full", "multiple_of", "max_contiguous"}


def pointer_like_params(kernel: Kernel) -> set[str]:
    """Parameters used only as pointer bases: never multiplied, divided, compared, or used as a
    loop bound or shape. Sizes and strides all appear in one of those positions."""
    scalar_use: set[str] = set()
    for node in kernel.walk():
        operands: list[ast.AST] = []
        if isinstance(node, ast.BinOp) and not isinstance(node.op, (ast.Add, ast.Sub)):
            operands = [node.left, node.right]
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in _SHAPE_CALLS:
                operands = list(node.args)
        for op in operands:
            if isinstance(op, ast.Name):
                scalar_use.add(op.id)
    return {p.name for p in kernel.params if not p.constexpr and p.name not in scalar_use}


def pointer_root(
    kernel: Kernel, expr: ast.expr, binds: dict[str, list[Binding]], pointers: set[str] | None = None
) -> str | None:
    """The kernel parameter a pointer expression is based on (`C` for `c_ptrs` after
    `c_ptrs = C + offs`, `Lock` after `Lock += lock_id`), or None when it cannot be told."""
    pointers = pointers if pointers is not None else pointer_like_params(kernel)
    seen: set[str] = set()

    def visit(e: ast.expr, depth: int) -> list[str]:
        if depth > 12:
            return []
        if isinstance(e, ast.Name):
            if e.id in pointers:
                return [e.id]
            if e.id in seen:
                return []
            seen.add(e.id)
            found: list[str] = []
            for b in binds.get(e.id, []):
                if not isinstance(b.stmt, ast.For):
                    found += visit(b.value, depth + 1)
            return found
        if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub)):
            return visit(e.left, depth + 1) + visit(e.right, depth + 1)
        if isinstance(e, ast.Subscript):
            return visit(e.value, depth + 1)
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in {"to", "cast"}:
            return visit(e.func.value, depth + 1)
        return []

    roots = list(dict.fromkeys(visit(expr, 0)))
    del visit   # the recursive closure refers to itself (and to `binds`): free it now, not at a GC pass
    return roots[0] if len(roots) == 1 else None
