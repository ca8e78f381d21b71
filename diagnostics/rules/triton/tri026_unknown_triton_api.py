"""TRI026 unknown-triton-api: a `triton.language` name, keyword or argument no Triton the project runs has.

`tl.tanh`, `tl.libdevice.exp`, `tl.math.pow`, `tl.load(..., dtype=...)`, `tl.sum(x, keepdims=True)`,
`tl.program_id(3)`: the kernel stops compiling with an `AttributeError`/`TypeError` inside
Triton's code generator. What exists is read from `diagnostics/triton_api/api.json` (every Triton
release from 3.2 to the newest, generated from the wheels by `scripts/triton_api.py`), judged
against every version the project runs (`triton_api.target`: the `triton-version` setting, the
project's triton/torch requirement or venv, else every recorded release): an error where all of
them lack it; where only some do, TRI052 (opt-in) says so as a porting note. Checked: attribute paths under
`triton.language` (`tl.X`, `tl.math.X`, `tl.extra.cuda.libdevice.X`, through any import alias),
keywords and the number of positional arguments of the functions called, required arguments,
`tl.program_id`/`tl.num_programs` axes (0, 1 or 2), and methods called on a value the type
inference knows is a Triton tensor.
"""
from __future__ import annotations

import ast
from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Finding, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._types import kernel_types, vendor_fork
from tritonify.diagnostics.triton_api import for_version, history, versions
from tritonify.diagnostics.triton_api.target import target
from tritonify.diagnostics.triton_ast import tl_name

RULE = Rule(
    code="TRI026",
    name="unknown-triton-api",
    summary="triton.language name, keyword or argument that no Triton version the project runs has",
    severity=Severity.ERROR,
    fixable=False,
    compile_break=True,
)

# Attributes of `tl.tensor` set in its constructor (not methods of the class body).
_TENSOR_ATTRIBUTES = {"shape", "dtype", "type", "numel", "handle"}


def _short(path: str) -> str:
    return path.replace("triton.language", "tl", 1)


# Modules of triton.language that are not recorded (`tl.core.X` is resolved to `tl.X`).
_UNRECORDED = {"core", "standard", "semantic", "random", "_utils", "target_info"}


def _rooted_in_triton(ctx: PythonContext, node: ast.Attribute, roots: dict[str, bool]) -> bool:
    """The chain starts at a name bound to a module of triton (`tl`, `triton`, `libdevice`)."""
    root = node.value
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name):
        return False
    if root.id not in roots:
        path = ctx.imports.resolve(root) or ""
        roots[root.id] = path == "triton" or path.startswith("triton.")
    return roots[root.id]


_OLD_LIBDEVICE = "triton.language.libdevice"


def _as_written(ctx: PythonContext, node: ast.Attribute, path: str) -> str:
    """The path as the code spells it where the resolved one folded an alias away: Triton 2.x's
    `tl.libdevice` resolves to today's libdevice for the other rules, but `triton.language` has
    had no `libdevice` since 3.0 (AttributeError)."""
    if not path.startswith("triton.language.extra.libdevice"):
        return path
    chain = []
    root = node
    while isinstance(root, ast.Attribute):
        chain.append(root.attr)
        root = root.value
    base = ctx.imports.resolve(root) if isinstance(root, ast.Name) else None
    written = ".".join([base or "", *reversed(chain)])
    return written if written.startswith(_OLD_LIBDEVICE + ".") or written == _OLD_LIBDEVICE else path


def _through_private_module(node: ast.Attribute) -> bool:
    chain = node.value
    while isinstance(chain, ast.Attribute):
        if chain.attr in _UNRECORDED:
            return True
        chain = chain.value
    return node.attr.startswith("_")


_REDUCTIONS = {"max": "maximum", "min": "minimum", "sum": None, "argmax": None, "argmin": None,
               "xor_sum": None, "reduce_or": None, "cumsum": None, "cumprod": None}


def _reduction_problem(types, call: ast.Call, name: str) -> str | None:
    """`tl.max(x, 0.0)`, `tl.min(a, n)`: the second argument of a reduction is its axis, which must
    be a constexpr int (or None); `tl.max(0, x)` reduces a Python number."""
    axis = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "axis"), None)
    elementwise = _REDUCTIONS[name]
    hint = (f"; for the element-wise {elementwise} of two values use `tl.{elementwise}(a, b)`"
            if elementwise else "")
    if call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, (int, float)) \
            and not isinstance(call.args[0].value, bool):
        return (f"`{ast.unparse(call)}` reduces the number `{ast.unparse(call.args[0])}`: `tl.{name}` takes a "
                f"tensor and an axis{hint}")
    source = types.of(call.args[0]) if call.args else None
    if source is not None and source.is_runtime and source.block is False and isinstance(axis, ast.Constant) \
            and isinstance(axis.value, int) and not isinstance(axis.value, bool):
        # `tl.reduce` wraps the axis against the input's rank (`_wrap_axis`, 3.2 to 3.9): a scalar has none
        return (f"`{ast.unparse(call)}` reduces `{ast.unparse(call.args[0])}`, a scalar, along axis {axis.value}: "
                f"it has no axes (ValueError \"invalid axis {axis.value}. Expected 0 <= axis < 0\"); drop the "
                f"reduction, or reduce the block it was computed from{hint}")
    if axis is None or source is None or source.block is not True:
        return None     # a scalar with a run-time or no axis: left alone
    t = types.of(axis)
    bad = (isinstance(axis, ast.Constant) and isinstance(axis.value, float)) or t.block is True or (
        t.is_runtime and not isinstance(axis, ast.Constant))
    if not bad:
        return None
    return (f"`{ast.unparse(call)}`: the second argument of `tl.{name}` is the axis to reduce, which must be a "
            f"constexpr int, and `{ast.unparse(axis)}` is not{hint}")


def _version_guarded(ctx: PythonContext, fn: ast.FunctionDef) -> bool:
    """Defined under a module-level `if`/`try` (one definition per Triton version, chosen on import)."""
    return any(isinstance(stmt, (ast.If, ast.Try)) and stmt.lineno <= fn.lineno <= stmt.end_lineno
               for stmt in ctx.tree.body)


def _keyword_history(path: str, keyword: str) -> str:
    had = [v for v in versions() if (s := for_version(v).signature(path)) and keyword in s["params"]]
    if not had:
        return ""
    return f"; `{keyword}` exists in Triton {had[0]}" + (f" to {had[-1]}" if had[-1] != had[0] else "")


def _call_problem(api, path: str, call: ast.Call) -> str | None:
    sig = api.signature(path)
    if sig is None:
        return None
    params = sig["params"]
    if not sig["varkw"]:
        for kw in call.keywords:
            if kw.arg and kw.arg not in params:
                return (f"`{_short(path)}` has no keyword `{kw.arg}` (it takes {', '.join(params) or 'none'})"
                        f"{_keyword_history(path, kw.arg)}")
    if sig.get("class") or sig["varargs"] or any(isinstance(a, ast.Starred) for a in call.args) \
            or any(kw.arg is None for kw in call.keywords):
        return None
    if len(call.args) > len(params):
        return f"`{_short(path)}` takes at most {len(params)} positional arguments ({', '.join(params)}), not {len(call.args)}"
    given = set(params[:len(call.args)]) | {kw.arg for kw in call.keywords}
    missing = [p for p in sig["required"] if p not in given]
    if missing:
        return f"`{_short(path)}` needs `{'`, `'.join(missing)}`"
    return None


# (versions, path) -> indices of the target APIs that lack the path, and (versions, path, keywords,
# positional count, starred) -> (index, problem) of those that reject the call: the same `tl.load`
# of the same form is asked about in every kernel of every file, each time against every version
_ANSWERS: dict[tuple, tuple] = {}


def _lacking(apis, versions_: tuple[str, ...], path: str) -> tuple[int, ...]:
    """The indices of `apis` (named by `versions_`) whose `lookup(path)` is not None."""
    key = (versions_, path)
    hit = _ANSWERS.get(key)
    if hit is None:
        if len(_ANSWERS) > 100_000:
            _ANSWERS.clear()
        hit = _ANSWERS[key] = tuple(i for i, a in enumerate(apis) if a.lookup(path) is not None)
    return hit


def _rejecting(apis, versions_: tuple[str, ...], path: str, call: ast.Call) -> tuple[tuple[int, str], ...]:
    """(index, problem) for each of `apis` that has `path` and whose signature rejects `call`
    (`_call_problem`, which reads only the call's keyword names, argument count and unpacking)."""
    key = (versions_, path, tuple(kw.arg for kw in call.keywords), len(call.args),
           any(isinstance(a, ast.Starred) for a in call.args))
    hit = _ANSWERS.get(key)
    if hit is None:
        if len(_ANSWERS) > 100_000:
            _ANSWERS.clear()
        lacking = _lacking(apis, versions_, path)
        found = ((i, _call_problem(a, path, call)) for i, a in enumerate(apis) if i not in lacking)
        hit = _ANSWERS[key] = tuple((i, p) for i, p in found if p)
    return hit


def target_apis(ctx: PythonContext):
    """(the APIs of the Triton versions the file's project runs, oldest first; where that came from):
    `triton_api.target` (the environment's override, the `triton-version` setting, the project's
    requirements or venv, else every recorded version)."""
    def build():
        versions_, source = target(ctx.source.path, getattr(ctx.settings, "triton_version", "") or "")
        return tuple(for_version(v) for v in versions_), source
    return ctx.per_file(("triton-target",), build)


def _span(apis) -> str:
    first, last = apis[0].version, apis[-1].version
    return first if first == last else f"{first} to {last}"


def _annotation_nodes(ctx: PythonContext, kernel) -> list[ast.AST]:
    """Every node of the kernel's parameter annotations, unless postponed annotations are in force."""
    args = kernel.node.args
    annotated = [a.annotation for a in (*args.posonlyargs, *args.args, *args.kwonlyargs) if a.annotation is not None]
    if not annotated or "from __future__ import annotations" in ctx.source.text:
        return []
    return [n for a in annotated for n in ast.walk(a)]


def problems(ctx: PythonContext) -> list[tuple[ast.AST, str, bool]]:
    """Every API problem of the file's kernels: (node, message, whether it holds on every Triton
    version the project runs). TRI026 reports those that do (the kernel does not compile on any
    of them); TRI052 the others (it breaks on some version the project admits, not all)."""
    return ctx.per_file(("tri026-problems",), lambda: list(_problems(ctx)))


def _problems(ctx: PythonContext) -> Iterator[tuple[ast.AST, str, bool]]:
    if vendor_fork(ctx.source.path):
        return
    apis, source = target_apis(ctx)
    newest = apis[-1]
    where = "" if len(apis) == 1 and source.startswith("TRITONIFY_") else f" ({source})"
    all_types = kernel_types(ctx)
    roots: dict[str, bool] = {}
    versions_ = tuple(a.version for a in apis)
    for kernel in ctx.kernels:
        if _version_guarded(ctx, kernel.node):
            continue
        reported: set[int] = set()
        nodes = kernel.nodes
        # parameter annotations (`out_ptr: tl.pointer`): Python evaluates them when the module is
        # imported (not under `from __future__ import annotations`, left alone)
        annotations = _annotation_nodes(ctx, kernel)
        if annotations:
            nodes = [*nodes, *annotations]
        in_annotation = {id(n) for n in annotations}
        attribute, call = ast.Attribute, ast.Call
        inner = {id(n.value) for n in nodes if n.__class__ is attribute}   # parsed nodes are never subclasses
        for node in nodes:
            cls = node.__class__
            if cls is not attribute and cls is not call:
                continue   # most nodes
            if cls is attribute and id(node) not in inner:
                if not _rooted_in_triton(ctx, node, roots):
                    continue
                path = ctx.imports.resolve(node)
                if not path or _through_private_module(node):
                    continue
                written = _as_written(ctx, node, path)
                failing = [apis[i] for i in _lacking(apis, versions_, written)]
                if not failing:
                    continue
                module, name = failing[-1].lookup(written)
                reported.add(id(node))
                had = history(f"{module}.{name}")
                if len(failing) == len(apis):
                    hint = failing[-1].suggestion(module, name)
                    if had:
                        hint = (f"it exists in Triton {had[0]}" + (f" to {had[-1]}" if had[-1] != had[0] else "")
                                + f" (pin that version, or port the code){'; ' + hint if hint else ''}")
                    fails = ("the module does not import (AttributeError: Python evaluates the parameter's "
                             "annotation)" if id(node) in in_annotation else
                             "the kernel does not compile (AttributeError)")
                    yield node, (f"`{_short(module)}` has no `{name}` in Triton {_span(apis)}{where}: "
                                 f"{fails}{'; ' + hint if hint else ''}"), True
                else:
                    fine = [a for a in apis if a not in failing]
                    yield node, (f"`{_short(module)}` has no `{name}` in Triton {_span(failing)}, which this project "
                                 f"admits{where}; it compiles on {_span(fine)}: pin `triton` to a version that has it, "
                                 f"or port the code before upgrading"), False
            elif cls is call:
                path = ctx.imports.resolve(node.func)
                if path and path.startswith("triton.language.") and path.count(".") == 2 \
                        and path.rsplit(".", 1)[1] in newest.dtypes:
                    # `tl.float32(x)`: a dtype is a value (no `__call__` in any release)
                    dtype = path.rsplit(".", 1)[1]
                    yield node, (f"`tl.{dtype}` is a dtype, not a function: the kernel does not compile "
                                 "(TypeError \"'dtype' object is not callable\"); convert a value with "
                                 f"`x.to(tl.{dtype})`, or write a constant as a literal (`0.0`, "
                                 "`float('-inf')`)"), True
                    continue
                if path and path.startswith("triton.language.") and id(node.func) not in reported \
                        and not (isinstance(node.func, ast.Attribute) and _through_private_module(node.func)):
                    failing = [(apis[i], p) for i, p in _rejecting(apis, versions_, path, node)]
                    if failing:
                        api, problem = failing[-1]
                        head, _, tail = problem.partition("; ")
                        if len(failing) == len(apis):
                            yield node, (f"{head} in Triton {_span(apis)}{where}: the kernel does not compile"
                                         f"{'; ' + tail if tail else ''}"), True
                        else:
                            bad = [a for a, _ in failing]
                            fine = [a for a in apis if a not in bad]
                            yield node, (f"{head} in Triton {_span(bad)}, which this project admits{where}; it "
                                         f"compiles on {_span(fine)}{'; ' + tail if tail else ''}"), False
                        continue
                name = tl_name(ctx.imports, node.func)
                if name in _REDUCTIONS and kernel.node in all_types:
                    problem = _reduction_problem(all_types[kernel.node], node, name)
                    if problem:
                        yield node, problem, True
                        continue
                if name in ("program_id", "num_programs"):
                    axis = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "axis"), None)
                    if isinstance(axis, ast.Constant) and isinstance(axis.value, int) and axis.value not in (0, 1, 2):
                        yield axis, (f"`tl.{name}` axis must be 0, 1 or 2, not {axis.value}: a grid has "
                                     "three dimensions; fold the others into one axis (`pid // n`, `pid % n`)"), True
                        continue
                if name is None and isinstance(node.func, ast.Attribute) and kernel.node in all_types:
                    method = node.func.attr
                    t = all_types[kernel.node].of(node.func.value)
                    if t.is_tensor and t.kind != "pointer" and not method.startswith("__") \
                            and method not in _TENSOR_ATTRIBUTES:
                        failing = [a for a in apis if method not in a.tensor_methods]
                        if len(failing) == len(apis):
                            yield node.func, (f"a Triton tensor has no method `{method}` in Triton {_span(apis)}{where}: "
                                              f"the kernel does not compile; use the `tl.` function instead"), True
                        elif failing:
                            fine = [a for a in apis if a not in failing]
                            yield node.func, (f"a Triton tensor has no method `{method}` in Triton {_span(failing)}, "
                                              f"which this project admits{where}; it compiles on {_span(fine)}; "
                                              f"the `tl.` function works on both"), False


def check(ctx: PythonContext) -> Iterator[Finding]:
    found = [(node, message) for node, message, everywhere in problems(ctx) if everywhere]
    if not found:
        return
    annotations = {id(n) for kernel in ctx.kernels for n in _annotation_nodes(ctx, kernel)}
    for node, message in found:
        if id(node) in annotations:
            # fails when the module is imported, launched or not: no "nothing launches it" demotion
            yield RULE.finding(ctx.source.path, ctx.source.node_range(node), message)
        else:
            yield ctx.finding(node, message)
