"""How a kernel is launched, across the workspace: the functions that run outside `torch.compile`.

Whether a Triton kernel runs under `torch.compile` decides what some rules mean: a Python float
argument is specialised as fp32 when the kernel is launched eagerly and as fp64 when Inductor
launches it (TRI016). A file rarely says which: the launcher (`chunk_gla_fwd`, `decode_attention_fwd`)
is called from an entry point that another module wraps in `torch.compiler.disable(...)` or
registers as a custom op, which `torch.compile` calls as an opaque box (its body runs eagerly).

`eager_names(path)` answers, for the file at `path`, the absolute dotted names that its code base
runs eagerly. Every module of the file's top package whose text mentions one of the markers below
is parsed (`ast`, never imported); there:

* a function decorated with `torch.compiler.disable` / `torch._dynamo.disable` (with or without
  arguments), or registered as an opaque operator (`torch.library.custom_op`, `torch.library.impl`,
  `register_kernel`, sglang's `register_custom_op`), is eager;
* a name passed to `torch.compiler.disable(f)` / `torch._dynamo.disable(f)` /
  `direct_register_custom_op(..., op_func=f)`, or to a registration called as a decorator
  (`torch.library.custom_op(...)(f)`, `register_kernel("ns::op", "xpu")(f)`), is eager;
* the methods of an attention implementation class (a class named `...Impl` with a base named
  `...Impl`/`...ImplBase`, where the class, a base or the module names attention or MLA: vLLM's
  `AttentionImpl` family) are eager: vLLM calls them inside its opaque unified-attention custom op
  (`unified_attention_with_output`, `direct_register_custom_op`), never in the compiled graph;
* the functions an eager function calls by an imported name (one hop: `decode_attention_fwd(...)`
  inside a registered op) are eager too;
* a decorator that returns `torch.compiler.disable(...)` (directly, or through a function or method
  of its module that does: fla's `@dispatch("attn")` returns its registry's
  `torch.compiler.disable(wrapper)`) is recorded as `@module.name` (`DECORATOR`): the functions it
  decorates run eagerly (`disabling_decorator`).

Names are written as the code imports them (`pkg.ops.attention.decode_attention_fwd`), so a
package that re-exports a function from a submodule is matched by `is_eager`: the function's
name, under a module that is the file's own module or a package above it. The rule then follows
the calls inside the kernel's file from those entry points (`eager_functions`). A `torch.library.
triton_op` is not opaque (Inductor traces into it and launches the kernel itself) and is not read.

Per top package the modules are listed once per process and again after `_RESCAN_S` seconds
(the editor's files change), then reading only the files whose size or modification time changed;
it lists at most `_MAX_FILES` files and skips folders that are not the project's (virtual
environments, `site-packages`, `node_modules`, hidden folders). Listing reads each module's
bytes once for the marker screen; a module that passes is parsed only when a caller asks about a
function whose name is one of its identifiers (`eager_names(..., among=...)`): the first file of
a large package (vLLM: 84 of 453 modules mention a marker) parses the few that can name its
functions, not all of them.
"""
from __future__ import annotations

import ast
import re
import threading
import time
import unicodedata
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from tritonify.diagnostics.triton_ast import dotted, walk_nodes
from tritonify.infra.bounded_read import read_bytes

MARKERS = re.compile(rb"compiler\.disable|_dynamo\.disable|custom_op|register_kernel|library\.impl|class \w+Impl\b")
DISABLE = frozenset({"torch.compiler.disable", "torch._dynamo.disable", "compiler.disable", "_dynamo.disable"})
OPAQUE_DECORATORS = frozenset({"custom_op", "register_custom_op", "register_kernel"})
OPAQUE_CALLS = frozenset({"direct_register_custom_op", "register_custom_op"})
_SKIP_DIRS = frozenset({"site-packages", "node_modules", "__pycache__", "build", "dist"})
_MAX_FILES = 20_000
_MAX_BYTES = 2_000_000
_RESCAN_S = 60.0

_lock = threading.Lock()
_cache: dict[Path, tuple[float, list]] = {}   # root -> (when listed, its screened modules)


def _last(name: str | None) -> str:
    return (name or "").rsplit(".", 1)[-1]


def scan_root(path: Path, text: str | None = None) -> Path:
    """The file's top package folder: the highest of the last folder of its `__init__.py` chain
    and the nearest ancestor whose name the file imports absolutely (`from sglang.srt import ...`
    in `.../sglang/kernels/ops/x.py`: a tree whose `__init__.py` files are missing in places)."""
    d = path.parent
    top = None
    while (d / "__init__.py").is_file() and d.parent != d:
        top = d
        d = d.parent
    if text is None:
        try:
            data = read_bytes(path, _MAX_BYTES) if path.is_file() else b""
        except OSError:
            data = b""
        text = data.decode("utf-8", "replace") if data else ""
    heads = set(re.findall(r"^\s*(?:from|import)\s+([A-Za-z_]\w*)", text, re.M))
    named = next((anc for anc in path.parents if anc.name in heads), None)
    found = [c for c in (top, named) if c is not None]
    if not found:
        return path.parent
    return min(found, key=lambda c: len(c.parts))


def module_of(path: Path, root: Path) -> str:
    """Dotted module name of `path` relative to the folder above its top package `root`."""
    try:
        rel = path.with_suffix("").relative_to(root.parent)
    except ValueError:
        return path.stem
    parts = list(rel.parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@dataclass
class _Imports:
    module: str
    is_package: bool
    names: dict[str, str]           # local name -> absolute dotted name

    def absolute(self, local: str) -> str:
        head, _, rest = local.partition(".")
        base = self.names.get(head)
        if base is None:
            return ""
        return f"{base}.{rest}" if rest else base


def _imports(nodes: list[ast.AST], module: str, is_package: bool) -> _Imports:
    names: dict[str, str] = {}
    here = module.split(".") if module else []
    for node in nodes:
        if isinstance(node, ast.Import):
            for a in node.names:
                names[(a.asname or a.name).split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here if is_package else here[:-1]
                if node.level > 1:
                    base = base[: len(base) - (node.level - 1)]
                prefix = ".".join([*base, *(node.module.split(".") if node.module else [])])
            else:
                prefix = node.module or ""
            for a in node.names:
                if a.name != "*":
                    names[a.asname or a.name] = f"{prefix}.{a.name}" if prefix else a.name
    return _Imports(module, is_package, names)


def _resolve(imps: _Imports, expr: ast.AST) -> str:
    name = dotted(expr)
    if not name:
        return ""
    return imps.absolute(name) or name


def _is_disable(path: str) -> bool:
    return path in DISABLE or path.endswith((".compiler.disable", "._dynamo.disable"))


_IMPL_BASE = re.compile(r"\w*Impl(?:Base)?$")
_ATTENTION = re.compile(r"attention|attn|mla", re.I)


def attention_impl(cls: ast.ClassDef, module: str) -> bool:
    """A class of vLLM's attention-implementation family (`FlashInferImpl(AttentionImpl)`,
    `TritonMLAImpl(MLACommonImpl[...])`): run inside the opaque unified-attention op."""
    if not cls.name.endswith("Impl"):
        return False
    bases = [_last(dotted(b.value if isinstance(b, ast.Subscript) else b)) for b in cls.bases]
    if not any(_IMPL_BASE.fullmatch(b) for b in bases if b):
        return False
    return any(_ATTENTION.search(n) for n in [cls.name, module, *bases] if n)


DECORATOR = "@"


def _disabling(nodes: list[ast.AST], imps: _Imports) -> set[str]:
    """Names of the functions and methods of a module that return `torch.compiler.disable(...)`,
    directly or by returning what another of them returns (a fixpoint over the module)."""
    funcs = [n for n in nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    returns: dict[int, list[ast.expr]] = {}
    for fn in funcs:
        returns[id(fn)] = [r.value for r in walk_nodes(fn) if isinstance(r, ast.Return) and r.value is not None]
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for fn in funcs:
            if fn.name in found:
                continue
            for value in returns[id(fn)]:
                target = value.func if isinstance(value, ast.Call) else value
                if _is_disable(_resolve(imps, target)) or _last(dotted(target)) in found:
                    found.add(fn.name)
                    changed = True
                    break
    return found


def disabling_decorator(path: str, names: frozenset[str]) -> bool:
    """The decorator at dotted `path` (`fla.backends.dispatch`) is one that returns
    `torch.compiler.disable(...)`, also through a package re-exporting it."""
    if not path or "." not in path:
        return False
    if DECORATOR + path in names:
        return True
    parts, last = path.split(".")[:-1], path.rsplit(".", 1)[1]
    return any(f"{DECORATOR}{'.'.join(parts[:i])}.{last}" in names for i in range(1, len(parts)))


def _eager_in_module(tree: ast.Module, nodes: list[ast.AST], imps: _Imports) -> set[str]:
    defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    eager_defs: list[ast.AST] = []
    out: set[str] = set()
    disabling = _disabling(nodes, imps)
    out |= {f"{DECORATOR}{imps.module}.{name}" for name in defs if name in disabling}
    for cls in tree.body:
        if isinstance(cls, ast.ClassDef) and attention_impl(cls, imps.module):
            eager_defs += [n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]

    def local_or_imported(expr: ast.AST) -> None:
        if isinstance(expr, ast.Name) and expr.id in defs:
            out.add(f"{imps.module}.{expr.id}")
            eager_defs.append(defs[expr.id])
        else:
            target = _resolve(imps, expr)
            if target and "." in target:
                out.add(target)

    for node in nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in node.decorator_list:
                path = _resolve(imps, dec.func if isinstance(dec, ast.Call) else dec)
                if _is_disable(path) or _last(path) in OPAQUE_DECORATORS or path == "torch.library.impl":
                    if node in defs.values():
                        out.add(f"{imps.module}.{node.name}")
                    eager_defs.append(node)
                    break
        elif isinstance(node, ast.Call):
            path = _resolve(imps, node.func)
            if _is_disable(path) and node.args:
                local_or_imported(node.args[0])
            elif _last(path) in OPAQUE_CALLS:
                for f in [kw.value for kw in node.keywords if kw.arg == "op_func"] + node.args[1:2]:
                    local_or_imported(f)
            elif isinstance(node.func, ast.Call) and node.args and (
                    _last(_resolve(imps, node.func.func)) in OPAQUE_DECORATORS
                    or _resolve(imps, node.func.func) == "torch.library.impl"):
                local_or_imported(node.args[0])      # custom_op("ns::op", ...)(f), register_kernel("ns::op", "xpu")(f)
    # one hop: what the eager functions call by an imported name
    for fn in eager_defs:
        for call in walk_nodes(fn):
            if isinstance(call, ast.Call):
                head = dotted(call.func)
                if head and head.split(".")[0] in imps.names:
                    target = imps.absolute(head)
                    if target:
                        out.add(target)
    return out


def _module_names(p: Path, root: Path) -> frozenset[str]:
    """The eager names one module contributes (nothing where it mentions no marker)."""
    try:
        data = read_bytes(p, _MAX_BYTES)
    except OSError:
        return frozenset()
    if not data or not MARKERS.search(data):
        return frozenset()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(data)
        nodes = walk_nodes(tree)
        module = module_of(p, root)
        return frozenset(_eager_in_module(tree, nodes, _imports(nodes, module, p.name == "__init__.py")))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()


@dataclass
class _FileEntry:
    """What the scan knows of one module, for the (mtime_ns, size) it was read at."""
    stamp: tuple[int, int]
    words: frozenset[str] | None    # its identifiers where its text mentions a marker, else None
    defs: frozenset[str]            # the functions its text defines (`defined_functions`)
    names: frozenset[str] | None    # the eager names it contributes; None: not parsed yet


def _identifiers(data: bytes) -> frozenset[str]:
    """Every identifier-like word of the text. Python reads identifiers NFKC-normalised (a
    fullwidth `ｆ` is `f`), so a text that is not ASCII is normalised first: a name the module
    contributes is then always one of these words."""
    if data.isascii():
        return frozenset(_WORD.findall(data.decode("ascii")))
    text = unicodedata.normalize("NFKC", data.decode("utf-8", "replace"))
    return frozenset(_WORD_UNICODE.findall(text))


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WORD_UNICODE = re.compile(r"[^\W\d]\w*")


def _screen(p: Path) -> tuple[frozenset[str] | None, frozenset[str]]:
    """(the module's identifiers if its text mentions a marker (it may name something eager),
    else None (it names nothing: never parsed); the functions it defines)."""
    try:
        data = read_bytes(p, _MAX_BYTES)
    except OSError:
        return None, frozenset()
    if not data or not MARKERS.search(data):
        return None, frozenset()
    return _identifiers(data), defined_functions(data.decode("utf-8", "replace"))


# per file: what was read of it, kept while its (mtime_ns, size) stays the same
_per_file: dict[Path, _FileEntry] = {}


def _files(root: Path) -> list[tuple[Path, tuple[int, int]]]:
    """The modules of the project under `root` with their (mtime_ns, size)."""
    out = []
    count = 0
    for p in sorted(root.rglob("*.py")):
        count += 1
        if count > _MAX_FILES:
            break
        rel = p.relative_to(root).parts
        if any(part.startswith(".") or part in _SKIP_DIRS for part in rel[:-1]):
            continue
        try:
            st = p.stat()
        except OSError:
            continue
        out.append((p, (st.st_mtime_ns, st.st_size)))
    return out


def _entries(root: Path) -> list[tuple[Path, _FileEntry]]:
    """The root's modules that mention a marker, each screened once per (mtime_ns, size)."""
    out = []
    for p, stamp in _files(root):
        with _lock:
            entry = _per_file.get(p)
        if entry is None or entry.stamp != stamp:
            entry = _FileEntry(stamp, *_screen(p), None)
            with _lock:
                _per_file[p] = entry
        if entry.words is not None:
            out.append((p, entry))
    return out


def _names_of(p: Path, root: Path, entry: _FileEntry) -> frozenset[str]:
    if entry.names is None:
        entry.names = _module_names(p, root)
    return entry.names


def _root_entries(root: Path) -> list[tuple[Path, _FileEntry]]:
    """The root's screened modules, listed again (a stat of each) after `_RESCAN_S` seconds."""
    now = time.monotonic()
    with _lock:
        hit = _cache.get(root)
    if hit is not None and now - hit[0] <= _RESCAN_S:
        return hit[1]
    entries = _entries(root) if root.is_dir() else []
    with _lock:
        _cache[root] = (now, entries)
    return entries


# every `def` at the start of a line (a superset of the module's top-level functions, which is
# all that `is_eager` is asked about; a method's `def` is indented): `def f`, `async def f`, a
# form feed before them, line continuations between the words
_GAP = r"(?:[ \t\f]|\\\r?\n)+"
_DEFS = re.compile(rf"^\f*(?:async{_GAP})?def{_GAP}([^\W\d]\w*)", re.MULTILINE)


def defined_functions(text: str) -> frozenset[str]:
    """The names of the functions a module's text defines at its top level (and any other `def`
    that starts a line), NFKC-normalised as Python reads identifiers."""
    names = _DEFS.findall(text)
    if not text.isascii():
        names = [unicodedata.normalize("NFKC", n) for n in names]
    return frozenset(names)


_DECORATOR = re.compile(r"^[ \t\f]*@[ \t]*(.*)$", re.MULTILINE)
_DOTTED_HEAD = re.compile(r"[^\W\d]\w*(?:[ \t]*\.[ \t]*[^\W\d]\w*)*")
_AS_BINDING = re.compile(r"\b(\w+)[ \t]+as[ \t]+(\w+)\b")


def asked_names(text: str) -> tuple[frozenset[str], frozenset[str]] | None:
    """What a launch-context rule may ask about for this file, as last parts of names: (its
    functions, `defined_functions`; its decorators, as written, `@pkg.backends.dispatch(...)`:
    `dispatch`, and as imported, `from pkg import real as dispatch`: `real`). None when a
    decorator cannot be read from its line (`@(`, a continuation): then every name is wanted."""
    decorators = set()
    heads = set()
    for m in _DECORATOR.finditer(text):
        expr = m.group(1).split("#")[0].rstrip()
        prefix = _DOTTED_HEAD.match(expr)
        if prefix is None or expr.endswith("\\"):
            return None
        parts = [p.strip() for p in prefix.group().split(".")]
        decorators.add(parts[-1])
        heads.add(parts[0])
    if heads:
        for m in _AS_BINDING.finditer(text):   # `real as dispatch`: what `@dispatch` is imported as
            if m.group(2) in heads:
                decorators.add(m.group(1))
    if not text.isascii():
        decorators = {unicodedata.normalize("NFKC", n) for n in decorators}
    return defined_functions(text), frozenset(decorators)


def eager_names(path: str | Path, text: str | None = None,
                among: Iterable[str] | None = None) -> tuple[str, frozenset[str]]:
    """(the file's own dotted module name, the dotted names its code base runs eagerly whose last
    part is one of `among`: by default `asked_names(text)`, the file's functions and decorators;
    a caller that asks about other names passes them).

    That is every name `is_eager(module, f, names)` or `disabling_decorator(path, names)` reads
    for such an `f` or path, so they answer as they would with every name of the code base; and a
    module can name `x.f` only where `f` is one of its identifiers, so only the modules whose text
    mentions one of `among` are parsed: the first file of a large package parses the few that can
    name its functions, not all of them."""
    p = Path(path).resolve()
    if text is None:
        try:
            data = read_bytes(p, _MAX_BYTES) if p.is_file() else b""
        except OSError:
            data = b""
        text = data.decode("utf-8", "replace") if data else ""
    root = scan_root(p, text)
    if among is not None:
        functions = decorators = frozenset(among)
        screen_decorators = False
    else:
        asked = asked_names(text)
        if asked is None:
            out = set()
            for q, entry in _root_entries(root):
                out |= _names_of(q, root, entry)
            return module_of(p, root), frozenset(out)
        functions, decorators = asked
        screen_decorators = True
    out = set()
    for q, entry in _root_entries(root):
        # a decorator that returns torch.compiler.disable is named `@module.f` for a function
        # `f` the module defines; any other name ends in one of the module's identifiers
        wanted = not functions.isdisjoint(entry.words) or not decorators.isdisjoint(
            entry.defs if screen_decorators else entry.words)
        if wanted:
            out.update(n for n in _names_of(q, root, entry)
                       if _last(n) in (decorators if n.startswith("@") else functions))
    return module_of(p, root), frozenset(out)


def is_eager(module: str, function: str, names: frozenset[str]) -> bool:
    """`module.function` is named eager, directly or through a package above `module` that
    re-exports it (`pkg.ops.attention.f` for `pkg.ops.attention.decode.f`)."""
    if f"{module}.{function}" in names:
        return True
    parts = module.split(".")
    return any(f"{'.'.join(parts[:i])}.{function}" in names for i in range(1, len(parts)))
