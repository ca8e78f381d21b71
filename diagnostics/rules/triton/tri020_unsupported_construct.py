"""TRI020 unsupported-construct: Python that Triton's JIT frontend refuses inside a kernel.

A `@triton.jit` body is not run by Python: triton's `CodeGenerator` (triton/compiler/
code_generator.py) walks its AST and has a `visit_*` method only for the subset of Python it can
lower. Everything else ends in `generic_visit` ("unsupported AST node type: Try"), an explicit
`NotImplementedError`/assertion, or a `NameError` from its name lookup, which knows only the
kernel's locals, `tl.constexpr` globals, modules, jit functions and eleven builtins.

Each construct reported here was compiled with triton 3.9 for sm_90 and seen to fail (the page
lists the messages). Constructs that triton 3.9 does accept are left alone on purpose: chained
comparisons, `is`/`is not`, list literals (they become tuples), comprehensions over tuples,
`with` on Triton's own context managers, `*args`, and a `raise` under an `if` (a compile-time guard that is skipped when its condition is false).
Calls to jit functions of other modules cannot be told apart statically and are not reported.
"""
from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator
from functools import cached_property

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Finding, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.triton_ast import Kernel, tl_name, walk_nodes

RULE = Rule(
    code="TRI020",
    name="unsupported-construct",
    summary="Python construct that the Triton JIT frontend rejects inside a kernel",
    severity=Severity.ERROR,
    fixable=False,
    # Opt-in: 0 of 8 findings were true positives in round 2 of the real-world study
    # (benchmarks/realworld/labels/round2_*.csv), under the 90% the default set requires.
    default=False,
    scope="statement",   # one call or construct, the imports, the kernel's names and the module's bindings
)

# `CodeGenerator.builtin_namespace` in triton 3.9: the only builtins a kernel may call.
SUPPORTED_BUILTINS = frozenset({"len", "list", "range", "float", "int", "isinstance", "getattr", "hasattr", "print", "min", "max"})
_PYTHON_BUILTINS = frozenset(
    name for name in dir(builtins)
    if not name.startswith("_") and callable(getattr(builtins, name))
    and not (isinstance(getattr(builtins, name), type) and issubclass(getattr(builtins, name), BaseException))
)
_BUILTIN_HINTS = {
    "abs": "use `tl.abs(x)`",
    "sum": "use `tl.sum(x, axis)` for a tensor, or `+` for a few values",
    "pow": "use `**` on constexprs or `tl.extra.libdevice.pow` on tensors",
    "round": "use `tl.extra.libdevice.rint` (or `tl.floor(x + 0.5)`)",
    "zip": "index the tuples in a `for i in tl.static_range(len(t))` loop",
    "enumerate": "loop over `tl.static_range(len(t))` and index the tuple",
    "tuple": "write the tuple literal `(a, b)`",
    "bool": "compare explicitly (`x != 0`)",
    "any": "use `tl.reduce_or` or `tl.max(mask.to(tl.int1), 0)`",
    "all": "use `tl.min(mask.to(tl.int32), 0) != 0`",
    "str": "use an f-string of constexpr values in `tl.static_print`",
}

# AST node types with no `visit_*` method in triton 3.9's CodeGenerator (generic_visit raises).
_EXPRESSIONS = {
    ast.Lambda: "a `lambda` is not supported in a @triton.jit function (\"unsupported AST node type: Lambda\"); "
                "define it at module level with @triton.jit (a `tl.reduce` combine_fn must be a jit function)",
    ast.Dict: "dict literals are not supported in a @triton.jit function (\"unsupported AST node type: Dict\"); "
              "use a tuple or separate variables",
    ast.DictComp: "dict comprehensions are not supported in a @triton.jit function; use a tuple or separate variables",
    ast.Set: "set literals are not supported in a @triton.jit function (\"unsupported AST node type: Set\"); use a tuple",
    ast.SetComp: "set comprehensions are not supported in a @triton.jit function; use a tuple comprehension",
    ast.GeneratorExp: "generator expressions are not supported in a @triton.jit function; use a comprehension "
                      "over a tuple (`[f(x) for x in (a, b)]`) or a `tl.static_range` loop",
    ast.Yield: "a @triton.jit function cannot `yield`; return a value or store results through a pointer",
    ast.YieldFrom: "a @triton.jit function cannot `yield from`; return a value or store results through a pointer",
}
_STATEMENTS = {
    ast.Try: "`try`/`except` is not supported in a @triton.jit function (\"unsupported AST node type: Try\"); "
             "handle errors in the host code that launches the kernel",
    ast.ClassDef: "class definitions are not supported in a @triton.jit function; define the class at module level",
    ast.FunctionDef: "nested function definitions are not allowed in a @triton.jit function; move the helper to "
                     "module level and decorate it with @triton.jit",
    ast.AsyncFunctionDef: "nested function definitions are not allowed in a @triton.jit function; move the helper "
                          "to module level and decorate it with @triton.jit",
    ast.Global: "`global` is not supported in a @triton.jit function; pass the value as an argument or define it "
                "as `NAME = tl.constexpr(value)` at module level",
    ast.Delete: "`del` is not supported in a @triton.jit function (\"unsupported AST node type: Delete\"); remove it",
    ast.Import: "imports are not supported in a @triton.jit function; import at module level",
    ast.ImportFrom: "imports are not supported in a @triton.jit function; import at module level",
    ast.Break: "`break` is not supported in Triton loops (\"unsupported AST node type: Break\"); put the exit "
               "condition in a `while` loop's test, or mask the remaining iterations",
    ast.Continue: "`continue` is not supported in Triton loops (\"unsupported AST node type: Continue\"); wrap the "
                  "rest of the loop body in an `if`",
}
if hasattr(ast, "TryStar"):
    _STATEMENTS[ast.TryStar] = _STATEMENTS[ast.Try]
if hasattr(ast, "Match"):
    _STATEMENTS[ast.Match] = ("`match` is not supported in a @triton.jit function (\"unsupported AST node type: "
                              "Match\"); use `if`/`elif` on constexpr values")

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.Raise)
_INTERESTING = frozenset({*_EXPRESSIONS, *_SCOPES, ast.ListComp, ast.Call})
_RANGE_CALLS = {"range", "triton.language.range", "triton.language.static_range", "triton.language.arange"}


def _module_bindings(tree: ast.Module) -> dict[str, list[ast.stmt]]:
    """Module-level statements that bind each name (also inside module-level `if`/`try`)."""
    out: dict[str, list[ast.stmt]] = {}

    def bind(name: str, stmt: ast.stmt) -> None:
        out.setdefault(name, []).append(stmt)

    def visit(body: list[ast.stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bind(stmt.name, stmt)
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                for alias in stmt.names:
                    bind((alias.asname or alias.name).split(".")[0], stmt)
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.With)):
                targets = (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if not isinstance(stmt, ast.With)
                           else [i.optional_vars for i in stmt.items if i.optional_vars is not None])
                for target in targets:
                    for node in walk_nodes(target):
                        if isinstance(node, ast.Name):
                            bind(node.id, stmt)
                if isinstance(stmt, (ast.For, ast.With)):
                    visit(stmt.body)
            elif isinstance(stmt, ast.If):
                visit(stmt.body)
                visit(stmt.orelse)
            elif isinstance(stmt, ast.Try) or (hasattr(ast, "TryStar") and isinstance(stmt, ast.TryStar)):
                visit(stmt.body)
                for handler in stmt.handlers:
                    visit(handler.body)
                visit(stmt.orelse)
                visit(stmt.finalbody)

    visit(tree.body)
    del visit   # a recursive closure refers to itself (and to `out`): free both now, not at a GC pass
    return out


def _is_plain_data(expr: ast.expr) -> bool:
    """A literal number/string/tuple: what a module constant like `BLOCK = 128` holds."""
    if isinstance(expr, ast.Constant):
        return expr.value is not None and not isinstance(expr.value, bytes)
    if isinstance(expr, ast.UnaryOp):
        return _is_plain_data(expr.operand)
    if isinstance(expr, ast.BinOp):
        return _is_plain_data(expr.left) and _is_plain_data(expr.right)
    if isinstance(expr, (ast.Tuple, ast.List)):
        return bool(expr.elts) and all(_is_plain_data(e) for e in expr.elts)
    return False


def _plain_globals(bindings: dict[str, list[ast.stmt]]) -> set[str]:
    """Module names bound only to plain Python data (not `tl.constexpr(...)`): kernels cannot read them."""
    out = set()
    for name, stmts in bindings.items():
        plain = all(isinstance(s, (ast.Assign, ast.AnnAssign)) and s.value is not None and _is_plain_data(s.value)
                    for s in stmts)
        if plain and all(isinstance(s, ast.AnnAssign) or len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
                         for s in stmts):
            out.add(name)
    return out


def _plain_functions(bindings: dict[str, list[ast.stmt]], kernel_names: set[str]) -> set[str]:
    """Module functions with no decorator at all, bound once: plain Python that a kernel cannot call.
    Decorated ones may be `triton.constexpr_function`s or jit wrappers, so they are left alone."""
    return {
        name for name, stmts in bindings.items()
        if name not in kernel_names and len(stmts) == 1
        and isinstance(stmts[0], (ast.FunctionDef, ast.AsyncFunctionDef)) and not stmts[0].decorator_list
    }


def _local_names(kernel: Kernel) -> set[str]:
    args = kernel.node.args
    names = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    names |= {n.id for n in kernel.nodes if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    return names


class _KernelChecker:
    """Walks one kernel: statements with their loop/`if` context, then expressions."""

    def __init__(self, ctx: PythonContext, kernel: Kernel, plain_globals: set[str], plain_functions: set[str],
                 module_names: set[str]):
        self.ctx = ctx
        self.kernel = kernel
        self.plain_globals = plain_globals
        self.plain_functions = plain_functions
        self.module_names = module_names

    @cached_property
    def locals(self) -> set[str]:
        """Names the kernel binds itself (only needed when a candidate name shows up)."""
        return _local_names(self.kernel)

    def findings(self) -> Iterator[Finding]:
        kwarg = self.kernel.node.args.kwarg
        if kwarg is not None:
            yield from self._report(
                kwarg, f"@triton.jit functions do not accept `**{kwarg.arg}` (TypeError when the module is imported); "
                       "list the parameters explicitly")
        yield from self._statements(self.kernel.node.body, runtime_loop=False, guarded=False)
        yield from self._expressions()

    def _report(self, node: ast.AST, message: str) -> Iterator[Finding]:
        """The finding, where upstream Triton compiles `node`: vendor forks (Cambricon's, Ascend's,
        Metax's Triton) accept slice assignment, annotated constexpr globals and more."""
        if self.ctx.target.upstream(node):
            yield self.ctx.finding(node, message)

    # ---- statements ----------------------------------------------------------------------------
    def _is_static_range(self, loop: ast.For) -> bool:
        return isinstance(loop.iter, ast.Call) and tl_name(self.ctx.imports, loop.iter.func) == "static_range"

    def _statements(self, body: list[ast.stmt], runtime_loop: bool, guarded: bool) -> Iterator[Finding]:
        for stmt in body:
            message = _STATEMENTS.get(type(stmt))
            if message is not None:
                yield from self._report(stmt, message)
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    continue  # its body is not the kernel's
            if isinstance(stmt, ast.Raise) and not guarded:
                yield from self._report(
                    stmt, "`raise` is not supported in a @triton.jit function (\"unsupported AST node type: Raise\"); "
                          "use `tl.static_assert(cond, msg)` for compile-time checks or `tl.device_assert` at run time")
            elif isinstance(stmt, ast.Return) and runtime_loop:
                yield from self._report(
                    stmt, "`return` inside a `for`/`while` loop is not supported in Triton; end the loop through its "
                          "condition (or mask the remaining work) and return after it")
            elif isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                yield from self._targets(stmt)
            if isinstance(stmt, (ast.For, ast.AsyncFor)):
                static = isinstance(stmt, ast.For) and self._is_static_range(stmt)
                if stmt.orelse and static:
                    yield from self._report(
                        stmt, "Triton does not run the `else` of a `tl.static_range` loop as code (its assignments "
                              "are dropped, `x -= 1` fails with \"unsupported AST node type: Sub\"); loops cannot "
                              "`break`, so move the `else` body after the loop")
                elif stmt.orelse:
                    yield from self._report(
                        stmt, "`for ... else` is not supported in Triton (\"Don't know what to do with else after "
                              "for\"); loops cannot `break`, so move the `else` body after the loop")
                yield from self._statements(stmt.body, runtime_loop or not static, guarded)
                yield from self._statements(stmt.orelse, runtime_loop, guarded)
            elif isinstance(stmt, ast.While):
                if stmt.orelse:
                    yield from self._report(
                        stmt, "`while ... else` is not supported in Triton (the frontend asserts \"Not "
                              "implemented\"); loops cannot `break`, so move the `else` body after the loop")
                yield from self._statements(stmt.body, True, guarded)
                yield from self._statements(stmt.orelse, runtime_loop, guarded)
            elif isinstance(stmt, ast.If):
                yield from self._statements(stmt.body, runtime_loop, True)
                yield from self._statements(stmt.orelse, runtime_loop, True)
            elif isinstance(stmt, (ast.With, ast.AsyncWith)):
                yield from self._statements(stmt.body, runtime_loop, guarded)
            elif isinstance(stmt, ast.Try) or (hasattr(ast, "TryStar") and isinstance(stmt, ast.TryStar)):
                for part in (stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody):
                    yield from self._statements(part, runtime_loop, guarded)

    def _targets(self, stmt: ast.Assign | ast.AugAssign | ast.AnnAssign) -> Iterator[Finding]:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for target in targets:
            for node in walk_nodes(target):
                if isinstance(node, ast.Subscript):
                    yield from self._report(
                        node, "item assignment is not supported in Triton (\"__setitem__ is not supported in "
                              "triton\"): tensors and tuples are immutable; build a new value, e.g. "
                              "`x = tl.where(offs == i, v, x)`")
                    break
                if isinstance(node, ast.Attribute):
                    yield from self._report(
                        node, "attribute assignment is not supported in Triton; bind a new local name instead")
                    break
                if isinstance(node, ast.Starred):
                    yield from self._report(
                        node, "starred assignment targets are not supported in Triton; index the tuple instead")
                    break

    # ---- expressions ---------------------------------------------------------------------------
    def _expressions(self) -> Iterator[Finding]:
        nested: set[int] = set()  # nodes inside a nested def/class/lambda: reported once, at its head
        reported_names: set[str] = set()
        plain_globals = self.plain_globals
        for node in self.kernel.nodes:  # breadth-first: a parent comes before its children
            kind = type(node)
            if kind is ast.Name:  # the most common node: keep its test cheap
                if node.id in plain_globals and node.id not in reported_names and id(node) not in nested \
                        and isinstance(node.ctx, ast.Load) and node.id not in self.locals:
                    reported_names.add(node.id)
                    yield from self._report(
                        node, f"`{node.id}` is a plain module-level value: a kernel can read only `tl.constexpr` "
                              f"globals (NameError \"Cannot access global variable {node.id}\"); define it as "
                              f"`{node.id} = tl.constexpr(...)` or pass it as a `tl.constexpr` parameter")
                continue
            if kind not in _INTERESTING or (nested and id(node) in nested):
                continue
            if kind in _SCOPES:
                nested.update(id(n) for n in walk_nodes(node) if n is not node)
            message = _EXPRESSIONS.get(kind)
            if message is not None:
                yield from self._report(node, message)
            elif kind is ast.ListComp:
                yield from self._comprehension(node)
            elif kind is ast.Call:
                if tl_name(self.ctx.imports, node.func) == "static_assert":
                    # the message is evaluated only when the assertion fails, and errors in it are caught
                    nested.update(id(n) for arg in node.args[1:] for n in walk_nodes(arg))
                elif isinstance(node.func, ast.Name):
                    yield from self._call(node, reported_names)

    def _comprehension(self, node: ast.ListComp) -> Iterator[Finding]:
        if len(node.generators) > 1:
            yield from self._report(
                node, "nested comprehensions are not supported in Triton; use one comprehension per tuple, or "
                      "`tl.static_range` loops")
            return
        it = node.generators[0].iter
        path = self.ctx.imports.resolve(it.func) if isinstance(it, ast.Call) else None
        if path in _RANGE_CALLS and not (path == "range" and "range" in self.locals):
            yield from self._report(
                node, "Triton supports comprehensions only over tuples (\"only tuple comprehensions are "
                      "supported\"); iterate a tuple literal such as `(0, 1, 2, 3)`, or use a "
                      "`tl.static_range` loop")

    def _left_to_tri031(self) -> bool:
        """TRI031 (in the default set) reports a plain function called from a kernel when it runs."""
        settings = self.ctx.settings
        return settings is not None and settings.enabled("TRI031", self.ctx.source.path)

    def _call(self, call: ast.Call, reported: set[str]) -> Iterator[Finding]:
        name = call.func.id
        if name in self.locals or name in reported:
            return
        if (name in _PYTHON_BUILTINS and name not in SUPPORTED_BUILTINS and name not in self.module_names
                and name not in self.ctx.imports.names):
            reported.add(name)
            hint = _BUILTIN_HINTS.get(name, "kernels can call only range, len, min, max, int, float, isinstance, "
                                            "getattr, hasattr, print and list among Python's builtins")
            yield from self._report(
                call.func, f"`{name}` is not available in a @triton.jit function (NameError \"{name} is not "
                           f"defined\"); {hint}")
        elif name in self.plain_functions and not self._left_to_tri031():
            reported.add(name)
            yield from self._report(
                call.func, f"`{name}` is a plain Python function: a kernel can call only @triton.jit functions "
                           "(NameError \"Cannot access global variable\"); decorate it with @triton.jit, or with "
                           "@triton.constexpr_function if it computes a compile-time value")


def check(ctx: PythonContext) -> Iterator[Finding]:
    if not ctx.kernels:
        return
    bindings = _module_bindings(ctx.tree)
    kernel_names = {k.name for k in ctx.kernels}
    plain_globals = _plain_globals(bindings)
    plain_functions = _plain_functions(bindings, kernel_names)
    module_names = set(bindings)
    for kernel in ctx.kernels:
        if not ctx.target.upstream(kernel.node):
            continue  # a vendor fork's file or branch: its frontend is not upstream's
        yield from _KernelChecker(ctx, kernel, plain_globals, plain_functions, module_names).findings()
