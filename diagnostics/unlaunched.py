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
where a size guard rules out (below), of the helpers nothing names at all (`uncalled_helpers`) and of the
kernels a launched variant superseded (`superseded_kernels`); another kernel nothing names keeps its
warning (it may be one being written, whose launcher is not there yet).

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

from tritonify.diagnostics.triton_ast import ModuleWalk, walk_module, walk_nodes
from tritonify.diagnostics.workspace_index import on_project_change

HOST = ""   # a reference outside every jit function


def unlaunched_functions(kernels: Sequence, module_nodes: Iterable[ast.AST], tree: ast.Module,
                         left_out: Sequence[tuple[int, str]] = ()) -> frozenset[str]:
    """The names of the jit functions in `kernels` (triton_ast.Kernel) that nothing launches or calls
    (see the module docstring); `module_nodes`: every node of the module `tree`; `left_out`: where
    `tree` is a cut-down text of the module (the editor's typing-time lint), the references
    (`references`) in the code it left out, whose jit functions `kernels` holds too."""
    return reach(kernels, module_nodes, tree, left_out=left_out)[0]


def dead_functions(kernels: Sequence, module_nodes: Iterable[ast.AST], tree: ast.Module,
                   path: str | None, unreachable: frozenset[int] = frozenset(),
                   open_texts: dict[str, str] | None = None,
                   left_out: Sequence[tuple[int, str]] = ()) -> frozenset[str]:
    """The unlaunched functions of a module whose host code launches or calls some other jit function
    of it, less the public ones another file of the project may import and what they call (see the
    module docstring); `path`: the module's file (None, or no such file: every public one may be
    imported); `open_texts`: the editor's text of open files (path -> text), read instead of the disk's;
    `left_out`: as for `unlaunched_functions`. Empty where the host code launches none."""
    module_nodes = list(module_nodes)
    unlaunched, launches = reach(kernels, module_nodes, tree, unreachable=unreachable, left_out=left_out)
    if not launches or not unlaunched:
        return frozenset()
    public = {name for name in unlaunched if not name.startswith("_")}
    if not public:
        return unlaunched
    imported = imported_elsewhere(path, public, open_texts) if path and Path(path).is_file() else public
    if not imported:
        return unlaunched
    return reach(kernels, module_nodes, tree, frozenset(imported), unreachable, left_out)[0]


def reach(kernels: Sequence, module_nodes: Iterable[ast.AST], tree: ast.Module,
          roots: frozenset[str] = frozenset(), unreachable: frozenset[int] = frozenset(),
          left_out: Sequence[tuple[int, str]] = ()) -> tuple[frozenset[str], bool]:
    """(the unlaunched functions, whether host code names any jit function of the module).
    `roots`: functions to count as launched from elsewhere (imported by another module);
    `unreachable`: lines of host code no call can reach (`unreachable_host_lines`), whose references
    do not count; `left_out`: as for `unlaunched_functions`."""
    referrers = _referrers(kernels, module_nodes, unreachable, left_out)
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


def _named(node: ast.AST) -> str | None:
    """What a node names, as a reference to a jit function counts: a name, an attribute, a string."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def references(node: ast.AST) -> list[tuple[int, str]]:
    """(line, what it names) of each node below `node` that can refer to a jit function (`_named`;
    strings only where they are identifiers, as a function's name is): what a cut-down text of a
    module keeps of the code it leaves out (`left_out`)."""
    out = []
    for n in walk_nodes(node):
        named = _named(n)
        if named is not None and named.isidentifier():
            out.append((getattr(n, "lineno", 0), named))
    return out


def _referrers(kernels: Sequence, module_nodes: Iterable[ast.AST],
               unreachable: frozenset[int] = frozenset(),
               left_out: Sequence[tuple[int, str]] = ()) -> dict[str, set[str]]:
    """Jit function name -> where the module names it outside its own body: the jit functions whose
    lines hold a reference (HOST for host code); a name, an attribute or a string counts, a reference
    on an `unreachable` line does not. `left_out`: (line, name) references besides `module_nodes`'s
    (`unlaunched_functions`)."""
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

    def count(line: int, named: str) -> None:
        if line not in unreachable:
            where = enclosing(line)
            if where != named:
                referrers[named].add(where)

    for node in module_nodes:   # `_named`, inline: this runs on every node of the module, every lint
        if isinstance(node, ast.Name):
            named = node.id
        elif isinstance(node, ast.Attribute):
            named = node.attr
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            named = node.value
        else:
            continue
        if named in referrers:
            count(getattr(node, "lineno", 0), named)
    for line, named in left_out:
        if named in referrers:
            count(line, named)
    return referrers


def uncalled_helpers(kernels: Sequence, referrers: dict[str, set[str]]) -> frozenset[str]:
    """The jit helpers (functions that return a value: a kernel cannot, so only another jit function
    calls them) that nothing in the module names outside their own bodies: no kernel, no other helper
    (but one uncalled itself), no host code, no `__all__` or other string. A helper is not launched:
    a kernel being written beside it names it as it calls it, so one that nothing names is left over
    (flag-gems' `next_multiple_of`, whose `tl.cidv` never compiles). `referrers`: `_referrers`'s map."""
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


def superseded_kernels(referrers: dict[str, set[str]]) -> frozenset[str]:
    """The kernels nothing in the module names whose name, with a suffix, is a kernel host code here
    launches (`_mhc_bwd_kernel` beside the launched `_mhc_bwd_kernel_n4`, flag-gems' mhc_bwd.py): the
    general version a specialised variant replaced. A kernel being written beside a launched one gets
    a name of its own, or the longer one (`_k_v2` beside `_k`), and keeps its warning. `referrers`:
    `_referrers`'s map."""
    launched = [name for name, refs in referrers.items() if HOST in refs]
    return frozenset(name for name, refs in referrers.items()
                     if not refs and any(other.startswith(name + "_") for other in launched))


def left_over(kernels: Sequence, module_nodes: Iterable[ast.AST],
              left_out: Sequence[tuple[int, str]] = ()) -> frozenset[str]:
    """The uncalled helpers and superseded kernels, and the functions only they call (`left_out`: as
    for `unlaunched_functions`)."""
    referrers = _referrers(kernels, module_nodes, left_out=left_out)
    out = set(uncalled_helpers(kernels, referrers) | superseded_kernels(referrers))
    if not out:
        return frozenset()
    grew = True
    while grew:
        grew = False
        for name, refs in referrers.items():
            if name not in out and refs and refs <= out:
                out.add(name)
                grew = True
    return frozenset(out)


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


@on_project_change
def _forget_project_scans() -> None:
    _imported_in_project.cache_clear()


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
            found.update(name for name in names - found if _imports_name(text, name))
            if found == names:
                return frozenset(found)
    return frozenset(found)


def _imports_name(text: str, name: str) -> bool:
    """Whether a module's text imports `name` (`from m import name`, also in a bracketed list) or
    reads it as an attribute (`mod.name`)."""
    return name in text and bool(re.search(rf"\.[ \t]*{name}\b", text) or re.search(
        rf"^[ \t]*from[ \t]+[.\w]+[ \t]+import[ \t]+(\([^)]*\b{name}\b[^)]*\)|[^\n#]*\b{name}\b)", text, re.M))


def imported_elsewhere(path: str, names: Iterable[str], open_texts: dict[str, str] | None = None) -> set[str]:
    """Those of `names` (public jit functions of the module at `path`) that another file of its
    project may import: every one of them where the project cannot be scanned. `open_texts`
    (path -> the editor's text) are read as well: an import typed but not saved counts."""
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
    if found is None:
        return set(wanted)
    found = set(found)
    for other, text in (open_texts or {}).items():
        if other != str(own) and other.startswith(str(root) + os.sep) and text:
            found.update(name for name in wanted - found if _imports_name(text, name))
    return found


# ---- host branches a size guard rules out -------------------------------------------------------
_NEXT_POW2 = "triton.next_power_of_2"


def _stores(fn: ast.AST) -> dict[str, list[ast.AST]]:
    """Name -> the nodes that bind it in `fn` (parameters, assignment targets, loop variables ...)."""
    out: dict[str, list[ast.AST]] = {}
    for node in walk_nodes(fn):
        if isinstance(node, ast.arg):
            out.setdefault(node.arg, []).append(node)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            out.setdefault(node.id, []).append(node)
    return out


def _assignment_of(fn: ast.AST, target: ast.Name) -> ast.Assign | None:
    for node in walk_nodes(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and any(n is target for n in walk_nodes(node.targets[0])):
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
    returns = [n for n in walk_nodes(fn) if isinstance(n, ast.Return)]
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


def unreachable_host_lines(tree: ast.Module, kernels: Sequence, resolve, function_of,
                           walk: ModuleWalk | None = None) -> frozenset[int]:
    """Lines of host `if` branches that a size guard rules out: `if n <= B: ... else: <here>` (and
    `if n > B: <here>`) where the host function binds `B` once to `triton.next_power_of_2(n)`, directly
    or as a value `function_of(call)` (a function of this module or the workspace) returns so, and `n`
    is bound once: `next_power_of_2(n) >= n`, so the other branch never runs (Liger's softmax launches
    its multi-block kernels only there). `resolve`: an expression's canonical dotted path;
    `function_of`: the `ast.FunctionDef` a call's callee names, with its module's `resolve`, or None.

    The reading crosses an autograd Function's `ctx` (`_ctx_facts`): a flag the forward saves that is
    set True only in a ruled-out branch is False in the backward (`if not flag and ...` reads as its
    other operand), and a block size the forward saves as the next power of two of its input's last
    dimension bounds the last dimension of the gradient the backward receives. That last step assumes
    the op keeps the row width (the gradient has the output's shape; a row-wise op's output has the
    input's width): where it does not, a compile break there goes unreported, never a false one.

    `walk`: the module's `triton_ast.walk_module(tree)` when the caller has it (the linter's context
    does): what is looked for across the module comes from that one walk, not from walks of its own
    (each a whole `ast.walk` of the module: 4-6 of them made this 3x slower on every lint while typing)."""
    walk = walk if walk is not None else walk_module(tree)
    jit = {id(k.node) for k in kernels}
    hosts = [fn for fn in walk.functions if id(fn) not in jit]
    lines: set[int] = set()
    for fn in hosts:
        lines |= _guarded_lines(fn, resolve, function_of, frozenset(lines), {})
    facts = _ctx_facts(tree, hosts, resolve, function_of, frozenset(lines), walk)
    for fn in hosts:
        if id(fn) in facts:
            lines |= _guarded_lines(fn, resolve, function_of, frozenset(lines), facts[id(fn)])
    return frozenset(lines)


_FALSE, _POW2_OF_INPUT_WIDTH, _GRAD = "false", "pow2-of-input-width", "grad"


def _single_binding(fn: ast.AST, stores, name: str) -> tuple[ast.Name, ast.expr, ast.expr] | None:
    """(the store, the assignment's target, its value) where `name` is bound exactly once in `fn`,
    by an assignment; else None."""
    bound = stores.get(name, ())
    if len(bound) != 1:
        return None
    assign = _assignment_of(fn, bound[0])
    if assign is None:
        return None
    return bound[0], assign.targets[0], assign.value


def _pow2_of(fn: ast.AST, stores, name: str, resolve, function_of) -> str | None:
    """The name `name` is bound to the next power of two of in `fn`, where that is certain."""
    single = _single_binding(fn, stores, name)
    if single is None:
        return None
    store, target, value = single
    if isinstance(target, ast.Name):
        operand = _pow2_operand(value, resolve)
        return operand.id if isinstance(operand, ast.Name) else None
    if isinstance(target, ast.Tuple) and isinstance(value, ast.Call) and not value.keywords \
            and not any(isinstance(e, ast.Starred) for e in target.elts):
        index = next((i for i, e in enumerate(target.elts) if e is store), None)
        callee = function_of(value)
        if index is None or callee is None:
            return None
        callee_fn, callee_resolve = callee
        param = _returns_pow2_of_param(callee_fn, callee_resolve).get(index)
        if param is not None and param < len(value.args) and isinstance(value.args[param], ast.Name):
            return value.args[param].id
    return None


def _last_dim_of(fn: ast.AST, stores, name: str) -> str | None:
    """The tensor `name` is bound once to the last dimension of in `fn` (`*batch, n = t.shape`,
    `n = t.shape[-1]`, `n = t.size(-1)`), where `t` is a parameter never rebound; else None."""
    single = _single_binding(fn, stores, name)
    if single is None:
        return None
    store, target, value = single
    tensor = None
    if isinstance(target, ast.Tuple) and target.elts and target.elts[-1] is store \
            and isinstance(value, ast.Attribute) and value.attr == "shape":
        tensor = value.value
    elif isinstance(target, ast.Name):
        minus_one = lambda e: isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub) \
            and isinstance(e.operand, ast.Constant) and e.operand.value == 1
        if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Attribute) \
                and value.value.attr == "shape" and minus_one(value.slice):
            tensor = value.value.value
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "size" \
                and len(value.args) == 1 and not value.keywords and minus_one(value.args[0]):
            tensor = value.func.value
    params = {a.arg for a in fn.args.args}
    if isinstance(tensor, ast.Name) and tensor.id in params and len(stores.get(tensor.id, ())) == 1:
        return tensor.id
    return None


def _false_names(fn: ast.AST, stores, dead: frozenset[int], params: dict[str, str]) -> set[str]:
    """Names that hold False wherever `fn` reads them: every binding is `name = False`, or `name = True`
    on a ruled-out line; or a parameter every caller passes a False (`params`)."""
    out = {name for name, fact in params.items() if fact == _FALSE and len(stores.get(name, ())) == 1}
    flags: dict[int, bool] = {}   # id(the target of `name = True/False`) -> whether it can hold True here
    for node in walk_nodes(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, bool):
            flags[id(node.targets[0])] = node.value.value and node.lineno not in dead
    if flags:
        out |= {name for name, bound in stores.items()
                if all(id(t) in flags and not flags[id(t)] for t in bound)}
    return out


def _the_comparison(test: ast.expr, false: set[str]) -> ast.expr:
    """`test` with the operands that cannot change it taken out: `not F and C` and `F or C` read as `C`
    where `F` holds False."""
    if isinstance(test, ast.BoolOp) and len(test.values) >= 2:
        if isinstance(test.op, ast.And):
            rest = [v for v in test.values if not (isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.Not)
                                                   and isinstance(v.operand, ast.Name) and v.operand.id in false)]
        else:
            rest = [v for v in test.values if not (isinstance(v, ast.Name) and v.id in false)]
        if len(rest) == 1:
            return rest[0]
    return test


def _guarded_lines(fn: ast.AST, resolve, function_of, dead: frozenset[int], params: dict[str, str]) -> set[int]:
    """The lines of `fn`'s `if` branches a size guard rules out (see `unreachable_host_lines`);
    `dead`: lines ruled out already; `params`: what every caller passes `fn` (`_ctx_facts`)."""
    ifs = [n for n in walk_nodes(fn) if isinstance(n, ast.If)]
    if not ifs:
        return set()
    stores = _stores(fn)
    false = _false_names(fn, stores, dead, params) if (params or dead) else set()
    lines: set[int] = set()
    for guard in ifs:
        test = _the_comparison(guard.test, false)
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name)
                and isinstance(test.comparators[0], ast.Name)):
            continue
        left, op, right = test.left.id, test.ops[0], test.comparators[0].id
        if isinstance(op, (ast.LtE, ast.Gt)):
            size, block = left, right
        elif isinstance(op, (ast.GtE, ast.Lt)):
            size, block = right, left
        else:
            continue
        if len(stores.get(size, ())) != 1:
            continue
        bounded = _pow2_of(fn, stores, block, resolve, function_of) == size or (
            params.get(block) == _POW2_OF_INPUT_WIDTH and len(stores.get(block, ())) == 1
            and params.get(_last_dim_of(fn, stores, size) or "") == _GRAD)
        if not bounded:
            continue
        # `size <= block` always holds: the `else` (for <=, >=) or the body (for >, <) never runs
        for stmt in (guard.orelse if isinstance(op, (ast.LtE, ast.GtE)) else guard.body):
            lines.update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
    return lines


def _returned_facts(fn: ast.AST, resolve, function_of, dead: frozenset[int]) -> dict[int, object]:
    """{index of `fn`'s returned tuple -> _FALSE, or ("pow2", parameter index): the next power of two
    of the last dimension of that parameter} where every `return` gives it there."""
    returns = [n for n in walk_nodes(fn) if isinstance(n, ast.Return)]
    if not returns or any(not isinstance(r.value, ast.Tuple) for r in returns):
        return {}
    stores = _stores(fn)
    false = _false_names(fn, stores, dead, {})
    params = [a.arg for a in fn.args.args]
    found: dict[int, object] | None = None
    for ret in returns:
        here: dict[int, object] = {}
        for i, item in enumerate(ret.value.elts):
            if not isinstance(item, ast.Name):
                continue
            if item.id in false:
                here[i] = _FALSE
                continue
            size = _pow2_of(fn, stores, item.id, resolve, function_of)
            tensor = _last_dim_of(fn, stores, size) if size else None
            if tensor in params:
                here[i] = ("pow2", params.index(tensor))
        found = here if found is None else {i: f for i, f in found.items() if here.get(i) == f}
    return found or {}


def _ctx_facts(tree: ast.Module, hosts, resolve, function_of, dead: frozenset[int],
               walk: ModuleWalk) -> dict[int, dict[str, str]]:
    """id(host function) -> {parameter -> what every call passes it}, read across autograd Functions:
    a class whose `forward(ctx, x, ...)` unpacks a module function's returned tuple and saves items on
    `ctx` (`_returned_facts`: a flag that is False, a next power of two of `x`'s last dimension), and
    whose `backward(ctx, grad, ...)` calls a module function with those `ctx.<attr>` and the gradient.
    `walk`: the module's walk (`walk_module(tree)`)."""
    module_fns = {stmt.name: stmt for stmt in tree.body if isinstance(stmt, ast.FunctionDef)}
    passed: dict[str, list[dict[int, str]]] = {}   # function name -> per call, argument index -> fact
    for cls in [n for n in walk.nodes if n.__class__ is ast.ClassDef]:
        methods = {s.name: s for s in cls.body if isinstance(s, ast.FunctionDef)}
        forward, backward = methods.get("forward"), methods.get("backward")
        if forward is None or backward is None or len(forward.args.args) < 2 or len(backward.args.args) < 2:
            continue
        ctx_name, inputs = forward.args.args[0].arg, {a.arg for a in forward.args.args[1:]}
        saved: dict[str, list[str | None]] = {}
        returned: dict[int, tuple] = {}   # id(name node bound from a call) -> (callee facts, index, call)
        for node in walk_nodes(forward):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple) \
                    and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) \
                    and node.value.func.id in module_fns:
                facts = _returned_facts(module_fns[node.value.func.id], resolve, function_of, dead)
                for i, elt in enumerate(node.targets[0].elts):
                    if isinstance(elt, ast.Name) and i in facts:
                        returned[elt.id] = (facts[i], node.value)
        stores = _stores(forward)
        for node in walk_nodes(cls):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                    for t in walk_nodes(target):
                        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == ctx_name:
                            fact = None
                            value = node.value if isinstance(node, ast.Assign) and target is t else None
                            if isinstance(value, ast.Name) and len(stores.get(value.id, ())) == 1 \
                                    and value.id in returned and node in forward.body:
                                what, call = returned[value.id]
                                if what == _FALSE:
                                    fact = _FALSE
                                elif what[1] < len(call.args) and isinstance(call.args[what[1]], ast.Name) \
                                        and call.args[what[1]].id in inputs and len(stores.get(call.args[what[1]].id, ())) == 1:
                                    fact = _POW2_OF_INPUT_WIDTH
                            saved.setdefault(t.attr, []).append(fact)
        known = {attr: facts[0] for attr, facts in saved.items() if len(facts) == 1 and facts[0]}
        bctx, grad = backward.args.args[0].arg, backward.args.args[1].arg
        bstores = _stores(backward)
        for call in walk_nodes(backward):
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in module_fns:
                here: dict[int, str] = {}
                for i, arg in enumerate(call.args):
                    if isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) and arg.value.id == bctx \
                            and arg.attr in known:
                        here[i] = known[arg.attr]
                    elif isinstance(arg, ast.Name) and arg.id == grad and len(bstores.get(grad, ())) == 1:
                        here[i] = _GRAD
                passed.setdefault(call.func.id, []).append(here)
    out: dict[int, dict[str, str]] = {}
    if not passed:
        return out
    every: dict[str, list[ast.Call]] = {name: [] for name in passed}   # the module's calls of each, by name
    for n in walk.calls:
        if n.func.__class__ is ast.Name and n.func.id in every:
            every[n.func.id].append(n)
    named = dict.fromkeys(passed, 0)   # how many times the module names each
    for n in walk.nodes:
        if n.__class__ is ast.Name and n.id in named:
            named[n.id] += 1
    for name, calls in passed.items():
        fn = module_fns[name]
        if len(every[name]) != len(calls) or named[name] != len(calls) or any(c.keywords for c in every[name]):
            continue   # called elsewhere too, or passed around: what those calls give is not known
        common = {i: f for i, f in calls[0].items() if all(c.get(i) == f for c in calls[1:])}
        params = [a.arg for a in fn.args.args]
        facts = {params[i]: f for i, f in common.items() if i < len(params)}
        if facts:
            out[id(fn)] = facts
    return out
