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
from tritonify.diagnostics.triton_api import for_version
from tritonify.diagnostics.triton_ast import Kernel, child_nodes, tl_name, walk_nodes

RULE = Rule(
    code="TRI020",
    name="unsupported-construct",
    summary="Python construct that the Triton JIT frontend rejects inside a kernel",
    severity=Severity.ERROR,
    fixable=False,
    # In the default set since issue 25's third pass: every finding it gives on the real-world
    # corpus read as Triton 3.6 (3: a `continue` in a run-time loop, two plain module globals) is a
    # compile break of that version, and on the TritonBench-T ground truth it names the cause of
    # 13 rejected programs that no default rule caught (results/freshcode/). Round 2's 0/8 were
    # sub-cases since removed or made version-aware (`**kwargs`: Triton 3.9 only).
    default=True,
    compile_break=True,
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


_BUILTIN_NAMES = frozenset(dir(builtins))
# Text that can bind a module global without a binding statement the tree shows.
_DYNAMIC_GLOBALS = ("globals()", "exec(", "__builtins__", "sys.modules[__name__]", "__dict__")
_UNDEFINED_HINTS = {
    "tl": "import it: `import triton.language as tl`",
    "triton": "import it: `import triton`",
    "libdevice": "import it: `from triton.language.extra import libdevice`",
    "math": "import it (`import math`); only its constants fold in a kernel, use `tl.` functions on tensors",
}


def _names_bound_in_module(tree: ast.Module) -> set[str] | None:
    """Every name the module could bind as a global: any name stored, imported, defined or declared
    `global` outside a function body (class bodies and comprehensions included, to stay on the
    safe side), plus the names of `global` statements anywhere. None where a star import can bind
    anything."""
    bound: set[str] = set()
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        for child in ast.iter_child_nodes(node):
            kind = type(child)
            if kind in (ast.FunctionDef, ast.AsyncFunctionDef):
                bound.add(child.name)
                todo.extend(child.decorator_list)
                todo.extend(d for d in (*child.args.defaults, *child.args.kw_defaults) if d is not None)
                bound.update(name for n in walk_nodes(child)
                             if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names)
                continue
            if kind is ast.Lambda:
                continue
            if kind is ast.ClassDef:
                bound.add(child.name)
            elif kind in (ast.Import, ast.ImportFrom):
                for alias in child.names:
                    if alias.name == "*":
                        return None
                    bound.add((alias.asname or alias.name).split(".")[0])
            elif kind is ast.Name and not isinstance(child.ctx, ast.Load):
                bound.add(child.id)
            elif kind is ast.ExceptHandler and child.name:
                bound.add(child.name)
            elif kind in (ast.Global, ast.Nonlocal):
                bound.update(child.names)
            elif hasattr(ast, "MatchAs") and kind in (ast.MatchAs, ast.MatchStar) and child.name:
                bound.add(child.name)
            elif hasattr(ast, "MatchMapping") and kind is ast.MatchMapping and child.rest:
                bound.add(child.rest)
            todo.append(child)
    return bound


def _compiled_statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """The kernel's top-level statements Triton certainly lowers: those before the first `return`."""
    out = []
    for stmt in body:
        out.append(stmt)
        if isinstance(stmt, ast.Return):
            break
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
                 module_names: set[str], bound_anywhere=None):
        self.ctx = ctx
        self.kernel = kernel
        self.plain_globals = plain_globals
        self.plain_functions = plain_functions
        self.module_names = module_names
        # () -> the names the whole module may bind (None: anything may be bound), or None when
        # undefined names are not read for this kernel
        self.bound_anywhere = bound_anywhere
        self.imported_plain: dict[str, str] = {}   # plain globals imported from a workspace module -> that module

    @cached_property
    def locals(self) -> set[str]:
        """Names the kernel binds itself (only needed when a candidate name shows up)."""
        return _local_names(self.kernel)

    def findings(self) -> Iterator[Finding]:
        kwarg = self.kernel.node.args.kwarg
        api = for_version()
        if kwarg is not None and api.features.get("jit_rejects_var_keyword"):
            # `triton.jit` raises on `**kwargs` only from Triton 3.9 (runtime/jit.py); before it
            # the module imports (a TritonBench program with an unlaunched `**META` kernel ran
            # on 3.6), so the finding waits for a version where the failure is certain.
            yield from self._report(
                kwarg, f"@triton.jit functions do not accept `**{kwarg.arg}` in Triton {api.version} (TypeError when "
                       "the module is imported); list the parameters explicitly")
        yield from self._statements(self.kernel.node.body, runtime_loop=False, guarded=False)
        yield from self._expressions()
        yield from self._annotations()
        if self.bound_anywhere is not None:
            yield from self._undefined_names()

    def _annotations(self) -> Iterator[Finding]:
        """Names in the parameters' annotations that Triton's code generator cannot look up. It visits
        a kernel's parameter annotations like its body (`visit_arg`), in the module's globals and its
        builtin namespace: `flag: bool` fails with NameError "bool is not defined" (a TritonBench
        program on Triton 3.6; Triton 3.9's frontend on CPU), `x: Optional[int]` with "Cannot access
        global variable Optional" (3.9). `int`, `float`, `torch.Tensor`, `tl.int64`, `tl.constexpr`
        and string annotations are fine. Not read where `from __future__ import annotations` is in
        force."""
        args = self.kernel.node.args
        annotated = [a for a in (*args.posonlyargs, *args.args, *args.kwonlyargs) if a.annotation is not None]
        if not annotated or "from __future__ import annotations" in self.ctx.source.text:
            return
        imports = self.ctx.imports
        for arg in annotated:
            for node in walk_nodes(arg.annotation):
                if not isinstance(node, ast.Name) or node.id in self.module_names or node.id in imports.names:
                    if isinstance(node, ast.Name) and (imports.resolve(node) or "").startswith("typing."):
                        yield from self._report(
                            node, f"`{node.id}` (from `typing`) in the annotation of `{arg.arg}`: Triton reads "
                                  f"parameter annotations like kernel code and cannot use it (NameError \"Cannot "
                                  f"access global variable {node.id}\"); drop the annotation or write `tl.constexpr`")
                        break
                    if isinstance(node, ast.Name) and node.id in self.plain_globals:
                        yield from self._report(
                            node, f"`{node.id}` in the annotation of `{arg.arg}` is a plain module-level value: "
                                  f"Triton reads parameter annotations like kernel code (NameError \"Cannot access "
                                  f"global variable {node.id}\"); drop the annotation")
                        break
                    continue
                if node.id in _BUILTIN_NAMES and node.id not in SUPPORTED_BUILTINS:
                    yield from self._report(
                        node, f"`{node.id}` in the annotation of `{arg.arg}`: Triton reads parameter annotations "
                              f"like kernel code and has no `{node.id}` (NameError \"{node.id} is not defined\"); "
                              "drop the annotation, or annotate a compile-time flag `tl.constexpr`")
                    break

    def _undefined_names(self) -> Iterator[Finding]:
        """A name the kernel reads that nothing binds: not a parameter or local, not bound anywhere
        at module level (nor declared `global`), not a Python builtin. Triton looks names up in the
        kernel's scope, then its module's globals, then a few builtins: this one fails with
        NameError "X is not defined". Only statements Triton certainly lowers are read: none under
        an `if` (a constexpr condition prunes its branch unread), after a `return`, in a nested
        scope, or in a `tl.static_assert` message. The whole-module reading runs only when a name
        is left after the cheap sets (module-level bindings, imports, the kernel's own names)."""
        name_type = ast.Name
        loose = {node.id for node in self.kernel.nodes if node.__class__ is name_type}
        loose = loose.difference(self.module_names, self.ctx.imports.names, _BUILTIN_NAMES)
        loose = {name for name in loose if not name.startswith("__")}
        if not loose:
            return
        loose -= self.locals
        if not loose:
            return
        bound = self.bound_anywhere()
        if bound is None:
            return
        loose -= bound
        if not loose:
            return
        candidates: dict[str, ast.Name] = {}
        todo: list[ast.AST] = list(_compiled_statements(self.kernel.node.body))
        at = 0
        while at < len(todo):
            node = todo[at]
            at += 1
            kind = type(node)
            if kind is ast.Name:
                if node.id in loose and node.id not in candidates and isinstance(node.ctx, ast.Load):
                    candidates[node.id] = node
                continue
            if kind in (ast.If, ast.IfExp):
                todo.append(node.test)
                continue
            if kind in _SCOPES or kind in (ast.ListComp, ast.Lambda):
                continue
            if kind is ast.Call and tl_name(self.ctx.imports, node.func) == "static_assert":
                todo.extend(node.args[:1])
                continue
            todo.extend(child_nodes(node))
        for name, node in sorted(candidates.items(), key=lambda kv: (kv[1].lineno, kv[1].col_offset)):
            hint = _UNDEFINED_HINTS.get(name, "define it, import it, or pass it as a parameter")
            yield from self._report(
                node, f"`{name}` is not defined in this file: the kernel's name lookup fails (NameError "
                      f"\"{name} is not defined\"); {hint}")

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
            if target.__class__ is ast.Name:
                continue   # the common case: nothing below it
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
                    origin = self.imported_plain.get(node.id)
                    what = (f"`{node.id}` is a plain value imported from `{origin}`" if origin is not None
                            else f"`{node.id}` is a plain module-level value")
                    where = f" where `{origin}` defines it" if origin else ""
                    yield from self._report(
                        node, f"{what}: a kernel can read only `tl.constexpr` "
                              f"globals (NameError \"Cannot access global variable {node.id}\"); define it as "
                              f"`{node.id} = tl.constexpr(...)`{where} or pass it as a `tl.constexpr` parameter")
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


def _with_enclosing_names(ctx: PythonContext, kernel: Kernel, bound_anywhere):
    """`bound_anywhere` plus every name the functions around a nested kernel bind (their parameters,
    and anything stored, imported, defined or declared anywhere in their bodies)."""
    def lookup() -> set[str] | None:
        bound = bound_anywhere()
        if bound is None:
            return None
        names = set(bound)
        for anc in ctx.ancestors(kernel.node):
            if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                for node in walk_nodes(anc):
                    if isinstance(node, ast.arg):
                        names.add(node.arg)
                    elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                        names.add(node.id)
                    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                        names.add(node.name)
                    elif isinstance(node, (ast.Import, ast.ImportFrom)):
                        names.update((a.asname or a.name).split(".")[0] for a in node.names)
                    elif isinstance(node, (ast.Global, ast.Nonlocal)):
                        names.update(node.names)
                    elif isinstance(node, ast.ExceptHandler) and node.name:
                        names.add(node.name)
        return names
    return lookup


def check(ctx: PythonContext) -> Iterator[Finding]:
    if not ctx.kernels:
        return
    bindings = _module_bindings(ctx.tree)
    kernel_names = {k.name for k in ctx.kernels}
    plain_globals = _plain_globals(bindings)
    # plain values imported from a workspace module (`from vllm.triton_utils import LOG2E`, there
    # `LOG2E = 1.44...`): Triton reads the kernel's module globals, where the import put the float
    imported_plain = {name: ctx.imports.resolve(ast.Name(id=name, ctx=ast.Load())) or ""
                      for name in ctx.imports.imported_plain_values()
                      if len(bindings.get(name, ())) == 1 and isinstance(bindings[name][0], ast.ImportFrom)}
    imported_plain = {name: path.rpartition(".")[0] for name, path in imported_plain.items()}
    plain_globals |= set(imported_plain)
    plain_functions = _plain_functions(bindings, kernel_names)
    module_names = set(bindings)
    text = ctx.source.text
    dynamic = any(d in text for d in _DYNAMIC_GLOBALS)

    def bound_anywhere() -> set[str] | None:
        return None if dynamic else ctx.per_file(("tri020-bound-names",), lambda: _names_bound_in_module(ctx.tree))
    for kernel in ctx.kernels:
        if not ctx.target.upstream(kernel.node):
            continue  # a vendor fork's file or branch: its frontend is not upstream's
        # A kernel defined inside a function may read the enclosing functions' locals as closure
        # variables: for it, every name those functions bind anywhere counts as bound too.
        top_level = ctx.parents.get(kernel.node) is ctx.tree
        lookup = None
        if not dynamic:
            lookup = bound_anywhere if top_level else _with_enclosing_names(ctx, kernel, bound_anywhere)
        checker = _KernelChecker(ctx, kernel, plain_globals, plain_functions, module_names, lookup)
        checker.imported_plain = imported_plain
        yield from checker.findings()
