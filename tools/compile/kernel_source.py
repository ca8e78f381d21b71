"""A kernel built from its source text alone: none of the file's statements is executed.

Compile-time insight on open and save uses this (the language server never runs a file the user
only opened). The namespace a kernel is compiled in holds only:

  * the file's imports of Triton itself (`import triton`, `import triton.language as tl`,
    `from triton.language.extra import libdevice`): Triton's modules, never the workspace's;
  * module-level constants whose value is a literal (`ast.literal_eval`), a literal wrapped in
    `tl.constexpr(...)`, or an attribute of Triton (`DTYPE = tl.float16`);
  * the file's `@triton.jit` functions, each compiled from its own `def` with its decorators left
    out, default values kept only where they are literals and annotations kept as their text (so
    evaluating the `def` evaluates nothing the user wrote); `triton.jit` is applied by the caller.

A kernel that needs any other name of the module (a config generator, a constant computed by a
call, a helper imported from another module) is not built: `needed_names` says which names, and
the caller reports "not inspected: needs NAME". Autotune configs and heuristics are not run either:
the caller passes the configs it read as literals (signature.py) as variants.

What still runs is Triton's compiler over the kernel's body; it evaluates calls and attributes on
compile-time values, so a kernel body written to escape could; the caller therefore builds kernels
only in a trusted workspace, in a child process with memory and time limits.

Standard library only: the compile worker imports this module under the user's interpreter.
"""
from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field

# Names Triton's code generator resolves without the module's globals (code_generator.builtin_namespace
# and the constants), and the Python builtins a `def` line itself may mention.
TRITON_BUILTINS = frozenset({"len", "list", "range", "float", "int", "isinstance", "getattr", "hasattr", "print",
                             "min", "max", "True", "False", "None", "tuple", "bool", "abs", "zip", "enumerate"})
JIT_NAMES = frozenset({"triton.jit", "triton.runtime.jit", "triton.runtime.jit.jit", "triton.runtime.jit"})
WRAPPERS = frozenset({"triton.autotune", "triton.heuristics", "triton.runtime.autotune",
                      "triton.runtime.heuristics", "triton.runtime.autotuner.autotune",
                      "triton.runtime.autotuner.heuristics"})


@dataclass
class KernelSource:
    """What a file offers a source-only build, read from its AST."""

    imports: list = field(default_factory=list)          # ast.Import / ast.ImportFrom of triton modules
    aliases: dict = field(default_factory=dict)           # local name -> dotted triton path
    constants: dict = field(default_factory=dict)         # name -> ("literal" | "constexpr" | "attr", value)
    jit_defs: dict = field(default_factory=dict)          # name -> ast.FunctionDef (decorated with triton.jit)
    jit_options: dict = field(default_factory=dict)       # name -> literal keywords of `@triton.jit(...)`
    other: set = field(default_factory=set)               # names the module binds some other way


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _is_triton_module(name: str | None) -> bool:
    return bool(name) and (name == "triton" or name.startswith("triton."))


def _literal(node: ast.AST | None):
    """(True, value) when `node` is a literal, else (False, None)."""
    if node is None:
        return False, None
    try:
        return True, ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False, None


def _statements(body: list[ast.stmt]):
    """Top-level statements, and those of top-level `if` / `try` blocks (guarded imports)."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.If):
            yield from _statements(stmt.body + stmt.orelse)
        elif isinstance(stmt, ast.Try):
            yield from _statements(stmt.body + [s for h in stmt.handlers for s in h.body] + stmt.orelse + stmt.finalbody)


def resolve(aliases: dict, node: ast.AST) -> str | None:
    """The dotted path of `node` through the file's triton imports (`tl.constexpr` ->
    `triton.language.constexpr`), or None when it is not rooted at one."""
    name = _dotted(node)
    if name is None:
        return None
    head, _, rest = name.partition(".")
    if head not in aliases:
        return None
    return aliases[head] + ("." + rest if rest else "")


def _decorator_name(aliases: dict, node: ast.AST) -> str | None:
    return resolve(aliases, node.func if isinstance(node, ast.Call) else node)


def read_source(tree: ast.Module) -> KernelSource:
    """Sort the module's bindings into what a source-only build may use and what it may not."""
    out = KernelSource()
    for stmt in _statements(tree.body):
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                local = alias.asname or alias.name.split(".")[0]
                if _is_triton_module(alias.name):
                    out.aliases[local] = alias.name if alias.asname else local
                    out.imports.append(stmt)
                else:
                    out.other.add(local)
        elif isinstance(stmt, ast.ImportFrom):
            triton = not stmt.level and _is_triton_module(stmt.module)
            for alias in stmt.names:
                local = alias.asname or alias.name
                if triton and alias.name != "*":
                    out.aliases[local] = f"{stmt.module}.{alias.name}"
                else:
                    out.other.add(local)
            if triton:
                out.imports.append(stmt)
    for stmt in _statements(tree.body):
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            value = _constant(out.aliases, stmt.value) if len(names) == len(targets) else None
            for name in names:
                if value is not None and name not in out.other:
                    out.constants[name] = value
                else:
                    out.constants.pop(name, None)
                    out.other.add(name)
            for target in targets:
                if not isinstance(target, ast.Name):
                    out.other.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names = [_decorator_name(out.aliases, d) for d in stmt.decorator_list]
            jit = next((d for d, n in zip(stmt.decorator_list, names) if n in JIT_NAMES), None)
            if isinstance(stmt, ast.FunctionDef) and jit is not None:
                out.jit_defs[stmt.name] = stmt
                out.jit_options[stmt.name] = _jit_options(jit)
                out.other.discard(stmt.name)
            else:
                out.jit_defs.pop(stmt.name, None)
                out.other.add(stmt.name)
        elif isinstance(stmt, ast.ClassDef):
            out.other.add(stmt.name)
        elif isinstance(stmt, (ast.For, ast.With, ast.AugAssign)):
            out.other.update(n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    return out


def _constant(aliases: dict, value: ast.AST | None):
    ok, literal = _literal(value)
    if ok:
        return ("literal", literal)
    if isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords:
        if resolve(aliases, value.func) in ("triton.language.constexpr", "triton.language.core.constexpr"):
            ok, literal = _literal(value.args[0])
            if ok:
                return ("constexpr", literal)
    path = resolve(aliases, value) if isinstance(value, ast.Attribute) else None
    if path is not None:
        return ("attr", path)
    return None


def _jit_options(decorator: ast.AST) -> dict:
    """Literal keywords of `@triton.jit(...)` (do_not_specialize, ...); others are left out."""
    if not isinstance(decorator, ast.Call):
        return {}
    options = {}
    for kw in decorator.keywords:
        ok, value = _literal(kw.value)
        if kw.arg and ok:
            options[kw.arg] = value
    return options


def _bound_in(fn: ast.FunctionDef) -> set[str]:
    names = {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}
    for extra in (fn.args.vararg, fn.args.kwarg):
        if extra is not None:
            names.add(extra.arg)
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not fn:
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def free_names(fn: ast.FunctionDef) -> list[str]:
    """Module-level names the body of `fn`, its default values and its annotations read (Triton's
    compiler evaluates all three from the source text), in the order they first appear."""
    bound = _bound_in(fn)
    seen: dict[str, None] = {}
    params = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs, fn.args.vararg, fn.args.kwarg]
    signature = [d for d in [*fn.args.defaults, *fn.args.kw_defaults, fn.returns,
                             *(a.annotation for a in params if a is not None)] if d is not None]
    for node in (n for d in signature for n in ast.walk(d)):
        if isinstance(node, ast.Name):
            seen.setdefault(node.id)
    for stmt in fn.body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in bound:
                seen.setdefault(node.id)
    return list(seen)


def needed_names(source: KernelSource, kernel: str) -> list[str]:
    """The names `kernel` (and the jit helpers it calls) read that a source-only build lacks."""
    missing: dict[str, None] = {}
    todo, done = [kernel], set()
    while todo:
        name = todo.pop()
        if name in done:
            continue
        done.add(name)
        fn = source.jit_defs.get(name)
        if fn is None:
            missing.setdefault(name)
            continue
        for free in free_names(fn):
            if free in source.jit_defs:
                todo.append(free)
            elif free in source.aliases or free in source.constants:
                continue
            elif free in TRITON_BUILTINS and free not in source.other:
                continue
            else:
                missing.setdefault(free)
    return list(missing)


def _sanitised(fn: ast.FunctionDef, source: KernelSource) -> ast.FunctionDef:
    """`fn` without decorators, with non-literal defaults replaced by None (or by the literal
    constant they name) and every annotation replaced by its text: evaluating this `def`
    evaluates nothing the user wrote."""
    clean = ast.FunctionDef(name=fn.name, args=ast.arguments(
        posonlyargs=[_arg(a) for a in fn.args.posonlyargs], args=[_arg(a) for a in fn.args.args],
        vararg=_arg(fn.args.vararg) if fn.args.vararg else None,
        kwonlyargs=[_arg(a) for a in fn.args.kwonlyargs],
        kw_defaults=[_default(d, source) if d is not None else None for d in fn.args.kw_defaults],
        kwarg=_arg(fn.args.kwarg) if fn.args.kwarg else None,
        defaults=[_default(d, source) for d in fn.args.defaults]),
        body=fn.body, decorator_list=[], returns=None, type_comment=None)
    if hasattr(ast.FunctionDef, "type_params") or "type_params" in getattr(ast.FunctionDef, "_fields", ()):
        clean.type_params = []
    return ast.copy_location(clean, fn)


def _arg(a: ast.arg) -> ast.arg:
    annotation = ast.copy_location(ast.Constant(ast.unparse(a.annotation)), a.annotation) if a.annotation else None
    return ast.copy_location(ast.arg(arg=a.arg, annotation=annotation, type_comment=None), a)


def _default(node: ast.AST, source: KernelSource) -> ast.AST:
    ok, value = _literal(node)
    if not ok and isinstance(node, ast.Name) and source.constants.get(node.id, ("",))[0] in ("literal", "constexpr"):
        ok, value = True, source.constants[node.id][1]
    return ast.copy_location(ast.Constant(value if ok and isinstance(value, (int, float, bool, str, type(None))) else None), node)


SAFE_BUILTINS = {name: getattr(builtins, name) for name in
                 ("len", "list", "range", "float", "int", "isinstance", "getattr", "hasattr", "print", "min", "max",
                  "tuple", "bool", "abs", "zip", "enumerate", "dict", "str", "ValueError", "TypeError",
                  "AssertionError", "NotImplementedError")}


def build_namespace(tree: ast.Module, path: str, module: dict, jit) -> KernelSource:
    """Fill `module` (a module's __dict__ whose __file__ is `path`) with the triton imports, the
    literal constants and the jit functions of `tree`, each jit function wrapped by `jit(fn, **options)`.
    Nothing of the user's is executed: imports are Triton's, constants literals, `def`s sanitised."""
    source = read_source(tree)
    module["__builtins__"] = dict(SAFE_BUILTINS, __import__=builtins.__import__, __build_class__=builtins.__build_class__)
    for stmt in source.imports:
        code = compile(ast.Module(body=[_triton_only(stmt)], type_ignores=[]), path, "exec")
        try:
            exec(code, module)  # noqa: S102 - imports of the triton package only
        except ImportError:
            pass
    module["__builtins__"] = dict(SAFE_BUILTINS)
    tl = None
    for name, (kind, value) in source.constants.items():
        if kind == "literal":
            module[name] = value
        elif kind == "constexpr":
            if tl is None:
                import triton.language as tl
            module[name] = tl.constexpr(value)
        else:
            obj = _triton_attr(value)
            if obj is not None:
                module[name] = obj
    for name, fn in source.jit_defs.items():
        code = compile(ast.Module(body=[_sanitised(fn, source)], type_ignores=[]), path, "exec")
        exec(code, module)  # noqa: S102 - a sanitised def: defaults are literals, annotations strings
        module[name] = jit(module[name], **source.jit_options.get(name, {}))
    return source


def _triton_only(stmt: ast.stmt) -> ast.stmt:
    """An import statement reduced to its triton names."""
    if isinstance(stmt, ast.Import):
        return ast.copy_location(ast.Import(names=[a for a in stmt.names if _is_triton_module(a.name)]), stmt)
    return stmt


def _triton_attr(path: str):
    import importlib

    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


class NotLiteral(ValueError):
    """An expression a source-only build does not evaluate; the message names what it needs."""


_BINOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.FloorDiv: lambda a, b: a // b, ast.Div: lambda a, b: a / b, ast.Mod: lambda a, b: a % b,
           ast.LShift: lambda a, b: a << b if 0 <= b <= 64 else _too_big(), ast.RShift: lambda a, b: a >> b,
           ast.BitAnd: lambda a, b: a & b, ast.BitOr: lambda a, b: a | b, ast.BitXor: lambda a, b: a ^ b,
           ast.Pow: lambda a, b: a ** b if abs(b) <= 64 and abs(a) <= 2**32 else _too_big()}
_COMPARE = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
            ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
            ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}


def _too_big():
    raise NotLiteral("a power too large to evaluate")


def _next_power_of_2(n):
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


_CALLS = {"triton.next_power_of_2": _next_power_of_2, "triton.cdiv": lambda a, b: -(-a // b),
          "min": min, "max": max, "int": int, "bool": bool, "abs": abs}


def eval_heuristic(source: KernelSource, node: ast.AST, args: dict):
    """The value of a `@triton.heuristics` entry written as `lambda args: <expression>` over
    `args["NAME"]`, numbers, arithmetic, comparisons and `triton.next_power_of_2` / `triton.cdiv` /
    min / max, without running it; NotLiteral for anything else."""
    if not isinstance(node, ast.Lambda) or len(node.args.args) != 1:
        raise NotLiteral("a lambda of one argument")
    param = node.args.args[0].arg

    def ev(n: ast.AST):
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float, bool, str, type(None))):
            return n.value
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == param:
            key = n.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                if key.value not in args:
                    raise NotLiteral(f"the value of {key.value}")
                value = args[key.value]
                if not isinstance(value, (int, float, bool)):
                    raise NotLiteral(f"the value of {key.value}")
                return value
            raise NotLiteral("args[...] with a constant name")
        if isinstance(n, ast.Name) and source.constants.get(n.id, ("",))[0] in ("literal", "constexpr"):
            return source.constants[n.id][1]
        if isinstance(n, ast.BinOp) and type(n.op) in _BINOPS:
            return _BINOPS[type(n.op)](ev(n.left), ev(n.right))
        if isinstance(n, ast.UnaryOp):
            value = ev(n.operand)
            return {ast.Not: lambda v: not v, ast.USub: lambda v: -v, ast.UAdd: lambda v: +v,
                    ast.Invert: lambda v: ~v}[type(n.op)](value)
        if isinstance(n, ast.BoolOp):
            values = [ev(v) for v in n.values]
            out = values[0]
            for v in values[1:]:
                out = (out and v) if isinstance(n.op, ast.And) else (out or v)
            return out
        if isinstance(n, ast.Compare) and all(type(op) in _COMPARE for op in n.ops):
            left = ev(n.left)
            for op, right_node in zip(n.ops, n.comparators):
                right = ev(right_node)
                if not _COMPARE[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(n, ast.IfExp):
            return ev(n.body) if ev(n.test) else ev(n.orelse)
        if isinstance(n, (ast.Tuple, ast.List)):
            return tuple(ev(e) for e in n.elts)
        if isinstance(n, ast.Call) and not n.keywords:
            name = _dotted(n.func)
            path = resolve(source.aliases, n.func) if name and "." in name else name
            if path in _CALLS:
                return _CALLS[path](*[ev(a) for a in n.args])
            raise NotLiteral(f"{name or 'a call'}(...)")
        raise NotLiteral(ast.unparse(n)[:60])

    try:
        return ev(node.body)
    except NotLiteral:
        raise
    except (ArithmeticError, TypeError, ValueError, KeyError) as exc:
        raise NotLiteral(f"an expression that fails here ({type(exc).__name__})") from exc
