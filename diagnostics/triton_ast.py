"""Find Triton kernels in a parsed module and resolve what names refer to.

Everything here is static: the user's file is parsed with `ast`, never imported.

* `ImportMap` resolves a name or attribute chain (`tl.load`, `libdevice.tanh`, `tanh` after
  `from triton.language.extra.cuda.libdevice import tanh`) to a canonical dotted path
  (`triton.language.load`, `triton.language.extra.libdevice.tanh`).
* `find_kernels` returns every `@triton.jit` function (any alias, under `@triton.autotune` and
  `@triton.heuristics`, and the call forms `f = triton.jit(f)` / `triton.jit(...)(f)`).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Iterator, NamedTuple

TL = "triton.language"
LIBDEVICE = "triton.language.extra.libdevice"

# Every import path of libdevice seen in real code, mapped to one canonical module.
_LIBDEVICE_PATHS = (
    "triton.language.extra.cuda.libdevice",
    "triton.language.extra.hip.libdevice",
    "triton.language.extra.intel.libdevice",
    "triton.language.extra.libdevice",
    "triton.language.libdevice",  # triton 2.x
)
_CANONICAL_PREFIXES = {p: LIBDEVICE for p in _LIBDEVICE_PATHS}
_CANONICAL_PREFIXES.update({
    "triton.language.core": TL,            # tl.core.load is tl.load
    "triton.language.standard": TL,
    "triton.runtime.jit.jit": "triton.jit",
    "triton.runtime.jit": "triton.runtime.jit",
    "triton.runtime.autotuner.autotune": "triton.autotune",
    "triton.runtime.autotuner.heuristics": "triton.heuristics",
    "triton.runtime.autotuner.Config": "triton.Config",
    "triton.runtime.Config": "triton.Config",
    "triton.runtime.autotune": "triton.autotune",
    "triton.runtime.heuristics": "triton.heuristics",
})


_PREFIXES_LONGEST_FIRST = sorted(_CANONICAL_PREFIXES, key=len, reverse=True)


@lru_cache(maxsize=4096)
def canonical(path: str) -> str:
    """Canonical form of a dotted path (libdevice aliases folded, tl.core folded)."""
    if not path.startswith("triton."):
        return path
    for prefix in _PREFIXES_LONGEST_FIRST:
        if path == prefix or path.startswith(prefix + "."):
            return _CANONICAL_PREFIXES[prefix] + path[len(prefix):]
    return path


# Fields that hold plain values (names, flags), never child nodes: `walk_nodes` skips them. It
# also skips the fields holding an operator or an expression context (`op`, `ops`, `ctx`): the
# parser shares one `ast.Add()` / `ast.Load()` object among all nodes, rules read them through
# the field (`node.op`, `name.ctx`), and leaving them out makes every walk about a third shorter.
_VALUE_FIELDS = frozenset({"id", "attr", "arg", "kind", "type_comment", "conversion", "is_async", "level",
                           "module", "lineno", "ctx", "op", "ops"})
# A constant's `value` is a Python value (a number, a string, a tuple of them), never a node:
# `Constant` is a leaf, the commonest after `Name` (whose `id` and `ctx` are skipped already)
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {ast.Constant: ()}


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """`list(ast.iter_child_nodes(node))`, same order, without the generators (nor the
    operator and context objects, as in `walk_nodes`)."""
    cls = node.__class__
    names = _CHILD_FIELDS.get(cls)
    if names is None:
        names = _CHILD_FIELDS[cls] = tuple(f for f in cls._fields if f not in _VALUE_FIELDS)
    out = []
    for name in names:
        value = getattr(node, name, None)
        if value.__class__ is list:
            out.extend(item for item in value if isinstance(item, ast.AST))
        elif isinstance(value, ast.AST):
            out.append(value)
    return out


def walk_nodes(node: ast.AST) -> list[ast.AST]:
    """`list(ast.walk(node))` without the operator and context objects: the same nodes in the
    same breadth-first order otherwise, about three times faster (no generators; fields that
    never hold nodes, or hold only those shared objects, are skipped). Rules walk many small
    expressions, so this is the linter's innermost loop."""
    out = [node]
    append = out.append
    child_fields = _CHILD_FIELDS
    AST = ast.AST
    for current in out:  # `out` grows while it is read: breadth-first, like ast.walk's deque
        cls = current.__class__
        names = child_fields.get(cls)
        if names is None:
            names = child_fields[cls] = tuple(f for f in cls._fields if f not in _VALUE_FIELDS)
        for name in names:
            value = getattr(current, name, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, AST):
                        append(item)
            elif isinstance(value, AST):
                append(value)
    return out


def walk_nodes_and_parents(node: ast.AST) -> tuple[list[ast.AST], dict[ast.AST, ast.AST]]:
    """`walk_nodes(node)` and, from the same walk, each node's parent (child -> parent)."""
    walk = walk_module(node)
    return walk.nodes, walk.parents


class ModuleWalk(NamedTuple):
    """One breadth-first walk of a module: its nodes (`walk_nodes` order), each node's parent, and
    the calls, subscripts and function definitions among them (in the same order), which
    `find_kernels` and most rules look for."""
    nodes: list
    parents: dict
    calls: list
    subscripts: list
    functions: list


# class -> (which of `walk_module`'s lists keeps its nodes: 0 none, 1 calls, 2 subscripts, 3
# function definitions; its child fields as in `_CHILD_FIELDS`)
_WALK_INFO: dict[type, tuple[int, tuple[str, ...]]] = {}
_WALK_SORTS = {ast.Call: 1, ast.Subscript: 2, ast.FunctionDef: 3, ast.AsyncFunctionDef: 3}


def _walk_info(cls: type) -> tuple[int, tuple[str, ...]]:
    names = _CHILD_FIELDS.get(cls)
    if names is None:
        names = _CHILD_FIELDS[cls] = tuple(f for f in cls._fields if f not in _VALUE_FIELDS)
    found = _WALK_INFO[cls] = (_WALK_SORTS.get(cls, 0), names)
    return found


def walk_module(node: ast.AST) -> ModuleWalk:
    """`walk_nodes_and_parents(node)` that also sorts out the calls, subscripts and function
    definitions while it walks (the class is at hand there: a second pass over every node of a
    large module costs as much again)."""
    out = [node]
    parents: dict[ast.AST, ast.AST] = {}
    calls: list[ast.Call] = []
    subscripts: list[ast.Subscript] = []
    functions: list[ast.AST] = []
    append = out.append
    kept = (None, calls, subscripts, functions)
    info = _WALK_INFO
    AST = ast.AST
    for current in out:
        cls = current.__class__   # parsed nodes are never subclasses: a class lookup is isinstance here
        found = info.get(cls)
        if found is None:
            found = _walk_info(cls)
        sort, names = found       # one lookup says both what to keep the node in and where its children are
        if sort:
            kept[sort].append(current)
        for name in names:
            value = getattr(current, name, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, AST):
                        parents[item] = current
                        append(item)
            elif isinstance(value, AST):
                parents[value] = current
                append(value)
    return ModuleWalk(out, parents, calls, subscripts, functions)


def dotted(node: ast.AST) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None."""
    if node.__class__ is ast.Name:   # the commonest callee: no parts to join
        return node.id
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def alias_chain(value: ast.expr) -> tuple[str, ...] | None:
    """The name chain an assignment makes an alias of: `tl.exp`, `triton.jit`, and the
    decorator factories `triton.jit(...)` / `functools.partial(triton.jit, ...)`."""
    path = dotted(value)
    if path is not None:
        return tuple(path.split("."))
    if isinstance(value, ast.Call):
        func = dotted(value.func)
        if func is None:
            return None
        last = func.rpartition(".")[2]
        if last == "partial" and value.args:
            inner = dotted(value.args[0])
            return tuple(inner.split(".")) if inner else None
        if last == "jit" and not value.args:   # jit_nospec = triton.jit(do_not_specialize=[...])
            return tuple(func.split("."))
    return None


_BODY_FIELDS = ("body", "orelse", "finalbody", "handlers")


def _nested_triton_imports(tree: ast.Module) -> dict[str, str]:
    """Triton imports inside functions (`def build(): import triton.language as tl`, then
    kernels defined there): local name -> canonical path, for names bound one way only.
    Only statements are visited, not expressions; asked only of a module with no Triton import
    at module level."""
    found: dict[str, str | None] = {}
    stack = [s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    while stack:
        stmt = stack.pop()
        cls = stmt.__class__
        if cls is ast.Import:
            for alias in stmt.names:
                if alias.name.split(".")[0] == "triton":
                    local = alias.asname or alias.name.split(".")[0]
                    path = canonical(alias.name) if alias.asname else "triton"
                    found[local] = path if found.get(local, path) == path else None
            continue
        if cls is ast.ImportFrom:
            if stmt.module and not stmt.level and stmt.module.split(".")[0] == "triton":
                for alias in stmt.names:
                    if alias.name != "*":
                        local, path = alias.asname or alias.name, canonical(f"{stmt.module}.{alias.name}")
                        found[local] = path if found.get(local, path) == path else None
            continue
        for name in _BODY_FIELDS:
            children = getattr(stmt, name, None)
            if children:
                stack.extend(c for c in children if isinstance(c, ast.AST))
    return {k: v for k, v in found.items() if v is not None}


class ImportMap:
    """Module-level names bound by imports (anywhere at module level: also inside try/if)
    and by simple aliases (`libdevice = tl.extra.cuda.libdevice`).

    With a `workspace` (a `WorkspaceIndex`) and the file's `path`, a name imported from another
    module of the same code base resolves through it: `from vllm.triton_utils import tl` binds
    `tl` to `triton.language`, `from .utils import exp` (`exp = tl.exp` there) to
    `triton.language.exp`, an imported `@triton.jit` helper to its dotted definition path (see
    `helper`), an imported literal to its value (see `constant`). A module that cannot be found
    falls back to `workspace_index.guess_triton` (e.g. `tl` from anywhere is triton.language)."""

    def __init__(self, tree: ast.Module | None, workspace=None, path: str | None = None):
        self.names: dict[str, str] = {}
        self.workspace = workspace
        self.path = path
        self._helpers: dict[str, object] = {}     # local name -> HelperDef (imported helpers)
        self._constants: dict[str, ast.expr] = {}  # local name -> literal (imported constants)
        self._plain_constants: set[str] = set()    # those bound there as plain values, not tl.constexpr
        self._modules: dict[str, object] = {}     # local name -> location of a workspace module
        # node -> resolve(node): rules ask about the same callee many times (25 rules, each
        # following data flow); the tree does not change while it is linted
        self._resolved: dict[ast.AST, str | None] = {}
        self._tl_names: dict[ast.AST, str | None] = {}   # `tl_name`'s answers, per node
        if tree is None:
            return
        from tritonify.diagnostics.workspace_index import guess_triton

        self._guess = guess_triton
        if workspace is not None and not (path and workspace.can_resolve_from(path)):
            workspace = self.workspace = None   # text with no file behind it: guesses only
        for node in self._module_level(tree.body):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self._bind(alias.asname, alias.name, None, None)
                    else:
                        top = alias.name.split(".")[0]
                        if top not in self.names or top == "triton":
                            self.names[top] = top
                        if top != "triton" and workspace is not None and path:
                            t = workspace.resolve(top, path)
                            if t is not None and t.kind == "module":
                                self._modules[top] = t.location
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name == "*":
                        self._bind_star(node)
                        continue
                    local = alias.asname or alias.name
                    if node.level:
                        module = "." * node.level + (node.module or "")
                        self._bind(local, f"{module}.{alias.name}" if node.module else module + alias.name,
                                   (node.level, node.module), alias.name)
                    elif node.module:
                        self._bind(local, f"{node.module}.{alias.name}", None, alias.name)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                target = node.targets[0].id
                chain = alias_chain(node.value)
                # the map is still growing: not memoised
                value = self._resolve_path(".".join(chain)) if chain else None
                if value and value.split(".")[0] in ("triton", "torch"):
                    self.names[target] = value
                    self._helpers.pop(target, None)
        if not any(p == "triton" or p.startswith("triton.") for p in self.names.values()):   # none at module level
            for local, path in _nested_triton_imports(tree).items():
                self.names.setdefault(local, path)

    def _bind(self, local: str, raw: str, relative: tuple[int, str | None] | None, name: str | None) -> None:
        """Bind `local` to what the import `raw` gives (`relative`: (level, module) of a
        `from . import`). A binding that resolves to Triton is not undone by a later one that
        does not (`if HAS_TRITON: import triton / else: from .stub import triton`)."""
        previous = self.names.get(local)
        keep_previous = previous is not None and previous.split(".")[0] == "triton"
        if raw.split(".")[0] == "triton":
            self.names[local] = canonical(raw)
            self._helpers.pop(local, None)
            return
        target = None
        ws = self.workspace
        if ws is not None and self.path:
            try:
                if relative is not None:
                    target = ws.resolve_relative(self.path, relative[0], relative[1], name)
                else:
                    target = ws.resolve(raw, self.path)
            except (OSError, ValueError, RecursionError):
                target = None
        if target is not None and target.kind == "triton":
            self.names[local] = target.path
            self._helpers.pop(local, None)
            return
        if keep_previous:
            return
        if target is None:
            module = raw.rpartition(".")[0] if name else raw
            guess = self._guess(module, name) if name else None
            guess = guess or self._guess(module, local)
            if guess is not None:
                self.names[local] = guess
                return
        if relative is not None and ws is not None:   # `.math.LOG2E` -> `pkg.utils.math.LOG2E`
            try:
                base = ws.absolute_name(self.path, relative[0], relative[1])
            except (OSError, ValueError):
                base = ""
            if base:
                raw = f"{base}.{name}"
        self.names[local] = raw
        if target is None:
            return
        if target.kind == "helper":
            self.names[local] = target.path
            self._helpers[local] = target.helper
        elif target.kind == "constant":
            self._constants[local] = target.node
            if target.plain:
                self._plain_constants.add(local)
        elif target.kind == "module":
            self._modules[local] = target.location

    def _bind_star(self, node: ast.ImportFrom) -> None:
        """`from pkg.compat import *`: the names a workspace module exports."""
        ws = self.workspace
        if ws is None or (not node.level and (not node.module or node.module.split(".")[0] == "triton")):
            return
        try:
            names = ws.star_names(self.path, node.level, node.module or "")
        except (OSError, ValueError, RecursionError):
            return
        prefix = "." * node.level + (node.module or "")
        for name in names:
            if name in self.names:
                continue   # an explicit import wins whatever the order (rare, and simpler)
            raw = f"{prefix}.{name}" if node.module else prefix + name
            self._bind(name, raw, (node.level, node.module) if node.level else None, name)

    def helper(self, node: ast.AST):
        """The `HelperDef` (a `@triton.jit` function of another workspace module) that a
        callee expression names, or None."""
        if isinstance(node, ast.Name):
            return self._helpers.get(node.id)
        path = dotted(node)
        if path is None or self.workspace is None:
            return None
        head, _, rest = path.partition(".")
        if head in self._modules and rest:
            t = self.workspace.resolve_chain(self._modules[head], tuple(rest.split(".")))
            return t.helper if t is not None and t.kind == "helper" else None
        return None

    def imported_constants(self) -> dict[str, ast.expr]:
        """Local name -> literal, for every constant imported from a workspace module."""
        return dict(self._constants)

    def imported_plain_values(self) -> frozenset[str]:
        """Local names of the imported constants that their module binds as plain Python values
        (`LOG2E = 1.44`, not `tl.constexpr(1.44)`): a kernel cannot read them (TRI020)."""
        return frozenset(self._plain_constants)

    def constant(self, node: ast.AST) -> ast.expr | None:
        """The literal an imported constant name stands for (`LOG2E` from another module)."""
        if isinstance(node, ast.Name):
            return self._constants.get(node.id)
        return None

    @staticmethod
    def _module_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
        for stmt in body:
            yield stmt
            if isinstance(stmt, ast.Try) or (hasattr(ast, "TryStar") and isinstance(stmt, getattr(ast, "TryStar"))):
                yield from ImportMap._module_level(stmt.body)
                for h in stmt.handlers:
                    yield from ImportMap._module_level(h.body)
                yield from ImportMap._module_level(stmt.orelse)
                yield from ImportMap._module_level(stmt.finalbody)
            elif isinstance(stmt, ast.If):
                yield from ImportMap._module_level(stmt.body)
                yield from ImportMap._module_level(stmt.orelse)

    def resolve(self, node: ast.AST) -> str | None:
        """Canonical dotted path of an expression, or None when it is not a name chain.

        Names that no import binds resolve to themselves (`tanh` -> "tanh"), so rules can
        still recognise local helpers by name."""
        try:
            return self._resolved[node]
        except KeyError:
            pass
        except TypeError:  # pragma: no cover - an unhashable stand-in for a node
            return self._resolve(node)
        path = self._resolved[node] = self._resolve(node)
        return path

    def _resolve(self, node: ast.AST) -> str | None:
        path = dotted(node)
        if path is None:
            return None
        return self._resolve_path(path)

    def _resolve_path(self, path: str) -> str:
        head, _, rest = path.partition(".")
        if head in self.names:
            if rest and head in self._modules:   # `utils.exp` with `from pkg import utils`
                t = self.workspace.resolve_chain(self._modules[head], tuple(rest.split(".")))
                if t is not None and t.kind in ("triton", "helper"):
                    return t.path
            base = self.names[head]
            return canonical(f"{base}.{rest}" if rest else base)
        return canonical(path)

    def aliases_of(self, module: str) -> set[str]:
        """Local names bound to a module (e.g. {'tl'} for triton.language)."""
        return {n for n, p in self.names.items() if p == module}


def tl_name(imports: ImportMap, node: ast.AST) -> str | None:
    """`load` for `tl.load(...)`'s callee (any alias of triton.language), else None.
    Sub-modules are kept: `math.rsqrt`, `extra.libdevice.tanh` is reported as None
    (use `libdevice_name`)."""
    cache = getattr(imports, "_tl_names", None)
    if cache is not None:
        try:
            return cache[node]
        except (KeyError, TypeError):
            pass
    path = imports.resolve(node)
    name = path[len(TL) + 1:] if path and path.startswith(TL + ".") and not path.startswith(LIBDEVICE + ".") else None
    if cache is not None:
        try:
            cache[node] = name
        except TypeError:  # pragma: no cover - an unhashable stand-in for a node
            pass
    return name


def libdevice_name(imports: ImportMap, node: ast.AST) -> str | None:
    """`tanh` for any libdevice import path's `tanh`, else None."""
    path = imports.resolve(node)
    if path and path.startswith(LIBDEVICE + "."):
        return path[len(LIBDEVICE) + 1:]
    return None


def call_path(imports: ImportMap, call: ast.AST) -> str | None:
    """Canonical path of a call's callee."""
    if isinstance(call, ast.Call):
        return imports.resolve(call.func)
    return None


def keyword(call: ast.Call, name: str) -> ast.keyword | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw
    return None


@dataclass
class Param:
    name: str
    node: ast.arg
    constexpr: bool
    default: ast.expr | None

    @cached_property
    def annotation(self) -> str | None:
        """The annotation's source text (`tl.constexpr`), made when first read: few rules ask."""
        return _unparse(self.node.annotation)


@dataclass
class Kernel:
    """A Triton JIT function."""

    node: ast.FunctionDef
    jit: ast.expr | None = None             # the decorator or call that made it a kernel
    autotune: ast.Call | None = None        # @triton.autotune(...) call, if any
    heuristics: ast.Call | None = None      # @triton.heuristics(...) call, if any
    params: list[Param] = field(default_factory=list)
    is_helper: bool = False                 # called from another kernel (constexpr-ness inherited)

    @property
    def name(self) -> str:
        return self.node.name

    @cached_property
    def param_names(self) -> list[str]:
        return [p.name for p in self.params]

    @cached_property
    def constexpr_names(self) -> set[str]:
        names = {p.name for p in self.params if p.constexpr}
        # autotune configs and heuristics supply constexprs by name
        for call in (self.autotune, self.heuristics):
            names |= _config_keys(call)
        return names

    def param(self, name: str) -> Param | None:
        for p in self.params:
            if p.name == name:
                return p
        return None

    @cached_property
    def nodes(self) -> list[ast.AST]:
        """Every node of the kernel's body (not its decorators or signature), walked once."""
        out: list[ast.AST] = []
        for stmt in self.node.body:
            out.extend(walk_nodes(stmt))
        return out

    @cached_property
    def call_nodes(self) -> list[ast.Call]:
        call = ast.Call
        return [n for n in self.nodes if n.__class__ is call]   # parsed nodes are never subclasses

    @cached_property
    def returns_value(self) -> bool:
        """Whether the body has a `return` with a value (a device function called from kernels)."""
        return any(n.value is not None for n in self.nodes if n.__class__ is ast.Return)

    def walk(self) -> Iterator[ast.AST]:
        """Every node of the kernel's body (cached: rules share one walk)."""
        return iter(self.nodes)

    def calls(self) -> Iterator[ast.Call]:
        """Every call in the kernel's body (cached)."""
        return iter(self.call_nodes)


def _config_keys(call: ast.Call | None) -> set[str]:
    """Names that `triton.Config({...})` dicts or `heuristics({...})` set."""
    keys: set[str] = set()
    if call is None:
        return keys
    for node in walk_nodes(call):
        if isinstance(node, ast.Dict):
            for k in node.keys:
                if isinstance(k, ast.Constant) and isinstance(k.value, str):
                    keys.add(k.value)
    return keys


def _is_constexpr_annotation(imports: ImportMap, ann: ast.expr | None) -> bool:
    if ann is None:
        return False
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        return ann.value.endswith("constexpr")
    path = imports.resolve(ann)
    return bool(path) and (path == f"{TL}.constexpr" or path.endswith(".constexpr") or path == "constexpr")


def _unparse(node: ast.AST | None) -> str | None:
    if node is None:
        return None
    try:
        return ast.unparse(node)
    except Exception:  # pragma: no cover - unparse is total on parsed trees
        return None


def _params(imports: ImportMap, fn: ast.FunctionDef) -> list[Param]:
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    out = [
        Param(a.arg, a, _is_constexpr_annotation(imports, a.annotation), d)
        for a, d in zip(positional, defaults)
    ]
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        out.append(Param(a.arg, a, _is_constexpr_annotation(imports, a.annotation), d))
    return out


def _jit_like(imports: ImportMap, node: ast.expr) -> str | None:
    """'jit', 'autotune' or 'heuristics' when a decorator (or callee) is that Triton API."""
    target = node.func if isinstance(node, ast.Call) else node
    path = imports.resolve(target)
    if not path:
        return None
    for kind in ("jit", "autotune", "heuristics"):
        if path in (f"triton.{kind}", f"triton.runtime.{kind}", f"triton.runtime.jit.{kind}"):
            return kind
    # `@jit` with no import we could see (e.g. star import): accept the bare name `jit` only
    # when the module imports triton at all; that is checked by the caller.
    if path == "jit":
        return "jit?"
    return None


def find_kernels(tree: ast.Module | None, imports: ImportMap | None = None,
                 nodes: list[ast.AST] | None = None, walk: ModuleWalk | None = None) -> list[Kernel]:
    """All Triton kernels in a module, in source order (nested and method definitions too).
    `walk`: the module's `walk_module` (its calls, subscripts and definitions are used as they are)."""
    if tree is None:
        return []
    imports = imports or ImportMap(tree)
    uses_triton = any(p.split(".")[0] == "triton" for p in imports.names.values())
    kernels: dict[ast.FunctionDef, Kernel] = {}
    functions: dict[str, ast.FunctionDef] = {}
    if walk is None:
        calls: list[ast.Call] = []
        subscripts: list[ast.Subscript] = []
        definitions: list[ast.AST] = []
        call_type, subscript_type, function_types = ast.Call, ast.Subscript, (ast.FunctionDef, ast.AsyncFunctionDef)
        for node in (nodes if nodes is not None else walk_nodes(tree)):  # one walk collects everything below
            node_type = node.__class__  # parsed nodes are never subclasses: `is` is isinstance here, and cheaper
            if node_type is call_type:
                calls.append(node)
            elif node_type is subscript_type:
                subscripts.append(node)
            elif node_type in function_types:
                definitions.append(node)
    else:
        calls, subscripts, definitions = walk.calls, walk.subscripts, walk.functions
    for node in definitions:
        functions.setdefault(node.name, node)
        kernel = None
        for dec in node.decorator_list:
            kind = _jit_like(imports, dec)
            if kind == "jit?" and not uses_triton:
                kind = None
            if kind in ("jit", "jit?"):
                kernel = kernel or Kernel(node)
                kernel.jit = dec
            elif kind == "autotune" and isinstance(dec, ast.Call):
                kernel = kernel or Kernel(node)
                kernel.autotune = dec
            elif kind == "heuristics" and isinstance(dec, ast.Call):
                kernel = kernel or Kernel(node)
                kernel.heuristics = dec
        if kernel is not None and kernel.jit is not None:
            kernels[node] = kernel

    # Call forms: f = triton.jit(f); g = triton.jit(do_not_specialize=[..])(f);
    # k = triton.autotune(configs=..., key=...)(triton.jit(f))
    for node in calls:
        first = node.args[0] if node.args else None
        if not (first.__class__ is ast.Name and first.id in functions):
            continue  # only a call on a function defined here can make it a kernel: resolve no callee
        kind = _jit_like(imports, node.func)  # also the curried triton.jit(...)(f)
        if kind in ("jit", "jit?") and (kind == "jit" or uses_triton):
            for arg in node.args[:1]:
                if isinstance(arg, ast.Name) and arg.id in functions:
                    fn = functions[arg.id]
                    if fn not in kernels:
                        kernels[fn] = Kernel(fn, jit=node)

    result = sorted(kernels.values(), key=lambda k: (k.node.lineno, k.node.col_offset))
    for k in result:
        k.params = _params(imports, k.node)
    # A kernel called by name from another kernel is a helper: its block sizes may be plain
    # parameters because constexpr-ness is inherited from the caller.
    names = {k.name for k in result}
    called: set[str] = set()
    for k in result:
        for call in k.calls():
            if isinstance(call.func, ast.Name) and call.func.id in names and call.func.id != k.name:
                called.add(call.func.id)
    launched = {path for path in map(dotted, (n.value for n in subscripts)) if path in names}
    for k in result:
        k.is_helper = k.name in called and k.name not in launched
    return result
