"""Which assignment of a name reaches a given use: reaching definitions over a function's AST.

Rules that reason about a name's value, shape or rank must judge the binding that reaches the
use, not the first one in the function:

    b = tl.load(p)                  # [BM, BK]
    b = tl.reshape(b, (BM * BK,))   # the use below sees this one
    tl.store(q, b)

    x = 0.0                         # a scalar...
    if USE_VEC:
        x = tl.load(p + offs)       # ...or a vector: both reach the use after the `if`

`ReachingDefinitions(scope)` walks the statements of one function (or module) once, in order,
with a state `name -> the bindings that may hold its value here`: an assignment replaces the
state of its names, `if`/`else` branches merge (the union of both), a loop merges its entry
with its back edge until nothing changes (kernels are small: a few rounds), and `return` ends a
path. Every `Name` that is read is recorded with the state that reaches it; `Reach.entry` says
the value the name had on entry (a parameter, a global) may also reach.

Nothing here runs user code. The leading underscore keeps the registry from loading it as a rule.
"""
from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from tritonify.diagnostics.triton_ast import walk_nodes


@dataclass(frozen=True)
class Binding:
    """One assignment of a local name. `value` is None when the value cannot be named
    (a loop target, a tuple unpacked from a call)."""

    name: str
    value: ast.expr | None
    stmt: ast.AST
    augmented: bool = False
    loop_target: bool = False


@dataclass(frozen=True)
class Reach:
    """The bindings that may hold a name's value at one use, in source order. `entry`: the value
    the name had when the scope started (a parameter, a global, or nothing) may reach too."""

    bindings: tuple[Binding, ...]
    entry: bool

    def single(self) -> Binding | None:
        """The one binding that reaches, when exactly one does and the entry value does not."""
        return self.bindings[0] if len(self.bindings) == 1 and not self.entry else None


# the node classes that bind a name (`scope_bindings`)
_BINDING_CLASSES = frozenset({ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.comprehension,
                              ast.NamedExpr, ast.withitem})


def scope_bindings(nodes: Iterable[ast.AST]) -> dict[str, list[Binding]]:
    """Every binding of a local name among `nodes` (a scope's nodes), sorted by position."""
    out: dict[str, list[Binding]] = {}

    def add(target: ast.expr, value: ast.expr | None, stmt: ast.AST, **kw) -> None:
        if isinstance(target, ast.Name):
            out.setdefault(target.id, []).append(Binding(target.id, value, stmt, **kw))
        elif isinstance(target, (ast.Tuple, ast.List)):
            pairs = value.elts if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) else None
            for i, elt in enumerate(target.elts):
                add(elt, pairs[i] if pairs else None, stmt, **kw)
        elif isinstance(target, ast.Starred):
            add(target.value, None, stmt, **kw)

    binding_classes = _BINDING_CLASSES
    for node in nodes:
        if node.__class__ not in binding_classes:
            continue   # nearly every node (parsed nodes are never subclasses)
        if isinstance(node, ast.Assign):
            for t in node.targets:
                add(t, node.value, node)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            add(node.target, node.value, node)
        elif isinstance(node, ast.AugAssign):
            add(node.target, node.value, node, augmented=True)
        elif isinstance(node, (ast.For, ast.comprehension)):
            add(node.target, None, node, loop_target=True)
        elif isinstance(node, ast.NamedExpr):
            add(node.target, node.value, node)
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            add(node.optional_vars, None, node)
    del add   # the recursive closure refers to itself: left, it keeps `out` for the cyclic collector
    for value in out.values():
        value.sort(key=lambda b: (getattr(b.stmt, "lineno", 0), getattr(b.stmt, "col_offset", 0)))
    return out


_ENTRY = "<entry>"  # stands for the value a name had when the scope started
_State = Mapping[str, frozenset]  # name -> bindings (and maybe _ENTRY); a missing name is {_ENTRY}
_MAX_ROUNDS = 8  # loop fixpoint rounds; each round only adds bindings, so this is plenty for kernels


def _merge(states: list[_State | None]) -> _State | None:
    live = [s for s in states if s is not None]
    if not live:
        return None
    if len(live) == 1:
        return live[0]
    entry = frozenset((_ENTRY,))
    first, rest = live[0], live[1:]
    out = {}
    for n in set().union(*live):
        merged = first.get(n, entry)
        for s in rest:
            b = s.get(n, entry)
            if b is not merged:   # most names reach a join unchanged: the same set object on every side
                merged = merged | b
        out[n] = merged
    return out


class ReachingDefinitions:
    """Reaching definitions of one scope (a function body, or a module's top level)."""

    def __init__(self, scope: ast.AST, bindings: Mapping[str, list[Binding]] | None = None):
        self.scope = scope
        if bindings is None:
            bindings = scope_bindings(walk_nodes(scope))
        self._by_site: dict[tuple[int, str], tuple[Binding, ...]] = {}
        for name, found in bindings.items():
            for b in found:
                key = (id(b.stmt), name)
                self._by_site[key] = self._by_site.get(key, ()) + (b,)
        # the same bindings as one set per site, made once (a loop's body is walked more than once)
        self._site_sets: dict[tuple[int, str], frozenset] = {key: frozenset(found) for key, found in self._by_site.items()}
        self._uses: dict[int, frozenset] = {}
        self._reads_of: dict[int, tuple] = {}   # id(expr) -> (expr, its Name loads, its walruses)
        self._before: list[tuple[tuple[int, int], tuple[int, int], _State]] = []  # (start, end, state) per statement
        self._loops: list[tuple[list[_State], list[_State]]] = []  # (break states, continue states)
        body = getattr(scope, "body", None)
        if isinstance(body, list):
            self._block(body, {})
        self._before.sort(key=lambda t: t[0])

    # ---- queries -----------------------------------------------------------------------------
    def at(self, use: ast.Name) -> Reach | None:
        """What reaches this `Name` node (a read, or the target of `x += ...`); None for a node
        the walk never saw (dead code, a synthesised node, another scope)."""
        found = self._uses.get(id(use))
        return None if found is None else _reach(found)

    def before(self, name: str, node: ast.AST) -> Reach:
        """What reaches `name` at the statement that contains `node` (by source position), for a
        node that is not a recorded read of `name`. Outside every statement: only the entry value."""
        pos = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
        best: _State | None = None
        for start, end, state in self._before:
            if start > pos:
                break
            if pos <= end:
                best = state  # later starts are nested deeper: the innermost statement wins
        if best is None:
            return Reach((), True)
        return _reach(best.get(name, frozenset((_ENTRY,))))

    # ---- the walk ----------------------------------------------------------------------------
    def _block(self, stmts: list[ast.stmt], state: _State | None) -> _State | None:
        for stmt in stmts:
            if state is None:
                return None  # after return / break / continue / raise: unreachable
            state = self._stmt(stmt, state)
        return state

    def _define(self, state: _State, stmt: ast.AST, target: ast.AST) -> _State:
        """The state after `stmt` binds the names in `target` (`state` itself when it binds none
        that is recorded: states are never changed once made)."""
        sites = self._site_sets
        if target.__class__ is ast.Name:   # the common target: no walk
            found = None if isinstance(target.ctx, ast.Load) else sites.get((id(stmt), target.id))
            if not found:
                return state
            new = dict(state)
            new[target.id] = found
            return new
        new = None
        for n in walk_nodes(target):
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
                found = sites.get((id(stmt), n.id))
                if found:
                    if new is None:
                        new = dict(state)
                    new[n.id] = found
        return state if new is None else new

    def _reads(self, expr: ast.AST | None, state: _State) -> _State:
        """Record every read in `expr` with `state`; a walrus inside binds after it."""
        if expr is None:
            return state
        found = self._reads_of.get(id(expr))
        if found is None or found[0] is not expr:   # walked once: a loop's body is read twice
            loads, walrus = [], []
            for n in walk_nodes(expr):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                    loads.append(n)
                elif isinstance(n, ast.NamedExpr):
                    walrus.append(n)
            found = self._reads_of[id(expr)] = (expr, loads, walrus)
        uses = self._uses
        for n in found[1]:
            uses[id(n)] = state.get(n.id, frozenset((_ENTRY,)))
        for w in found[2]:
            state = self._define(state, w, w.target)
        return state

    def _target_reads(self, target: ast.AST, state: _State) -> None:
        """`x[i] = v`, `p.attr = v`: the object and the index are reads."""
        if isinstance(target, (ast.Subscript, ast.Attribute)):
            self._reads(target, state)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._target_reads(elt, state)
        elif isinstance(target, ast.Starred):
            self._target_reads(target.value, state)

    def _stmt(self, stmt: ast.stmt, state: _State) -> _State | None:
        start = (stmt.lineno, stmt.col_offset)
        end = (getattr(stmt, "end_lineno", stmt.lineno) or stmt.lineno, getattr(stmt, "end_col_offset", 0) or 0)
        self._before.append((start, end, state))
        if isinstance(stmt, ast.Assign):
            state = self._reads(stmt.value, state)
            for t in stmt.targets:
                self._target_reads(t, state)
            for t in stmt.targets:
                state = self._define(state, stmt, t)
            return state
        if isinstance(stmt, ast.AnnAssign):
            state = self._reads(stmt.value, state)
            self._target_reads(stmt.target, state)
            return self._define(state, stmt, stmt.target) if stmt.value is not None else state
        if isinstance(stmt, ast.AugAssign):
            state = self._reads(stmt.value, state)
            if isinstance(stmt.target, ast.Name):
                self._uses[id(stmt.target)] = state.get(stmt.target.id, frozenset((_ENTRY,)))  # x += v reads x
            else:
                self._target_reads(stmt.target, state)
            return self._define(state, stmt, stmt.target)
        if isinstance(stmt, ast.If):
            state = self._reads(stmt.test, state)
            return _merge([self._block(stmt.body, state), self._block(stmt.orelse, state)])
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            state = self._reads(stmt.iter, state)
            return self._loop(stmt, state, lambda s: self._define(s, stmt, stmt.target))
        if isinstance(stmt, ast.While):
            return self._loop(stmt, state, lambda s: self._reads(stmt.test, s))
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                state = self._reads(item.context_expr, state)
                if item.optional_vars is not None:
                    state = self._define(state, item, item.optional_vars)
            return self._block(stmt.body, state)
        if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            after_body = self._block(stmt.body, state)
            anywhere = _merge([state, after_body])
            handlers = [self._block(h.body, anywhere) for h in stmt.handlers]  # type: ignore[attr-defined]
            out = _merge([self._block(stmt.orelse, after_body) if after_body is not None else None, *handlers])
            if stmt.finalbody:  # type: ignore[attr-defined]
                out = self._block(stmt.finalbody, _merge([out, anywhere]))  # type: ignore[attr-defined]
            return out
        if isinstance(stmt, (ast.Return, ast.Raise)):
            self._reads(getattr(stmt, "value", None) or getattr(stmt, "exc", None), state)
            return None
        if isinstance(stmt, (ast.Break, ast.Continue)):
            if self._loops:
                self._loops[-1][0 if isinstance(stmt, ast.Break) else 1].append(state)
            return None
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for d in stmt.decorator_list:
                state = self._reads(d, state)
            return state  # another scope: its body is not walked here
        for child in ast.iter_child_nodes(stmt):  # Expr, Assert, Delete, Pass, ...
            state = self._reads(child, state)
        return state

    def _loop(self, stmt: ast.For | ast.AsyncFor | ast.While, entry: _State, head) -> _State | None:
        """Entry merged with the back edge until the state at the loop head stops growing."""
        at_head: _State = entry
        breaks: list[_State] = []
        for _ in range(_MAX_ROUNDS):
            self._loops.append(([], []))
            top = head(at_head)
            end = self._block(stmt.body, top)
            breaks, continues = self._loops.pop()
            new_head = _merge([entry, end, *continues])
            assert new_head is not None
            if new_head == at_head:
                break
            at_head = new_head
        exit_state = head(at_head) if isinstance(stmt, ast.While) else at_head
        return _merge([self._block(stmt.orelse, exit_state), *breaks])


def _reach(found: frozenset) -> Reach:
    entry = _ENTRY in found
    bindings = sorted((b for b in found if b is not _ENTRY),
                      key=lambda b: (getattr(b.stmt, "lineno", 0), getattr(b.stmt, "col_offset", 0)))
    return Reach(tuple(bindings), entry)
