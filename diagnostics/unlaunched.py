"""Which `@triton.jit` functions of a module nothing in it launches or calls.

Triton compiles a kernel at its first launch, so a kernel that cannot compile breaks a program only
once something launches it. A rule whose findings say "this does not compile" (`Rule.compile_break`)
therefore reports an error where the function is launched or called and a warning, saying so, where
nothing in its module does (`PythonContext.finding`): code being written before its launcher, or an
earlier attempt left beside the kernel that is used.

A function counts as unlaunched when its module names it nowhere outside its own body (no launch, no
call, no alias, no string naming it, no attribute of that name), or names it only inside functions
that are unlaunched themselves; and either it is private (`_name`: no other module imports it by that
name) or the module holds host code of its own (it launches or calls another jit function, or it
defines host functions or classes: its launchers are here, so a kernel it never names is not one they
launch). A kernel-only module, whose launchers live in another module, keeps its errors: in its
public functions and in every function they call.

An unlaunched function is dead (`dead_functions`) when the module's host code does launch or call
another of its jit functions: the program here is written and runs its kernels, and this one is not
among them (an earlier version left beside the one used, a helper nothing calls any more). A
compile break there never reaches anyone, so it is not reported at all; it is reported, as an error,
once a launch or call of the function is written. A public one counts as dead only when no other
file of its project imports that name or reads it as an attribute (`imported_elsewhere`: the
project's files searched for the names, once per module and process). An unlaunched
function in a module whose host code launches nothing yet (a kernel typed before its launcher)
keeps the warning.
"""
from __future__ import annotations

import ast
import os
import re
from bisect import bisect_right
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Sequence

HOST = ""   # a reference outside every jit function


def unlaunched_functions(kernels: Sequence, module_nodes: Iterable[ast.AST], tree: ast.Module) -> frozenset[str]:
    """The names of the jit functions in `kernels` (triton_ast.Kernel) that nothing launches or calls
    (see the module docstring); `module_nodes`: every node of the module `tree`."""
    return reach(kernels, module_nodes, tree)[0]


def dead_functions(kernels: Sequence, module_nodes: Iterable[ast.AST], tree: ast.Module,
                   path: str | None) -> frozenset[str]:
    """The unlaunched functions of a module whose host code launches or calls some other jit function
    of it, less the public ones another file of the project may import and what they call (see the
    module docstring); `path`: the module's file (None, or no such file: every public one may be
    imported). Empty where the host code launches none."""
    module_nodes = list(module_nodes)
    unlaunched, launches = reach(kernels, module_nodes, tree)
    if not launches or not unlaunched:
        return frozenset()
    public = {name for name in unlaunched if not name.startswith("_")}
    if not public:
        return unlaunched
    imported = imported_elsewhere(path, public) if path and Path(path).is_file() else public
    if not imported:
        return unlaunched
    return reach(kernels, module_nodes, tree, frozenset(imported))[0]


def reach(kernels: Sequence, module_nodes: Iterable[ast.AST], tree: ast.Module,
          roots: frozenset[str] = frozenset()) -> tuple[frozenset[str], bool]:
    """(the unlaunched functions, whether host code names any jit function of the module).
    `roots`: functions to count as launched from elsewhere (imported by another module)."""
    spans = sorted((k.node.lineno, k.node.end_lineno or k.node.lineno, k.name) for k in kernels)
    if not spans:
        return frozenset(), False
    names = {name for _, _, name in spans}
    starts = [start for start, _, _ in spans]

    def enclosing(line: int) -> str:
        """The innermost jit function whose lines hold `line` (HOST outside them all)."""
        found = HOST
        i = bisect_right(starts, line) - 1
        while i >= 0:
            start, end, name = spans[i]
            if start <= line <= end:
                found = name   # nested definitions come later in the sorted spans: keep the last that holds it
                break
            i -= 1
        return found

    referrers: dict[str, set[str]] = {name: set() for name in names}
    for node in module_nodes:
        if isinstance(node, ast.Name):
            named = node.id
        elif isinstance(node, ast.Attribute):
            named = node.attr
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            named = node.value
        else:
            continue
        if named in referrers:
            where = enclosing(getattr(node, "lineno", 0))
            if where != named:
                referrers[named].add(where)

    jit_defs = {id(k.node) for k in kernels}
    holds_launchers = any(HOST in refs for refs in referrers.values()) or any(
        isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and id(stmt) not in jit_defs
        for stmt in tree.body)
    # roots: what host code names; in a module without launchers of its own also every public
    # function (another module may launch it), so that what it calls is reached too
    alive = {name for name, refs in referrers.items()
             if HOST in refs or name in roots or (not holds_launchers and not name.startswith("_"))}
    grew = True
    while grew:
        grew = False
        for name, refs in referrers.items():
            if name not in alive and refs & alive:
                alive.add(name)
                grew = True
    return frozenset(names - alive), any(HOST in refs for refs in referrers.values())


_MAX_FILES = 20_000          # a project larger than this is not scanned: every public name counts as imported
_MAX_FILE_BYTES = 2_000_000


@lru_cache(maxsize=64)
def _imported_in_project(root: str, own: str, names: frozenset[str]) -> frozenset[str] | None:
    """Those of `names` that a `.py` file under `root` other than `own` imports (`from m import name`,
    also in a bracketed list) or reads as an attribute (`mod.name`); None when the project is too large
    to scan. Each file is read once and searched for the names as text; only a file that holds one is
    parsed by the two patterns."""
    from tritonify.infra.bounded_read import read_text

    found: set[str] = set()
    seen = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("node_modules", "__pycache__")]
        for file in files:
            if not file.endswith(".py"):
                continue
            seen += 1
            if seen > _MAX_FILES:
                return None
            path = os.path.join(folder, file)
            if path == own:
                continue
            try:
                text = read_text(path, _MAX_FILE_BYTES, errors="replace")
            except Exception:   # unreadable, too large, a special file: it imports nothing we can see
                continue
            for name in names - found:
                if name in text and (re.search(rf"\.[ \t]*{name}\b", text) or re.search(
                        rf"^[ \t]*from[ \t]+[.\w]+[ \t]+import[ \t]+(\([^)]*\b{name}\b[^)]*\)|[^\n#]*\b{name}\b)",
                        text, re.M)):
                    found.add(name)
            if found == names:
                return frozenset(found)
    return frozenset(found)


def imported_elsewhere(path: str, names: Iterable[str]) -> set[str]:
    """Those of `names` (public jit functions of the module at `path`) that another file of its
    project may import: every one of them where the project cannot be scanned."""
    from tritonify.diagnostics.workspace_index import package_root

    wanted = frozenset(names)
    if not wanted:
        return set()
    try:
        own = Path(path).resolve()
        root = package_root(own)
    except (OSError, ValueError):
        return set(wanted)
    found = _imported_in_project(str(root), str(own), wanted)
    return set(wanted) if found is None else set(found)
