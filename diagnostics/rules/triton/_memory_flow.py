"""Where the local names of one Triton kernel come from, for rules that follow values.

Two views of a name: `bindings` keeps every binding (assignment, augmented assignment, loop
target) in source order, and `expand` follows names back to everything that may have produced
them (for "may this depend on ...?" questions); `reach` / `value_at` give the bindings that reach
one use (`_reaching.py`), for questions about a name's value, shape or rank at that use.

Shared by TRI004/5/6/7/14/19; the leading underscore keeps the registry from loading it as a rule.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.rules.triton._reaching import (
    Binding,
    Reach,
    ReachingDefinitions,
    scope_bindings,
)
from tritonify.diagnostics.triton_ast import (
    ImportMap,
    Kernel,
    Param,
    keyword,
    tl_name,
    walk_nodes,
)

# Parameter names that hold pointers by convention (Triton has no pointer annotation).
_POINTER_NAME = re.compile(r"(^|_)(ptr|ptrs|pointer)s?($|_)|_ptr\d*$|^[A-Z]$|^(X|Y|Z|Out|Q|K|V|W|B)_?\w*$")
# Names that read as a number of elements or rows: the runtime bound a mask compares against.
SIZE_NAME = re.compile(
    r"^(n|N|M|K|L|T|D|H|numel|size|length|len)$"
    r"|^(n|num)_?[a-z]\w*$"
    r"|(_size|_len|_length|_numel|_elements|_cols|_rows|_tokens|_dim)$"
    r"|^(seq|seqlen|ctx|context|n_ctx|N_CTX|hidden)\w*$",
)
_FLOAT_NAME = re.compile(r"(eps|epsilon|scale|alpha|beta|gamma|temperature|softcap|momentum|lr|dropout|p_drop)", re.IGNORECASE)



@dataclass(frozen=True)
class Access:
    """A `tl.load` / `tl.store` call and its arguments, positional or keyword."""

    call: ast.Call
    op: str
    pointer: ast.expr | None
    mask: ast.expr | None
    other: ast.expr | None
    boundary_check: ast.expr | None


def _arg(call: ast.Call, index: int, name: str) -> ast.expr | None:
    kw = keyword(call, name)
    if kw is not None:
        return None if _is_none(kw.value) else kw.value
    if len(call.args) > index and not isinstance(call.args[index], ast.Starred):
        value = call.args[index]
        return None if _is_none(value) else value
    return None


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


class KernelFlow:
    """Bindings and helpers for one kernel."""

    def __init__(self, imports: ImportMap, kernel: Kernel):
        self.imports = imports
        self.kernel = kernel

    # ---- bindings --------------------------------------------------------------------------
    @cached_property
    def bindings(self) -> dict[str, list[Binding]]:
        """Every binding of each local name, in source order (flow-insensitive: for "may this
        value come from ...?" questions; use `reach` for the bindings that reach one use)."""
        return scope_bindings(self.kernel.walk())

    @cached_property
    def reaching(self) -> ReachingDefinitions:
        return ReachingDefinitions(self.kernel.node, self.bindings)

    def reach(self, use: ast.AST) -> Reach | None:
        """The bindings that reach this read of a local (`Name` node), or None when unknown."""
        return self.reaching.at(use) if isinstance(use, ast.Name) else None

    def value_at(self, use: ast.AST) -> ast.expr | None:
        """The value of the one plain assignment that reaches this read of a name (`b` after
        `b = tl.reshape(b, ...)` is the reshape), else None. A node the walk did not see (a
        synthesised `Name`) falls back to `single_value`."""
        if not isinstance(use, ast.Name):
            return None
        found = self.reaching.at(use)
        if found is None:
            return self.single_value(use.id)
        b = found.single()
        if b is None or b.augmented or b.loop_target:
            return None
        return b.value

    def single_value(self, name: str) -> ast.expr | None:
        """The value of a name assigned exactly once by a plain assignment, else None."""
        found = self.bindings.get(name, [])
        if len(found) == 1 and not found[0].augmented and not found[0].loop_target:
            return found[0].value
        return None

    def is_local(self, name: str) -> bool:
        return name in self.bindings

    # ---- parameters --------------------------------------------------------------------------
    def param(self, name: str) -> Param | None:
        return self.kernel.param(name)

    def is_constexpr(self, name: str) -> bool:
        return name in self.kernel.constexpr_names

    @cached_property
    def pointer_params(self) -> set[str]:
        """Parameters that are pointers: named like one, or the root of a memory access's address."""
        names = {p.name for p in self.kernel.params if _POINTER_NAME.search(p.name) and not self.is_constexpr(p.name)
                 and "stride" not in p.name.lower()}       # `X_row_stride` is Liger's spelling of a stride
        for access in self.accesses:
            if access.pointer is not None:
                names |= self.pointer_roots(access.pointer)
        for call in self.kernel.calls():
            if self.tl_call(call, "make_block_ptr") and call.args:
                names |= self.pointer_roots(call.args[0])
        return names

    def pointer_roots(self, expr: ast.AST, seen: frozenset[str] = frozenset()) -> set[str]:
        """The parameter an address is built on: the leftmost term of the additions
        (`x_ptr + row * stride + cols`), followed through locals (`row_ptr = x_ptr + ...`)."""
        if seen:
            return self._pointer_roots(expr, seen)
        cache = self.__dict__.setdefault("_roots_cache", {})
        key = expr.id if isinstance(expr, ast.Name) else id(expr)  # a name's roots depend only on the name
        hit = cache.get(key)
        if hit is None or not isinstance(key, str) and hit[0] is not expr:
            hit = cache[key] = (expr, frozenset(self._pointer_roots(expr, seen)))
        return set(hit[1])

    def _pointer_roots(self, expr: ast.AST, seen: frozenset[str]) -> set[str]:
        if isinstance(expr, ast.Name):
            if expr.id in seen:
                return set()
            is_param = self.param(expr.id) is not None and not self.is_constexpr(expr.id)
            plain = [b for b in self.bindings.get(expr.id, []) if not b.augmented and not b.loop_target]
            if is_param and not plain:
                return {expr.id}  # `x_ptr += row * stride` keeps the parameter as the base
            if expr.id in self.bindings:
                out: set[str] = set()
                for b in self.bindings[expr.id]:
                    if b.value is not None and not b.augmented and not b.loop_target:
                        out |= self.pointer_roots(b.value, seen | {expr.id})
                return out
            return {expr.id} if self.param(expr.id) and not self.is_constexpr(expr.id) else set()
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
            return self.pointer_roots(expr.left, seen) or self.pointer_roots(expr.right, seen)
        if isinstance(expr, ast.Subscript):
            return self.pointer_roots(expr.value, seen)
        if isinstance(expr, ast.Call):
            if isinstance(expr.func, ast.Attribute) and tl_name(self.imports, expr.func) is None:
                return self.pointer_roots(expr.func.value, seen)  # p.to(...)
            if self.tl_call(expr, "multiple_of", "max_contiguous", "advance", "make_block_ptr") and expr.args:
                return self.pointer_roots(expr.args[0], seen)
        return set()

    def is_pointer_local(self, name: str) -> bool:
        """A local that holds an address (`row_ptr = x_ptr + row * stride`)."""
        return name in self.bindings and bool(self.pointer_roots(ast.Name(id=name)) & self.pointer_params)

    def runtime_int_params(self) -> list[Param]:
        """Parameters that are runtime integers: not constexpr, not pointers, not float scalars."""
        out = []
        for p in self.kernel.params:
            if self.is_constexpr(p.name) or p.name in self.pointer_params:
                continue
            if isinstance(p.default, ast.Constant) and isinstance(p.default.value, (float, bool, str)):
                continue
            if _FLOAT_NAME.search(p.name) and not SIZE_NAME.search(p.name) and "stride" not in p.name:
                continue
            if p.annotation and any(t in p.annotation for t in ("float", "fp", "bool", "tensor")):
                continue
            out.append(p)
        return out

    # ---- expressions -----------------------------------------------------------------------
    def expand(self, expr: ast.AST, limit: int = 2000) -> list[ast.AST]:
        """Every node of `expr` plus, for each local name it reads, every value bound to that
        name (recursively). Flow-insensitive: over-approximates what may reach `expr`.
        Computed once per expression (rules ask about the same addresses many times); do not
        change the list returned."""
        cache = self.__dict__.setdefault("_expand_cache", {})
        hit = cache.get((id(expr), limit))
        if hit is None or hit[0] is not expr:
            hit = cache[(id(expr), limit)] = (expr, self._expand(expr, limit))
        return hit[1]

    def _expand(self, expr: ast.AST, limit: int) -> list[ast.AST]:
        seen_names: set[str] = set()
        out: list[ast.AST] = []
        stack = [expr]
        while stack and len(out) < limit:
            node = stack.pop()
            for sub in walk_nodes(node):
                out.append(sub)
                if isinstance(sub, ast.Name) and sub.id not in seen_names and sub.id in self.bindings:
                    seen_names.add(sub.id)
                    for b in self.bindings[sub.id]:
                        if b.value is not None:
                            stack.append(b.value)
        return out

    def names_in(self, expr: ast.AST) -> set[str]:
        return {n.id for n in self.expand(expr) if isinstance(n, ast.Name)}

    def tl_call(self, node: ast.AST, *names: str) -> bool:
        """True when `node` is a call of `tl.<name>` for one of `names` (any alias of tl)."""
        return isinstance(node, ast.Call) and tl_name(self.imports, node.func) in names

    def mentions_tl(self, expr: ast.AST, *names: str) -> bool:
        return any(self.tl_call(n, *names) for n in self.expand(expr))

    def is_block_pointer(self, expr: ast.AST) -> bool:
        """Pointer made by `tl.make_block_ptr` / `tl.advance` (bounds via boundary_check)."""
        return self.mentions_tl(expr, "make_block_ptr", "advance")

    # ---- memory accesses ---------------------------------------------------------------------
    @cached_property
    def accesses(self) -> list[Access]:
        out = []
        for call in self.kernel.calls():
            op = tl_name(self.imports, call.func)
            if op == "load":
                out.append(Access(call, op, _arg(call, 0, "pointer"), _arg(call, 1, "mask"), _arg(call, 2, "other"),
                                  _arg(call, 3, "boundary_check")))
            elif op == "store":
                out.append(Access(call, op, _arg(call, 0, "pointer"), _arg(call, 2, "mask"), None,
                                  _arg(call, 3, "boundary_check")))
        return out

    def statements(self) -> Iterator[ast.stmt]:
        """The kernel's statements in source order, nested bodies included."""
        def visit(body: list[ast.stmt]) -> Iterator[ast.stmt]:
            for stmt in body:
                yield stmt
                for field_name in ("body", "orelse", "finalbody"):
                    inner = getattr(stmt, field_name, None)
                    if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                        yield from visit(inner)
                for handler in getattr(stmt, "handlers", []) or []:
                    yield from visit(handler.body)
        yield from visit(self.kernel.node.body)
        del visit   # the recursive closure refers to itself: free it now, not at a GC pass


def kernel_flow(ctx: PythonContext, kernel: Kernel) -> KernelFlow:
    """The one `KernelFlow` of `kernel` in this file, shared by every rule that follows values."""
    return ctx.per_file(("kernel-flow", kernel.node), lambda: KernelFlow(ctx.imports, kernel))


def position(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


def tl_alias(imports: ImportMap) -> str | None:
    """The local name of `triton.language` in this file ('tl' preferred), or None."""
    aliases = sorted(imports.aliases_of("triton.language"))
    if "tl" in aliases:
        return "tl"
    if aliases:
        return aliases[0]
    triton = sorted(imports.aliases_of("triton"))
    if triton:
        return f"{triton[0]}.language"
    return None
