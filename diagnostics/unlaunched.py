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
keeps the warning. Of the dead functions the engine drops the compile breaks of those launched only
where a size guard rules out (below) and of the helpers nothing names at all (`uncalled_helpers`); a
kernel nothing names keeps its warning (it may be one being written, whose launcher is not there yet).

References in host branches a size guard rules out do not count (`unreachable_host_lines`): the
`else` of `if n <= BLOCK:` where the host function binds `BLOCK` once to `triton.next_power_of_2(n)`,
directly or through a function (here or in a workspace module) that returns it so, as Unsloth's and
Liger's `calculate_settings(n)` does. A kernel launched only there is unlaunched.
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
                   path: str | None, unreachable: frozenset[int] = frozenset()) -> frozenset[str]:
    """The unlaunched functions of a module whose host code launches or calls some other jit function
    of it, less the public ones another file of the project may import and what they call (see the
    module docstring); `path`: the module's file (None, or no such file: every public one may be
    imported). Empty where the host code launches none."""
    module_nodes = list(module_nodes)
    unlaunched, launches = reach(kernels, module_nodes, tree, unreachable=unreachable)
    if not launches or not unlaunched:
        return frozenset()
    public = {name for name in unlaunched if not name.startswith("_")}
    if not public:
        return unlaunched
    imported = imported_elsewhere(path, public) if path and Path(path).is_file() else public
    if not imported:
        return unlaunched
    return reach(kernels, module_nodes, tree, frozenset(imported), unreachable)[0]


def reach(kernels: Sequence, module_nodes: Iterable[ast.AST], tree: ast.Module,
          roots: frozenset[str] = frozenset(), unreachable: frozenset[int] = frozenset()) -> tuple[frozenset[str], bool]:
    """(the unlaunched functions, whether host code names any jit function of the module).
    `roots`: functions to count as launched from elsewhere (imported by another module);
    `unreachable`: lines of host code no call can reach (`unreachable_host_lines`), whose references
    do not count."""
    referrers = _referrers(kernels, module_nodes, unreachable)
    if not referrers:
        return frozenset(), False
    names = set(referrers)

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


def _referrers(kernels: Sequence, module_nodes: Iterable[ast.AST],
               unreachable: frozenset[int] = frozenset()) -> dict[str, set[str]]:
    """Jit function name -> where the module names it outside its own body: the jit functions whose
    lines hold a reference (HOST for host code); a name, an attribute or a string counts, a reference
    on an `unreachable` line does not."""
    spans = sorted((k.node.lineno, k.node.end_lineno or k.node.lineno, k.name) for k in kernels)
    if not spans:
        return {}
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
            line = getattr(node, "lineno", 0)
            if line in unreachable:
                continue
            where = enclosing(line)
            if where != named:
                referrers[named].add(where)

    return referrers


def uncalled_helpers(kernels: Sequence, module_nodes: Iterable[ast.AST]) -> frozenset[str]:
    """The jit helpers (functions that return a value: a kernel cannot, so only another jit function
    calls them) that nothing in the module names outside their own bodies: no kernel, no other helper
    (but one uncalled itself), no host code, no `__all__` or other string. A helper is not launched:
    a kernel being written beside it names it as it calls it, so one that nothing names is left over
    (flag-gems' `next_multiple_of`, whose `tl.cidv` never compiles)."""
    referrers = _referrers(kernels, module_nodes)
    helpers = {k.name for k in kernels if _returns_value(k.node)}
    uncalled = {name for name in helpers if not referrers.get(name)}
    grew = True
    while grew:
        grew = False
        for name in helpers - uncalled:
            if referrers[name] <= uncalled:
                uncalled.add(name)
                grew = True
    return frozenset(uncalled)


def _returns_value(fn: ast.AST) -> bool:
    """Whether `fn` has a `return <value>` of its own (not in a nested definition)."""
    todo = list(fn.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Return) and node.value is not None \
                and not (isinstance(node.value, ast.Constant) and node.value.value is None):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))
    return False


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


# ---- host branches a size guard rules out -------------------------------------------------------
_NEXT_POW2 = "triton.next_power_of_2"


def _stores(fn: ast.AST) -> dict[str, list[ast.AST]]:
    """Name -> the nodes that bind it in `fn` (parameters, assignment targets, loop variables ...)."""
    out: dict[str, list[ast.AST]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.arg):
            out.setdefault(node.arg, []).append(node)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            out.setdefault(node.id, []).append(node)
    return out


def _assignment_of(fn: ast.AST, target: ast.Name) -> ast.Assign | None:
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and any(n is target for n in ast.walk(node.targets[0])):
            return node
    return None


def _pow2_operand(call: ast.AST, resolve) -> ast.expr | None:
    """`x` of `triton.next_power_of_2(x)` (through the module's imports), else None."""
    if isinstance(call, ast.Call) and len(call.args) == 1 and not call.keywords and resolve(call.func) == _NEXT_POW2:
        return call.args[0]
    return None


def _returns_pow2_of_param(fn: ast.FunctionDef, resolve) -> dict[int, int]:
    """{index of the returned tuple (0 for a single value) -> index of the parameter}: where every
    `return` of `fn` gives, there, a name bound once to `triton.next_power_of_2(param)` with the
    parameter never rebound (Unsloth's and Liger's `calculate_settings(n)` returns `(BLOCK_SIZE, ...)`
    with `BLOCK_SIZE = triton.next_power_of_2(n)`)."""
    params = [a.arg for a in fn.args.args]
    stores = _stores(fn)
    returns = [n for n in ast.walk(fn) if isinstance(n, ast.Return)]
    if not returns or any(r.value is None for r in returns):
        return {}
    found: dict[int, int] | None = None
    for ret in returns:
        items = ret.value.elts if isinstance(ret.value, ast.Tuple) else [ret.value]
        here = {}
        for i, item in enumerate(items):
            operand = _pow2_operand(item, resolve)
            if operand is None and isinstance(item, ast.Name) and len(stores.get(item.id, ())) == 1:
                bound = _assignment_of(fn, stores[item.id][0])
                if bound is not None and isinstance(bound.targets[0], ast.Name):
                    operand = _pow2_operand(bound.value, resolve)
            if isinstance(operand, ast.Name) and operand.id in params and len(stores.get(operand.id, ())) == 1:
                here[i] = params.index(operand.id)
        found = here if found is None else {i: j for i, j in found.items() if here.get(i) == j}
    return found or {}


def unreachable_host_lines(tree: ast.Module, kernels: Sequence, resolve, function_of) -> frozenset[int]:
    """Lines of host `if` branches that a size guard rules out: `if n <= B: ... else: <here>` (and
    `if n > B: <here>`) where the host function binds `B` once to `triton.next_power_of_2(n)`, directly
    or as a value `function_of(call)` (a function of this module or the workspace) returns so, and `n`
    is bound once: `next_power_of_2(n) >= n`, so the other branch never runs (Liger's softmax launches
    its multi-block kernels only there). `resolve`: an expression's canonical dotted path;
    `function_of`: the `ast.FunctionDef` a call's callee names, with its module's `resolve`, or None."""
    jit = {id(k.node) for k in kernels}
    lines: set[int] = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or id(fn) in jit:
            continue
        guards = [n for n in ast.walk(fn) if isinstance(n, ast.If) and isinstance(n.test, ast.Compare)
                  and len(n.test.ops) == 1 and isinstance(n.test.left, ast.Name)
                  and isinstance(n.test.comparators[0], ast.Name)]
        if not guards:
            continue
        stores = _stores(fn)

        def pow2_of(name: str) -> str | None:
            """The name `name` is bound to the next power of two of, where that is certain."""
            bound = stores.get(name, ())
            if len(bound) != 1:
                return None
            assign = _assignment_of(fn, bound[0])
            if assign is None:
                return None
            target, value = assign.targets[0], assign.value
            if isinstance(target, ast.Name):
                operand = _pow2_operand(value, resolve)
                return operand.id if isinstance(operand, ast.Name) else None
            if isinstance(target, ast.Tuple) and isinstance(value, ast.Call) and not value.keywords \
                    and not any(isinstance(e, ast.Starred) for e in target.elts):
                index = next((i for i, e in enumerate(target.elts) if e is bound[0]), None)
                callee = function_of(value)
                if index is None or callee is None:
                    return None
                callee_fn, callee_resolve = callee
                param = _returns_pow2_of_param(callee_fn, callee_resolve).get(index)
                if param is not None and param < len(value.args) and isinstance(value.args[param], ast.Name):
                    return value.args[param].id
            return None

        for guard in guards:
            left, op, right = guard.test.left.id, guard.test.ops[0], guard.test.comparators[0].id
            if isinstance(op, (ast.LtE, ast.Gt)):
                size, block = left, right
            elif isinstance(op, (ast.GtE, ast.Lt)):
                size, block = right, left
            else:
                continue
            if len(stores.get(size, ())) != 1 or pow2_of(block) != size:
                continue
            # `size <= block` always holds: the `else` (for <=, >=) or the body (for >, <) never runs
            dead = guard.orelse if isinstance(op, (ast.LtE, ast.GtE)) else guard.body
            for stmt in dead:
                lines.update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
    return frozenset(lines)
