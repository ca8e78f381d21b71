"""Static dtype and launch-site facts shared by the precision rules (TRI002, TRI013, TRI015,
TRI016, TRI017, TRI022).

The registry skips modules whose name starts with `_`, so this is a helper, not a rule.

Everything here answers "do we *know*?" questions: when the dtype of an expression cannot be
told from the source, the answer is None and the rules stay quiet (precision beats recall).

* `dtype_kind` maps `tl.float32`, `torch.double`, ... to a short kind ("fp32", "fp64", ...).
* `launches` finds `kernel[grid](...)` calls in the same file and binds their arguments to the
  kernel's parameters; `HostDtypes` follows simple local assignments on the host
  (`x = x.double()`, `out = torch.empty_like(x)`) to tell a tensor argument's dtype.
* `KernelDtypes` infers the dtype of expressions inside a kernel from casts, `tl.zeros(dtype=)`,
  `tl.dot` results and loads through pointers whose tensor dtype the launch site reveals.
* `in_constexpr_branch` tells whether a node is compiled only when a `tl.constexpr` flag says so.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.triton_ast import TL, Kernel, dotted, walk_nodes

# Triton's own bounds (triton/language/semantic.py, to_tensor_type): a Python float literal is
# typed fp32 when 2**-126 <= |v| <= (2 - 2**-23) * 2**127 (or 0, inf, nan), else fp64.
FP32_MIN_NORMAL = 2.0 ** -126
FP32_MAX = (2.0 - 2.0 ** -23) * 2.0 ** 127

_KIND_BY_NAME = {
    "float64": "fp64", "fp64": "fp64", "double": "fp64",
    "float32": "fp32", "fp32": "fp32", "float": "fp32",
    "float16": "fp16", "fp16": "fp16", "half": "fp16",
    "bfloat16": "bf16", "bf16": "bf16",
    "int8": "int", "int16": "int", "int32": "int", "int64": "int", "uint8": "int", "uint16": "int",
    "uint32": "int", "uint64": "int", "long": "int", "int": "int", "short": "int",
    "int1": "bool", "bool": "bool",
}
_TORCH_ONLY_NAMES = {"float", "int", "bool", "double", "half", "long", "short"}
FLOAT_KINDS = {"fp64", "fp32", "fp16", "bf16", "fp8"}


def tl_alias(ctx: PythonContext) -> str:
    """The local name of `triton.language` to write in fixes (`tl` when in doubt)."""
    aliases = sorted(ctx.imports.aliases_of(TL))
    return "tl" if "tl" in aliases or not aliases else aliases[0]


def dtype_kind(ctx: PythonContext, node: ast.AST | None) -> str | None:
    """"fp64" for `tl.float64`, `torch.double`, ...; None when `node` is no dtype we know."""
    if node is None:
        return None
    path = ctx.imports.resolve(node)
    if not path:
        return None
    for module in (TL, "torch"):
        if path.startswith(module + "."):
            name = path[len(module) + 1:]
            if name.startswith(("float8", "fp8")):
                return "fp8"
            if module == TL and name in _TORCH_ONLY_NAMES:
                return None
            return _KIND_BY_NAME.get(name)
    return None


def keyword_value(call: ast.Call, name: str) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None


def numeric_value(node: ast.AST) -> float | None:
    """The value of a numeric literal (with an optional sign), else None."""
    sign = 1.0
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        if isinstance(node.op, ast.USub):
            sign = -sign
        node = node.operand
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return sign * float(node.value)
    return None


# ---- constexpr gating --------------------------------------------------------------------------

def module_constexpr_names(ctx: PythonContext) -> set[str]:
    """Module-level names a kernel sees as compile-time constants: `DEBUG = tl.constexpr(False)`,
    `DEBUG: tl.constexpr = False` and plain bool/int literals."""
    names: set[str] = set()
    for stmt in ctx.tree.body:
        target, value, ann = None, None, None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            target, value = stmt.targets[0].id, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            target, value, ann = stmt.target.id, stmt.value, stmt.annotation
        if target is None:
            continue
        if ann is not None and (ctx.imports.resolve(ann) or "").endswith("constexpr"):
            names.add(target)
        elif isinstance(value, ast.Call) and (ctx.imports.resolve(value.func) or "").endswith("constexpr"):
            names.add(target)
        elif isinstance(value, ast.Constant) and isinstance(value.value, (bool, int)):
            names.add(target)
    return names


def constexpr_flags(ctx: PythonContext, kernel: Kernel) -> set[str]:
    """Names that are compile-time constants inside `kernel`. A helper's UPPER_CASE parameters
    count: a `@jit` helper inherits constexpr-ness from the kernel that calls it."""
    names = set(kernel.constexpr_names) | module_constexpr_names(ctx)
    if kernel.is_helper:
        names |= {p.name for p in kernel.params if p.name.isupper()}
    return names


def in_constexpr_branch(ctx: PythonContext, node: ast.AST, kernel: Kernel) -> bool:
    """True when `node` sits in a branch of an `if`/conditional expression whose test reads a
    `tl.constexpr` flag: the branch is compiled only when the flag asks for it."""
    flags = constexpr_flags(ctx, kernel)
    child = node
    for anc in ctx.ancestors(node):
        if anc is kernel.node:
            return False
        if isinstance(anc, (ast.If, ast.IfExp)) and child is not anc.test:
            if any(isinstance(n, ast.Name) and n.id in flags for n in walk_nodes(anc.test)):
                return True
        child = anc
    return False


def in_loop(ctx: PythonContext, node: ast.AST, kernel: Kernel) -> bool:
    for anc in ctx.ancestors(node):
        if anc is kernel.node:
            return False
        if isinstance(anc, (ast.For, ast.While)):
            return True
    return False


# ---- launch sites and host dtypes -----------------------------------------------------------------

@dataclass
class Launch:
    """`kernel[grid](args...)` in the same file."""

    call: ast.Call
    kernel: Kernel
    scope: ast.AST          # the enclosing function (or the module)

    def bound_args(self) -> dict[str, ast.expr]:
        """Parameter name -> argument expression (positional up to a `*args`, then keywords)."""
        out: dict[str, ast.expr] = {}
        names = self.kernel.param_names
        for i, arg in enumerate(self.call.args):
            if isinstance(arg, ast.Starred) or i >= len(names):
                break
            out[names[i]] = arg
        for kw in self.call.keywords:
            if kw.arg is not None:
                out[kw.arg] = kw.value
        return out


def launches(ctx: PythonContext) -> list[Launch]:
    """Every `kernel[grid](...)` launch outside a kernel (found once per file; do not modify)."""
    return ctx.per_file(("precision-launches",), lambda: _launches(ctx))


def _launches(ctx: PythonContext) -> list[Launch]:
    by_name = {k.name: k for k in ctx.kernels}
    kernel_nodes = {k.node for k in ctx.kernels}
    out = []
    for node in ctx.module_calls:
        if not isinstance(node.func, ast.Subscript):
            continue
        name = dotted(node.func.value)
        kernel = by_name.get(name or "")
        if kernel is None:
            continue
        scope: ast.AST = ctx.tree
        inside_kernel = False
        for anc in ctx.ancestors(node):
            if anc in kernel_nodes:
                inside_kernel = True
                break
            if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef)):
                scope = anc
                break
        if not inside_kernel:
            out.append(Launch(node, kernel, scope))
    return out


_TORCH_FLOAT_FACTORIES = {"randn", "rand", "zeros", "ones", "empty", "normal"}
_TORCH_LIKE = {"randn_like", "rand_like", "zeros_like", "ones_like", "empty_like", "full_like"}
_TORCH_DTYPED = _TORCH_FLOAT_FACTORIES | _TORCH_LIKE | {"full", "tensor", "arange", "linspace", "as_tensor", "empty_strided"}
_SAME_DTYPE_METHODS = {
    "contiguous", "view", "reshape", "clone", "flatten", "t", "transpose", "permute", "expand",
    "squeeze", "unsqueeze", "detach", "cuda", "requires_grad_", "narrow", "view_as", "reshape_as",
    "expand_as", "mT", "T",
}
_CAST_METHODS = {"double": "fp64", "float": "fp32", "half": "fp16", "bfloat16": "bf16"}


@dataclass(frozen=True)
class HostDtype:
    kind: str
    origin: ast.AST          # the expression that decided it (`.double()`, `torch.float64`)


# the node classes that `HostDtypes._bindings` reads
_BINDING_CLASSES = frozenset({ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.arg})


class HostDtypes:
    """Dtype of host tensors, followed through simple local assignments in one function."""

    def __init__(self, ctx: PythonContext):
        self.ctx = ctx
        # the name must appear in the text (in the call or its import) before any call can be it
        self._changes_default = "set_default_dtype" in ctx.source.text and any(
            (ctx.imports.resolve(n.func) or "") == "torch.set_default_dtype" for n in ctx.module_calls
        )

    def of(self, expr: ast.expr, scope: ast.AST, before_line: int, depth: int = 0) -> HostDtype | None:
        if depth > 8:
            return None
        ctx = self.ctx
        if isinstance(expr, ast.Name):
            value, line = self._last_assignment(expr.id, scope, before_line)
            return None if value is None else self.of(value, scope, line, depth + 1)
        if isinstance(expr, ast.Subscript):
            return self.of(expr.value, scope, before_line, depth + 1)
        if isinstance(expr, ast.Attribute) and expr.attr in ("T", "mT"):
            return self.of(expr.value, scope, before_line, depth + 1)
        if not isinstance(expr, ast.Call):
            return None
        func = expr.func
        path = ctx.imports.resolve(func) or ""
        if path.startswith("torch.") and path.count(".") == 1 and path[6:] in _TORCH_DTYPED:
            name = path[6:]
            dtype_node = keyword_value(expr, "dtype")
            kind = dtype_kind(ctx, dtype_node)
            if kind:
                return HostDtype(kind, dtype_node)
            if dtype_node is not None:
                return None
            if name in _TORCH_LIKE and expr.args:
                return self.of(expr.args[0], scope, before_line, depth + 1)
            if name in _TORCH_FLOAT_FACTORIES and not self._changes_default:
                return HostDtype("fp32", expr)
            return None
        if isinstance(func, ast.Attribute):
            if func.attr in _CAST_METHODS and not expr.args and not expr.keywords:
                return HostDtype(_CAST_METHODS[func.attr], expr)
            if func.attr in ("to", "type", "view"):
                candidates = [*expr.args, *(kw.value for kw in expr.keywords if kw.arg == "dtype")]
                for arg in candidates:
                    kind = dtype_kind(ctx, arg)
                    if kind:
                        return HostDtype(kind, arg)
                if func.attr == "to" and all(self._looks_like_device(a) for a in expr.args):
                    return self.of(func.value, scope, before_line, depth + 1)
                if func.attr == "view" and expr.args:
                    return self.of(func.value, scope, before_line, depth + 1)
                return None
            if func.attr in _SAME_DTYPE_METHODS:
                return self.of(func.value, scope, before_line, depth + 1)
        return None

    @staticmethod
    def _looks_like_device(arg: ast.expr) -> bool:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return True
        text = dotted(arg) or ""
        return "device" in text.lower() or text.endswith(".device")

    def _last_assignment(self, name: str, scope: ast.AST, before_line: int) -> tuple[ast.expr | None, int]:
        """The value of the last plain assignment to `name` before `before_line` (None when the
        last binding is one we do not follow: a parameter, a loop target, `+=`, unpacking)."""
        best, best_line = None, -1
        for line, value in self._bindings(scope).get(name, ()):
            if best_line < line < before_line:
                best, best_line = value, line
        return best, best_line

    def _bindings(self, scope: ast.AST) -> dict[str, list[tuple[int, ast.expr | None]]]:
        """name -> [(line, value or None)] for every binding in a scope, from one walk (cached:
        a file with many launches must not walk its module once per argument)."""
        cache = self.__dict__.setdefault("_binding_cache", {})
        if scope in cache:
            return cache[scope]
        out: dict[str, list[tuple[int, ast.expr | None]]] = {}

        def bind(target: ast.AST, line: int, value: ast.expr | None) -> None:
            for n in walk_nodes(target):
                if isinstance(n, ast.Name):
                    out.setdefault(n.id, []).append((line, value))

        ctx = self.ctx
        # the walk other rules share (the module's, or the function's: `ctx.walk` keeps it)
        nodes = ctx.module_nodes if scope is ctx.tree else ctx.walk(scope)
        binding_classes = _BINDING_CLASSES
        for node in nodes:
            if node.__class__ not in binding_classes:
                continue   # nearly every node (parsed nodes are never subclasses)
            line = getattr(node, "lineno", 0)
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    bind(t, line, node.value if isinstance(t, ast.Name) else None)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                out.setdefault(node.target.id, []).append((line, node.value))
            elif isinstance(node, (ast.AugAssign, ast.For)):
                bind(node.target, line, None)
            elif isinstance(node, ast.arg):
                out.setdefault(node.arg, []).append((line, None))
        cache[scope] = out
        return out


def pointer_dtypes(ctx: PythonContext, kernel: Kernel, host: HostDtypes, all_launches: list[Launch]) -> dict[str, str]:
    """Parameter -> dtype of the tensor every launch in this file passes for it (when all agree)."""
    seen: dict[str, set[str | None]] = {}
    for launch in all_launches:
        if launch.kernel is not kernel:
            continue
        for name, arg in launch.bound_args().items():
            found = host.of(arg, launch.scope, launch.call.lineno)
            seen.setdefault(name, set()).add(found.kind if found else None)
    return {name: next(iter(kinds)) for name, kinds in seen.items() if len(kinds) == 1 and None not in kinds}


# ---- dtypes inside a kernel ---------------------------------------------------------------------

_SAME_AS_FIRST = {
    "exp", "exp2", "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "sigmoid", "abs", "sin", "cos", "erf",
    "softmax", "trans", "reshape", "view", "permute", "broadcast_to", "expand_dims", "ravel", "flip",
    "clamp", "cumsum", "sum", "max", "min", "math.exp", "math.exp2", "math.log", "math.sqrt",
    "math.rsqrt", "math.erf", "fdiv", "div_rn", "math.fdiv", "math.div_rn", "interleave",
}
_PROMOTE_ARGS = {"maximum": (0, 1), "minimum": (0, 1), "where": (1, 2), "fma": (0, 1, 2)}
_CREATION = {"zeros": 1, "full": 2}
_PASSTHROUGH_METHODS = {"trans", "reshape", "view", "permute", "broadcast_to", "expand_dims", "ravel"}


def promote(a: str | None, b: str | None) -> str | None:
    """Result kind of an arithmetic op on two tensors of kinds a and b (None: unknown)."""
    if a is None or b is None:
        return None
    if a == b:
        return a
    if "fp64" in (a, b):
        return "fp64"
    if "fp32" in (a, b) or {a, b} == {"fp16", "bf16"}:
        return "fp32"
    floats = [k for k in (a, b) if k in FLOAT_KINDS]
    return floats[0] if len(floats) == 1 else None


class KernelDtypes:
    """Static dtype of expressions in one kernel; None wherever the source does not say."""

    def __init__(self, ctx: PythonContext, kernel: Kernel, pointers: dict[str, str] | None = None):
        self.ctx = ctx
        self.kernel = kernel
        self.pointers = pointers or {}
        self.params = set(kernel.param_names)
        self.assignments: dict[str, list[ast.expr]] = {}
        for node in kernel.walk():
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.assignments.setdefault(target.id, []).append(node.value)
                    elif isinstance(target, (ast.Tuple, ast.List)):
                        for elt in target.elts:  # tuple unpacking: we do not know which is which
                            if isinstance(elt, ast.Name):
                                self.assignments.setdefault(elt.id, []).append(_UNKNOWN)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                self.assignments.setdefault(node.target.id, []).append(node.value)
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                self.assignments.setdefault(node.target.id, []).append(
                    ast.BinOp(left=ast.Name(node.target.id, ast.Load()), op=node.op, right=node.value))
            elif isinstance(node, (ast.For, ast.comprehension)):
                for elt in walk_nodes(node.target):
                    if isinstance(elt, ast.Name):
                        self.assignments.setdefault(elt.id, []).append(_UNKNOWN)
        self._resolving: set[str] = set()

    # -- public ---------------------------------------------------------------------------------
    def of(self, expr: ast.AST) -> str | None:
        result = self._of(expr, 0)
        return None if result is _ANY else result

    def pointer_kind(self, ptr: ast.AST) -> str | None:
        """Element kind of a pointer expression, from the pointer parameters it is built from."""
        kinds = {self.pointers[p] for p in self._params_reached(ptr) if p in self.pointers}
        return kinds.pop() if len(kinds) == 1 else None

    # -- internals --------------------------------------------------------------------------------
    def _params_reached(self, expr: ast.AST) -> set[str]:
        """`_params_in(expr, set())`: the parameters reachable from `expr` through the locals'
        values. Reachability is a union over the names read, so each local's part is followed
        once per kernel (not once per load through the same chain of locals)."""
        out: set[str] = set()
        for node in walk_nodes(expr):
            if not isinstance(node, ast.Name):
                continue
            if node.id in self.params and node.id not in self.assignments:
                out.add(node.id)
            elif node.id in self.assignments:
                cache = self.__dict__.setdefault("_params_of_local", {})
                found = cache.get(node.id)
                if found is None:
                    found = cache[node.id] = frozenset(self._params_in(node, set()))
                out |= found
        return out

    def _params_in(self, expr: ast.AST, seen: set[str]) -> set[str]:
        out: set[str] = set()
        for node in walk_nodes(expr):
            if not isinstance(node, ast.Name) or node.id in seen:
                continue
            if node.id in self.params and node.id not in self.assignments:
                out.add(node.id)
            elif node.id in self.assignments:
                seen.add(node.id)
                for value in self.assignments[node.id]:
                    if value is not _UNKNOWN:
                        out |= self._params_in(value, seen)
        return out

    def _tl(self, func: ast.AST) -> str | None:
        path = self.ctx.imports.resolve(func)
        if path and path.startswith(TL + "."):
            return path[len(TL) + 1:]
        return None

    def _of(self, expr: ast.AST, depth: int):
        if depth > 40 or expr is _UNKNOWN:
            return None
        if isinstance(expr, ast.Name):
            return self._name(expr.id, depth)
        if isinstance(expr, ast.Constant):
            return _ANY if isinstance(expr.value, (int, float)) else None
        if isinstance(expr, ast.UnaryOp):
            return self._of(expr.operand, depth + 1)
        if isinstance(expr, ast.BinOp):
            return self._binop(expr, depth)
        if isinstance(expr, ast.Subscript):
            return self._of(expr.value, depth + 1)
        if isinstance(expr, ast.Attribute) and expr.attr == "T":
            return self._of(expr.value, depth + 1)
        if isinstance(expr, ast.IfExp):
            a, b = self._of(expr.body, depth + 1), self._of(expr.orelse, depth + 1)
            if a is _ANY:
                return b
            if b is _ANY:
                return a
            return a if a == b else None
        if isinstance(expr, ast.Call):
            return self._call(expr, depth)
        return None

    def _name(self, name: str, depth: int):
        if name in self._resolving:
            return _ANY  # a loop-carried value: the other assignments decide
        values = self.assignments.get(name)
        if not values:
            return None  # a parameter or a global: not known here
        self._resolving.add(name)
        try:
            kinds = {self._of(v, depth + 1) for v in values}
        finally:
            self._resolving.discard(name)
        kinds.discard(_ANY)
        if len(kinds) == 1:
            return kinds.pop()
        return None if kinds else _ANY

    def _binop(self, expr: ast.BinOp, depth: int):
        a, b = self._of(expr.left, depth + 1), self._of(expr.right, depth + 1)
        if a is _ANY and b is _ANY:
            return _ANY
        if a is _ANY or b is _ANY:
            # A Python number is weakly typed: it takes the tensor's dtype, except that a float
            # literal promotes an int tensor (to fp64 when fp32 cannot hold it).
            other, number = (b, expr.left) if a is _ANY else (a, expr.right)
            if other != "int":
                return other
            if isinstance(expr.op, ast.Div):
                return "fp32"
            value = _literal(number)
            if isinstance(value, float):
                return "fp32" if _fits_fp32(value) else "fp64"
            return "int" if isinstance(value, int) else None
        if isinstance(expr.op, ast.Div) and a == b == "int":
            return "fp32"
        return promote(a, b)

    def _call(self, call: ast.Call, depth: int):
        func = call.func
        name = self._tl(func)
        if isinstance(func, ast.Attribute) and name is None:
            if func.attr in ("to", "cast"):
                target = call.args[0] if call.args else keyword_value(call, "dtype")
                return self._dtype_arg(target, depth)
            if func.attr in _PASSTHROUGH_METHODS:
                return self._of(func.value, depth + 1)
            return None
        if name is None:
            return None
        if name == "cast":
            target = call.args[1] if len(call.args) > 1 else keyword_value(call, "dtype")
            return self._dtype_arg(target, depth)
        if name == "load":
            ptr = call.args[0] if call.args else keyword_value(call, "pointer")
            return self.pointer_kind(ptr) if ptr is not None else None
        if name in _CREATION or name in ("zeros_like", "full_like"):
            dtype_node = keyword_value(call, "dtype")
            pos = _CREATION.get(name)
            if dtype_node is None and pos is not None and len(call.args) > pos:
                dtype_node = call.args[pos]
            if dtype_node is not None:
                return self._dtype_arg(dtype_node, depth)
            if name.endswith("_like") and call.args:
                return self._of(call.args[0], depth + 1)
            return None
        if name == "dot":
            out = keyword_value(call, "out_dtype")
            if out is not None:
                return self._dtype_arg(out, depth)
            acc = call.args[2] if len(call.args) > 2 else keyword_value(call, "acc")
            if acc is not None:
                return self._of(acc, depth + 1)
            kinds = {self._of(a, depth + 1) for a in call.args[:2]}
            if kinds and kinds <= FLOAT_KINDS:
                return "fp32"
            return "int" if kinds == {"int"} else None
        if name in _PROMOTE_ARGS:
            kinds = [self._of(call.args[i], depth + 1) for i in _PROMOTE_ARGS[name] if i < len(call.args)]
            kinds = [k for k in kinds if k is not _ANY]
            result = kinds[0] if kinds else None
            for k in kinds[1:]:
                result = promote(result, k)
            return result
        if name in _SAME_AS_FIRST and call.args:
            kind = self._of(call.args[0], depth + 1)
            return kind if kind in ("fp32", "fp64") else None
        return None

    def _dtype_arg(self, node: ast.AST | None, depth: int):
        if node is None:
            return None
        kind = dtype_kind(self.ctx, node)
        if kind:
            return kind
        # `.to(x.dtype)`, `.to(acc.type.element_ty)`
        if isinstance(node, ast.Attribute) and node.attr in ("dtype", "element_ty"):
            inner = node.value
            if isinstance(inner, ast.Attribute) and inner.attr == "type":
                inner = inner.value
            kind = self._of(inner, depth + 1)
            return None if kind is _ANY else kind
        return None


class _Unknown(ast.expr):
    """Marks an assignment whose value we cannot name (tuple unpacking, loop targets)."""


_UNKNOWN = _Unknown()
_ANY = object()   # a Python number: weakly typed, takes the other operand's dtype


def _literal(node: ast.AST):
    while isinstance(node, ast.UnaryOp):
        node = node.operand
    return node.value if isinstance(node, ast.Constant) else None


def _fits_fp32(value: float) -> bool:
    v = abs(value)
    return v == 0.0 or v == float("inf") or v != v or FP32_MIN_NORMAL <= v <= FP32_MAX


def float_literal_outside_fp32(node: ast.AST) -> bool:
    """A float literal that Triton types fp64 because fp32 cannot hold it as a normal number."""
    return isinstance(node, ast.Constant) and type(node.value) is float and not _fits_fp32(node.value)
