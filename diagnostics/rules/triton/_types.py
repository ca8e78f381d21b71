"""What each value inside a `@triton.jit` function is: pointer or number, scalar or block, its rank.

The inference the compile-break rules (TRI024-TRI031) share. For every expression of a kernel it
knows, where the source makes it certain:

- `kind`: "pointer", "int", "float", "bool", "none", "dtype", "tuple", "block_pointer", "str";
- `block`: True for a block (a tensor of rank >= 1), False for a scalar;
- `rank`: the number of dimensions of a block (0 for a scalar);
- `constexpr`: a compile-time value (a literal, a `tl.constexpr` parameter, `tl.static_range`).

Where it does not follow, a field is None: unknown stays unknown, and a rule fires only on what
is known. Sources of knowledge:

- literals; `tl.arange` (an int32 block of rank 1), `tl.zeros`/`tl.full` (rank = the shape's
  length, kind from the dtype), `tl.program_id` (an int scalar), `tl.load` (a block exactly when its
  pointer is one), reductions (`tl.sum(x, axis)` drops one dimension, no axis gives a scalar),
  elementwise math, `tl.where`, `tl.dot` (rank 2), `tl.make_block_ptr`, `.to()`, broadcasting of
  binary operators (a block if either side is one; the larger rank);
- kernel parameters: a parameter is always a scalar (or a tuple, when the launch passes one);
  `tl.constexpr` annotations; the launch sites in the same file (`kernel[grid](...)`): a torch tensor
  makes the parameter a pointer, `x.data_ptr()`, `x.stride(0)`, `x.numel()`, `x.shape[0]` or an int
  literal an int, a float literal a float, `None` none, `x.shape`/a tuple a tuple; with no launch
  in the file, a parameter named `*_ptr`, `*_ptrs`, `*_pointer` or `ptr` is taken to be a pointer
  (the naming convention of Triton's tutorials);
- helpers (jit functions called from kernels) start from the types at their call sites in the
  same file, when every call site agrees, else unknown.

A name assigned more than once has the join of all its values seen so far (fields that differ
become unknown), and loop bodies are read twice, so a value carried around a loop is joined with
its value from the previous iteration.

The leading underscore keeps the registry from loading it as a rule.
"""
from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import lru_cache
from typing import NamedTuple

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.rules.triton._launch_sites import launches
from tritonify.diagnostics.triton_ast import Kernel, tl_name


class VType(NamedTuple):
    kind: str | None = None
    block: bool | None = None
    rank: int | None = None
    constexpr: bool = False
    origin: str | None = None       # for a parameter: what the launch passes (for messages)

    @property
    def is_tensor(self) -> bool:
        """Certainly a Triton run-time value (a `tl.tensor`), not a Python/constexpr one."""
        return (not self.constexpr and self.kind in ("pointer", "int", "float", "bool")
                and self.block is not None)


    @property
    def is_runtime(self) -> bool:
        """A Triton run-time value (scalar or block) of any element type, not a constexpr, None or a
        tuple. A parameter no launch in the file describes is left out (it may be a tuple)."""
        return (not self.constexpr and self.block is not None and self.origin != UNLAUNCHED
                and self.kind not in ("none", "tuple", "dtype", "str", "block_pointer"))


UNLAUNCHED = "no launch in this file"

UNKNOWN = VType()


def join(a: VType | None, b: VType) -> VType:
    if a is None:
        return b
    if a == b:
        return a
    return VType(kind=a.kind if a.kind == b.kind else None,
                 block=a.block if a.block == b.block else None,
                 rank=a.rank if a.rank == b.rank else None,
                 constexpr=a.constexpr and b.constexpr,
                 origin=a.origin if a.origin == b.origin else None)


def _as_tensor(t: VType) -> VType:
    """What Triton makes of a value it must turn into a tensor (a branch of a run-time ternary):
    a Python number (a constexpr int, float or bool) becomes a scalar tensor."""
    if t.constexpr and t.kind in ("int", "float", "bool"):
        return t._replace(constexpr=False, block=False, rank=0)
    return t


def _shapes_differ(a: VType, b: VType) -> bool:
    """Two run-time values certainly of different shapes: a scalar and a block, or two blocks of
    known, different ranks."""
    if not (a.is_runtime and b.is_runtime):
        return False
    if a.block != b.block:
        return True
    return bool(a.block and a.rank is not None and b.rank is not None and a.rank != b.rank)


def scalar(kind: str | None, constexpr: bool = False, origin: str | None = None) -> VType:
    return VType(kind=kind, block=False, rank=0, constexpr=constexpr, origin=origin)


_CONSTANTS = {type(None): scalar("none", constexpr=True), bool: scalar("bool", constexpr=True),
              int: scalar("int", constexpr=True), float: scalar("float", constexpr=True),
              str: scalar("str", constexpr=True)}


def block(kind: str | None, rank: int | None) -> VType:
    return VType(kind=kind, block=True, rank=rank)


_FLOAT_DTYPES = {"float16", "bfloat16", "float32", "float64", "float8e4nv", "float8e5", "float8e4b15",
                 "float8e4b8", "float8e5b16", "fp16", "bf16", "fp32", "fp64"}
_INT_DTYPES = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}
_ELEMENTWISE_FLOAT = {"exp", "exp2", "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "sin", "cos", "sigmoid",
                      "erf", "fdiv", "div_rn", "softmax", "floor", "ceil"}
_ELEMENTWISE_SAME = {"abs", "cumsum", "cumprod", "flip", "sort", "clamp", "fma", "umulhi",
                     "multiple_of", "max_contiguous", "max_constancy", "assume"}
_REDUCTIONS = {"sum": None, "max": None, "min": None, "xor_sum": None, "reduce_or": None,
               "argmax": "int", "argmin": "int"}
_POINTER_NAMES = ("_ptr", "_ptrs", "_pointer")
_TORCH_TENSOR_FACTORIES = {"empty", "zeros", "ones", "full", "rand", "randn", "randint", "arange", "tensor",
                           "empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like",
                           "empty_strided", "linspace", "as_tensor", "from_numpy", "cat", "stack", "matmul",
                           "where", "softmax", "exp", "abs", "relu", "sigmoid"}
_TENSOR_METHODS = {"contiguous", "view", "reshape", "to", "flatten", "float", "half", "bfloat16", "clone",
                   "cuda", "t", "transpose", "permute", "expand", "squeeze", "unsqueeze", "view_as",
                   "reshape_as", "new_empty", "new_zeros", "new_ones", "detach", "type_as", "abs", "exp",
                   "narrow", "select", "expand_as", "int", "long", "double", "mul", "add", "sub", "div"}
_INT_METHODS = {"data_ptr", "stride", "numel", "size", "dim", "element_size", "nelement", "item"}


def dtype_kind(name: str | None) -> str | None:
    if name is None:
        return None
    if name in _FLOAT_DTYPES:
        return "float"
    if name in _INT_DTYPES:
        return "int"
    if name == "int1":
        return "bool"
    return None


class HostTypes:
    """What a host expression passed at a launch is (a tensor, an int, a float...), read, not run."""

    def __init__(self, ctx: PythonContext, host: ast.FunctionDef | None):
        self.ctx, self.host = ctx, host
        self._values: dict[str, list[ast.expr]] | None = None

    def _bindings(self) -> dict[str, list[ast.expr]]:
        if self._values is None:
            values: dict[str, list[ast.expr]] = {}
            # A launch at module level reads module-level bindings only (not every function's).
            nodes = self.ctx.walk(self.host) if self.host is not None else iter(self.ctx.tree.body)
            for node in nodes:
                if isinstance(node, ast.Assign):
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            values.setdefault(target.id, []).append(node.value)
                        elif isinstance(target, (ast.Tuple, ast.List)):
                            for i, elt in enumerate(target.elts):
                                if isinstance(elt, ast.Name):
                                    same = (isinstance(node.value, (ast.Tuple, ast.List))
                                            and len(node.value.elts) == len(target.elts))
                                    sizes = (isinstance(node.value, ast.Attribute) and node.value.attr == "shape") or (
                                        isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute)
                                        and node.value.func.attr in ("size", "stride") and not node.value.args)
                                    values.setdefault(elt.id, []).append(
                                        node.value.elts[i] if same else ast.Constant(value=0) if sizes
                                        else ast.Constant(value=...))
                elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
                    values.setdefault(node.target.id, []).append(node.value)
                elif isinstance(node, (ast.AugAssign, ast.For, ast.With, ast.NamedExpr)):
                    target = getattr(node, "target", None)
                    for n in ast.walk(target) if target is not None else ():
                        if isinstance(n, ast.Name):
                            values.setdefault(n.id, []).append(ast.Constant(value=...))
            self._values = values
        return self._values

    def kind(self, expr: ast.expr, depth: int = 0) -> str | None:
        """"tensor" | "int" | "float" | "none" | "bool" | "tuple", or None (`shown` writes out how it
        was seen, when a message needs it: most launches' never does)."""
        return None if depth > 4 else self._kind(expr, depth)

    def shown(self, expr: ast.expr) -> str:
        """How a launch argument was seen: its text, and its one binding in the host function."""
        text = ast.unparse(expr)
        if isinstance(expr, ast.Name) and len(self._bindings().get(expr.id, ())) == 1:
            text = f"{text} = {ast.unparse(self._bindings()[expr.id][0])}"
        return text

    def _tensor_parameter(self, name: str) -> bool:
        """A parameter of the host function, never rebound there, that the function uses as only a
        torch tensor can be used (`x.numel()`, `x.data_ptr()`, `x.contiguous()`, `x.stride(...)`,
        `torch.empty_like(x)`, `x.is_cuda`, `x.device`): past that use it is a tensor. Not decided
        by such a use where the function tests what it is (`isinstance(x, ...)`), except by a test that
        stops the function for anything else (`assert isinstance(x, torch.Tensor)`, `if not
        isinstance(x, torch.Tensor): raise ...`). A parameter annotated `torch.Tensor` is one too (a
        program that passes something else fails at that launch whatever the kernel says)."""
        host = self.host
        if host is None:
            return False
        args = host.args
        params = {a.arg: a for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
        if name not in params:
            return False
        annotation = params[name].annotation
        if annotation is not None and ast.unparse(annotation) in ("torch.Tensor", "Tensor"):
            return True
        tested, used, guarded = self._tensor_uses()
        return name in guarded or (name in used and name not in tested)

    def _annotated_number(self, name: str) -> str | None:
        """A host parameter, never rebound, annotated `int`, `float` or `bool` whose default (if any)
        is of that type: what the annotation says (a call that passes something else fails or
        differs at that launch whatever the kernel says)."""
        host = self.host
        if host is None:
            return None
        args = host.args
        positional = [*args.posonlyargs, *args.args]
        defaults = dict(zip([a.arg for a in positional][len(positional) - len(args.defaults):], args.defaults))
        defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
        for a in (*positional, *args.kwonlyargs):
            if a.arg != name or a.annotation is None:
                continue
            kind = _ANNOTATED_KINDS.get(ast.unparse(a.annotation))
            default = defaults.get(name)
            if kind is None or (default is not None and self._kind(default, 4) != kind):
                return None
            return kind
        return None

    @staticmethod
    def _isinstance_tensor(test: ast.expr) -> str | None:
        """The name `isinstance(name, torch.Tensor)` tests, or None."""
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance" \
                and len(test.args) == 2 and isinstance(test.args[0], ast.Name) \
                and ast.unparse(test.args[1]) in ("torch.Tensor", "Tensor"):
            return test.args[0].id
        return None

    def _tensor_uses(self) -> tuple[set[str], set[str], set[str]]:
        """(names the host function tests with `isinstance(name, ...)`, names it uses as only a
        tensor can be used, names it stops on unless they are tensors): one walk of the function
        for all its parameters."""
        found = self.__dict__.get("_tensor_use_sets")
        if found is None:
            tested: set[str] = set()
            used: set[str] = set()
            guarded: set[str] = set()
            for node in self.ctx.walk(self.host):
                kind = node.__class__
                if kind is ast.Assert:
                    name = self._isinstance_tensor(node.test)
                    if name is not None:
                        guarded.add(name)
                elif kind is ast.If and isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not) \
                        and node.body and isinstance(node.body[-1], ast.Raise):
                    name = self._isinstance_tensor(node.test.operand)
                    if name is not None:
                        guarded.add(name)
                elif kind is ast.Attribute and node.attr in _TENSOR_ONLY_ATTRIBUTES \
                        and isinstance(node.value, ast.Name) and isinstance(node.ctx, ast.Load):
                    used.add(node.value.id)
                if kind is not ast.Call:
                    continue
                func = node.func
                if isinstance(func, ast.Name) and func.id == "isinstance" and node.args \
                        and isinstance(node.args[0], ast.Name):
                    tested.add(node.args[0].id)
                elif isinstance(func, ast.Attribute):
                    if func.attr in _TENSOR_ONLY_METHODS and isinstance(func.value, ast.Name):
                        used.add(func.value.id)
                    elif func.attr in _TORCH_LIKE_FACTORIES and isinstance(func.value, ast.Name) \
                            and func.value.id == "torch" and node.args and isinstance(node.args[0], ast.Name):
                        used.add(node.args[0].id)
            found = self.__dict__["_tensor_use_sets"] = (tested, used, guarded)
        return found

    def _sizes_tuple(self, expr: ast.expr, depth: int) -> bool:
        """`x.shape`, `x.stride()`, `x.size()` (a tensor's sizes or strides: ints), directly or through
        a name bound to one of them and to nothing else."""
        if isinstance(expr, ast.Attribute) and expr.attr == "shape":
            return True
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) \
                and expr.func.attr in ("stride", "size") and not expr.args and not expr.keywords:
            return True
        if isinstance(expr, ast.Name) and depth < 4:
            values = self._bindings().get(expr.id)
            return bool(values) and len(values) == 1 and self._sizes_tuple(values[0], depth + 1)
        return False

    def _kind(self, expr: ast.expr, depth: int) -> str | None:
        if depth > 4:
            return None
        if isinstance(expr, ast.Constant):
            value = expr.value
            if value is None:
                return "none"
            if isinstance(value, bool):
                return "bool"
            if isinstance(value, int):
                return "int"
            if isinstance(value, float):
                return "float"
            return None
        if isinstance(expr, (ast.Tuple, ast.List)):
            return "tuple"
        if isinstance(expr, ast.Attribute) and expr.attr == "shape":
            return "tuple"
        if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Attribute) and expr.value.attr == "shape":
            return "int" if not isinstance(expr.slice, ast.Slice) else "tuple"
        if isinstance(expr, ast.Subscript) and not isinstance(expr.slice, ast.Slice) \
                and self._sizes_tuple(expr.value, depth):
            return "int"   # `x.stride()[0]`, `strides[d]` after `strides = x.stride()`: a tensor's ints
        if isinstance(expr, ast.IfExp):
            a, b = self._kind(expr.body, depth + 1), self._kind(expr.orelse, depth + 1)
            return a if a == b else None
        if isinstance(expr, ast.Call):
            func = expr.func
            if isinstance(func, ast.Attribute):
                if func.attr in _INT_METHODS and not (func.attr == "size" and not expr.args):
                    return "int"
                if func.attr in ("stride", "size") and not expr.args:
                    return "tuple"
                base = func.value
                if isinstance(base, ast.Name) and base.id == "torch" and func.attr in _TORCH_TENSOR_FACTORIES:
                    return "tensor"
                if func.attr in _TENSOR_METHODS:
                    inner = self._kind(base, depth + 1)
                    if inner == "tensor":
                        return "tensor"
            if isinstance(func, ast.Name) and func.id in ("int", "len"):
                return "int"
            if isinstance(func, ast.Name) and func.id == "float":
                return "float"
            if isinstance(func, ast.Name) and func.id in ("tuple", "list"):
                return "tuple"
            return None
        if isinstance(expr, ast.Name):
            values = self._bindings().get(expr.id)
            if not values:
                return "tensor" if self._tensor_parameter(expr.id) else self._annotated_number(expr.id)
            if any(_rebinds_itself(v, expr.id) for v in values):
                # `x = x.contiguous()`, `x = x.to(d) if d else x`: a tensor method of the parameter
                # itself keeps it a tensor, so the parameter's own kind decides those bindings
                if not self._tensor_parameter(expr.id):
                    return None
                values = [v for v in values if not _rebinds_itself(v, expr.id)]
                kinds = {"tensor", *(self._kind(v, depth + 1) for v in values)}
                return "tensor" if kinds == {"tensor"} else None
            kinds = {self._kind(v, depth + 1) for v in values}
            if len(kinds) == 1 and None not in kinds:
                return kinds.pop()
            return None
        if isinstance(expr, ast.BinOp):
            left, right = self._kind(expr.left, depth + 1), self._kind(expr.right, depth + 1)
            if left == right == "int" and not isinstance(expr.op, ast.Div):
                return "int"
        return None


def _rebinds_itself(value: ast.expr, name: str) -> bool:
    """`name.contiguous()`, `name.to(dtype).view(-1)`, `name.float() if c else name`: a value that is
    the name itself through tensor methods only."""
    if isinstance(value, ast.Name):
        return value.id == name
    if isinstance(value, ast.IfExp):
        return _rebinds_itself(value.body, name) and _rebinds_itself(value.orelse, name)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _TENSOR_METHODS:
        return _rebinds_itself(value.func.value, name)
    return False


# Methods only a torch tensor has among the values a launch passes (numpy arrays have none of them).
_TENSOR_ONLY_METHODS = {"numel", "data_ptr", "contiguous", "is_contiguous", "stride", "element_size"}
# Attributes only a torch tensor has among them (`is_cuda`; `device` also on a cupy array, a tensor too for a launch).
_TENSOR_ONLY_ATTRIBUTES = {"is_cuda", "device"}
_TORCH_LIKE_FACTORIES = {"empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like"}

_LAUNCH_OPTIONS = {"num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "grid",
                   "warmup", "stream", "device", "launch_cooperative_grid", "launch_pdl", "waves_per_eu",
                   "matrix_instr_nonkdim", "kpack", "num_consumer_groups", "num_buffers_warp_spec",
                   "extern_libs", "debug", "sanitize_overflow"}

_ANNOTATED_KINDS = {"int": "int", "float": "float", "bool": "bool"}

_PARAM_KIND = {"tensor": "pointer", "int": "int", "float": "float", "none": "none", "bool": "int",
               "tuple": "tuple"}


def _param_type(ctx: PythonContext, kernel: Kernel, name: str, constexpr: bool,
                seen: list[tuple[str, tuple, int]] | None) -> VType:
    if constexpr:
        kinds = {k for k, _, _ in seen or ()}
        kind = _PARAM_KIND[kinds.pop()] if len(kinds) == 1 else None
        param = kernel.param(name)
        if param is not None and isinstance(param.default, ast.Constant) and seen is None:
            kind = HostTypes(ctx, None).kind(param.default)
            kind = _PARAM_KIND[kind] if kind else None
        return VType(kind=kind if kind not in ("pointer", "tuple") else None, block=False, rank=0,
                     constexpr=True)
    if seen:
        kinds = {k for k, _, _ in seen}
        if len(kinds) == 1:
            kind = _PARAM_KIND[next(iter(kinds))]
            (host, expr), line = seen[0][1], seen[0][2]
            how = host.shown(expr)
            origin = f"the launch on line {line} passes `{how}`"
            if kind == "tuple":
                return VType(kind="tuple", origin=origin)
            return scalar(kind, origin=origin)
        return VType(block=False, rank=0)
    lowered = name.lower()
    if lowered == "ptr" or lowered.endswith(_POINTER_NAMES):
        return scalar("pointer", origin="named as a pointer")
    return VType(block=False, rank=0, origin=UNLAUNCHED)


def _launches(ctx: PythonContext, kernel: Kernel):
    cache: dict[int, list] = ctx.per_file(("kernel-launches",), dict)
    if id(kernel.node) not in cache:
        cache[id(kernel.node)] = launches(ctx, kernel)
    return cache[id(kernel.node)]


def _launch_kinds(ctx: PythonContext, kernel: Kernel) -> dict[str, list[tuple[str, tuple, int]] | None]:
    """Per parameter: what each launch in the file passes (None once one launch is unreadable), as
    (kind, (the HostTypes, the expression) that write out how it was seen, line)."""
    out: dict[str, list[tuple[str, str, int]] | None] = {}
    found = _launches(ctx, kernel)
    if not found:
        return out
    params = set(kernel.param_names)
    for launch in found:
        unknown = {k.arg for k in launch.call.keywords if k.arg} - params - _LAUNCH_OPTIONS
        if unknown or len(launch.call.args) > len(params):
            return {}   # the name launches another function as well (a local `kernel = a if c else b`)
    hosts: dict[int, HostTypes] = ctx.per_file(("host-types",), dict)
    for launch in found:
        host = hosts.get(id(launch.host))
        if host is None:
            host = hosts[id(launch.host)] = HostTypes(ctx, launch.host)
        for name in kernel.param_names:
            expr = launch.args.get(name)
            if name in out and out[name] is None:
                continue
            if expr is None:
                out[name] = None
                continue
            kind = host.kind(expr)
            if kind is None:
                out[name] = None
            else:
                out.setdefault(name, []).append((kind, (host, expr), launch.call.lineno))
    return out


class KernelTypes:
    """Types of every expression of one jit function (see the module docstring)."""

    def __init__(self, ctx: PythonContext, kernel: Kernel, params: dict[str, VType] | None = None):
        self.ctx, self.kernel = ctx, kernel
        self.env: dict[str, VType] = {}
        self.types: dict[ast.AST, VType] = {}
        # (name, the loop or `if`, its type before, its new type, the assignment) where Triton
        # rejects the change: a scalar becoming a block or the reverse, or a block changing rank.
        self.loop_carried: list[tuple[str, ast.stmt, VType, VType, ast.AST]] = []
        self.branch_changes: list[tuple[str, ast.stmt, VType, VType, ast.AST]] = []
        # (name, the `if`, its type in the then block, in the else block, the else block's assignment):
        # a name first bound in both branches of a run-time `if` with another shape in each
        # ("Mismatched type for x between then block ... and else block ...").
        self.branch_mismatches: list[tuple[str, ast.stmt, VType, VType, ast.AST]] = []
        # a run-time `a if c else b` whose two values differ in shape (the node, then, else):
        # "Ternary expression with dynamic condition has inconsistent types".
        self.ternary_mismatches: dict[int, tuple[ast.IfExp, VType, VType]] = {}
        self._assigned_in: dict[tuple[int, int], dict[str, ast.AST]] = {}
        self._tl_names: dict[int, str | None] = {}
        self.calls: list[tuple[str, list[VType]]] = []
        self._rereading = 0
        if params is None:
            kinds = _launch_kinds(ctx, kernel)
            params = {p.name: _param_type(ctx, kernel, p.name, p.constexpr, kinds.get(p.name))
                      for p in kernel.params}
        self.env.update(params)
        constexpr_names = kernel.constexpr_names
        for name in constexpr_names:
            if name in self.env:
                self.env[name] = self.env[name]._replace(constexpr=True)
        for name in self._arange_bounds(constexpr_names):
            # a constexpr that bounds a `tl.arange` is an int (Triton rejects any other range)
            self.env[name] = self.env[name]._replace(kind="int")
        self._block(kernel.node.body)

    def _arange_bounds(self, constexpr_names) -> list[str]:
        """Constexpr parameters of unknown kind that a `tl.arange` of this function takes as a bound."""
        unknown = {n for n in constexpr_names if n in self.env and self.env[n].kind is None}
        if not unknown:
            return []
        found = []
        for call in self.kernel.calls():
            if self._tl_name(call.func) == "arange":
                for arg in (*call.args, *(k.value for k in call.keywords)):
                    if isinstance(arg, ast.Name) and arg.id in unknown and arg.id not in found:
                        found.append(arg.id)
        return found

    def _tl_name(self, node: ast.AST) -> str | None:
        key = id(node)
        if key not in self._tl_names:
            self._tl_names[key] = tl_name(self.ctx.imports, node)
        return self._tl_names[key]

    # -- queries -------------------------------------------------------------------------------
    def of(self, node: ast.AST) -> VType:
        return self.types.get(node, UNKNOWN)

    # -- statements ----------------------------------------------------------------------------
    def _block(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self._stmt(stmt)

    def _assign(self, target: ast.expr, value: VType, value_node: ast.expr | None = None) -> None:
        if isinstance(target, ast.Name):
            self.env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            elts = value_node.elts if isinstance(value_node, (ast.Tuple, ast.List)) else None
            for i, elt in enumerate(target.elts):
                if elts is not None and len(elts) == len(target.elts):
                    self._assign(elt, self.of(elts[i]))
                else:
                    self._assign(elt, UNKNOWN)
        elif isinstance(target, ast.Subscript):
            self.expr(target.value)
            self.expr(target.slice)

    @staticmethod
    def _merge(a: dict[str, VType], b: dict[str, VType]) -> dict[str, VType]:
        """The environment after two paths meet: a name bound on one path only is unknown."""
        return {name: join(a[name], b[name]) if name in a and name in b else UNKNOWN
                for name in {*a, *b}}

    def _loop(self, stmt: ast.stmt, run_once) -> None:
        """Read a loop body; again (from the merged head) only when the first reading changed a
        value bound before the loop, since only then can the second differ."""
        before = dict(self.env)
        run_once()
        first = dict(self.env)
        self.env = self._merge(before, first)
        if any(before[name] != value for name, value in first.items() if name in before):
            # Triton compiles the body once, with the types the carried values have on entry (and
            # rejects a carried value whose type the body changes: `loop_carried`), so the types
            # of the body's expressions are those of the first reading; the second only settles
            # what the names hold after the loop.
            self._rereading += 1
            try:
                run_once()
            finally:
                self._rereading -= 1
            self.env = self._merge(before, self.env)
        return before, first

    def _stmt(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Assign):
            value = self.expr(stmt.value)
            if value.constexpr and value.kind in ("int", "float", "bool"):
                # Triton turns a Python number bound without `: tl.constexpr` into a tensor
                # (`_sanitize_value` in CodeGenerator.visit_Assign, 3.2 to 3.9).
                value = value._replace(constexpr=False)
            for target in stmt.targets:
                self._assign(target, value, stmt.value)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                value = self.expr(stmt.value)
                annotation = ast.unparse(stmt.annotation)
                if annotation.endswith("constexpr"):
                    value = value._replace(constexpr=True)
                self._assign(stmt.target, value, stmt.value)
        elif isinstance(stmt, ast.AugAssign):
            if isinstance(stmt.target, ast.Name):
                current = self.env.get(stmt.target.id, UNKNOWN)
                value = self._binop(stmt.op, current, self.expr(stmt.value))
                self._assign(stmt.target, value)
            else:
                self.expr(stmt.value)
                self._assign(stmt.target, UNKNOWN)
        elif isinstance(stmt, ast.For):
            iterator = stmt.iter
            self.expr(iterator)
            static = (isinstance(iterator, ast.Call)
                      and self._tl_name(iterator.func) == "static_range")
            var = scalar("int", constexpr=static) if self._is_range(iterator) else UNKNOWN

            def once():
                self._assign(stmt.target, var)
                self._block(stmt.body)
            before, first = self._loop(stmt, once)
            if not static:
                self._note_changes(stmt, stmt.body, before, first, self.loop_carried)
            self._block(stmt.orelse)
        elif isinstance(stmt, ast.While):
            def once():
                self.expr(stmt.test)
                self._block(stmt.body)
            before, first = self._loop(stmt, once)
            self._note_changes(stmt, stmt.body, before, first, self.loop_carried)
            self._block(stmt.orelse)
        elif isinstance(stmt, ast.If):
            test = self.expr(stmt.test)
            before = dict(self.env)
            self._block(stmt.body)
            then_env = self.env
            self.env = dict(before)
            self._block(stmt.orelse)
            else_env = self.env
            self.env = self._merge(then_env, else_env)
            if test.is_runtime and test.block is False:
                self._note_changes(stmt, stmt.body, before, then_env, self.branch_changes)
                self._note_changes(stmt, stmt.orelse, before, else_env, self.branch_changes)
                if stmt.orelse:
                    self._note_mismatches(stmt, before, then_env, else_env)
        elif isinstance(stmt, ast.With):
            for item in stmt.items:
                self.expr(item.context_expr)
            self._block(stmt.body)
        elif isinstance(stmt, (ast.Expr, ast.Return)) and stmt.value is not None:
            self.expr(stmt.value)
        elif isinstance(stmt, ast.Assert):
            self.expr(stmt.test)

    def _is_range(self, node: ast.expr) -> bool:
        if not isinstance(node, ast.Call):
            return False
        if isinstance(node.func, ast.Name) and node.func.id == "range":
            return True
        return self._tl_name(node.func) in ("range", "static_range")

    def _note_changes(self, stmt: ast.stmt, body: list[ast.stmt], before: dict[str, VType],
                      after: dict[str, VType], into: list) -> None:
        """Names bound before `stmt` that its body rebinds with another shape (scalar/block/rank)."""
        changed_names = [name for name, value in after.items()
                         if name in before and before[name] != value and self._shape_changed(name, before[name], value)]
        if not changed_names:
            return
        for name in changed_names:
            node = self._first_assignment(stmt, body, name)
            if node is not None:
                into.append((name, stmt, before[name], after[name], node))

    def _note_mismatches(self, stmt: ast.If, before: dict[str, VType], then_env: dict[str, VType],
                         else_env: dict[str, VType]) -> None:
        """Names bound in both branches of a run-time `if` (and not before it) whose two values
        differ in shape: Triton yields one value per name from an `scf.if`."""
        new_names = sorted((then_env.keys() & else_env.keys()) - before.keys())
        for name in new_names:
            a, b = then_env[name], else_env[name]
            if a != b and _shapes_differ(a, b):
                node = self._first_assignment(stmt, stmt.orelse, name)
                if node is not None:
                    self.branch_mismatches.append((name, stmt, a, b, node))

    def _first_assignment(self, stmt: ast.stmt, body: list[ast.stmt], name: str) -> ast.AST | None:
        key = (id(stmt), id(body))
        assigned = self._assigned_in.get(key)
        if assigned is None:
            assigned = {}
            for inner in body:
                for node in ast.walk(inner):
                    if isinstance(node, ast.Assign):
                        targets = node.targets
                    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                        targets = [node.target]
                    else:
                        continue
                    for target in targets:
                        if isinstance(target, ast.Name):
                            assigned.setdefault(target.id, node)
            self._assigned_in[key] = assigned
        return assigned.get(name)

    def _shape_changed(self, name: str, initial: VType, new: VType) -> bool:
        # A literal start (`acc = 0.0`) becomes a run-time scalar once the loop carries it.
        if (initial.constexpr and (name in self.kernel.param_names or initial.kind not in ("int", "float", "bool"))) \
                or new.constexpr or initial.block is None or new.block is None:
            return False
        if initial.kind not in ("int", "float", "bool") and initial.block is False:
            return False
        return initial.block != new.block or bool(
            initial.block and initial.rank is not None and new.rank is not None and initial.rank != new.rank)

    # -- expressions ---------------------------------------------------------------------------
    def expr(self, node: ast.expr) -> VType:
        kind = type(node)
        if kind is ast.Name:            # the commonest node: no memo needed beyond the environment
            value = self.env.get(node.id, UNKNOWN)
        elif kind is ast.Constant:
            value = _CONSTANTS.get(type(node.value), UNKNOWN)
        else:
            value = self._expr(node)
        previous = self.types.get(node)
        if previous is None or (previous != value and not self._rereading):
            self.types[node] = value if previous is None else join(previous, value)
        return value

    def _binop(self, op: ast.operator, a: VType, b: VType) -> VType:
        blk = True if (a.block or b.block) else (False if a.block is False and b.block is False else None)
        rank = None
        if blk is False:
            rank = 0
        elif a.rank is not None and b.rank is not None:
            rank = max(a.rank, b.rank)
        kinds = {a.kind, b.kind}
        kind: str | None
        if "pointer" in kinds:
            other = b.kind if a.kind == "pointer" else a.kind
            if isinstance(op, (ast.Add, ast.Sub)) and other in ("int", "bool") and not (
                    a.kind == b.kind == "pointer"):
                kind = "pointer"
            elif a.kind == b.kind == "pointer" and isinstance(op, ast.Sub):
                kind = "int"
            else:
                kind = None
        elif None in kinds or kinds & {"none", "tuple", "dtype", "str", "block_pointer"}:
            kind = None
        elif isinstance(op, ast.Div):
            kind = "float"
        elif "float" in kinds:
            kind = "float"
        elif isinstance(op, (ast.BitAnd, ast.BitOr, ast.BitXor)) and kinds == {"bool"}:
            kind = "bool"
        else:
            kind = "int"
        return VType(kind=kind, block=blk, rank=rank, constexpr=a.constexpr and b.constexpr)

    def _expr(self, node: ast.expr) -> VType:
        handler = _EXPRESSIONS.get(node.__class__)   # parsed nodes are never subclasses
        if handler is not None:
            return handler(self, node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.expr(child)
        return UNKNOWN

    def _constant(self, node: ast.Constant) -> VType:
        value = node.value
        if value is None:
            return scalar("none", constexpr=True)
        if isinstance(value, bool):
            return scalar("bool", constexpr=True)
        if isinstance(value, int):
            return scalar("int", constexpr=True)
        if isinstance(value, float):
            return scalar("float", constexpr=True)
        if isinstance(value, str):
            return scalar("str", constexpr=True)
        return UNKNOWN

    def _name(self, node: ast.Name) -> VType:
        return self.env.get(node.id, UNKNOWN)

    def _binop_node(self, node: ast.BinOp) -> VType:
        return self._binop(node.op, self.expr(node.left), self.expr(node.right))

    def _unary(self, node: ast.UnaryOp) -> VType:
        inner = self.expr(node.operand)
        if isinstance(node.op, ast.Not):
            return inner._replace(kind="bool" if inner.kind else None)
        return inner

    def _compare(self, node: ast.Compare) -> VType:
        parts = [self.expr(node.left)] + [self.expr(c) for c in node.comparators]
        if any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops) or any(
                p.kind == "none" for p in parts):
            return scalar("bool", constexpr=True)
        result = parts[0]
        for part in parts[1:]:
            result = self._binop(ast.Add(), result._replace(kind="int"), part._replace(kind="int"))
        return result._replace(kind="bool" if all(p.kind for p in parts) else None)

    def _boolop(self, node: ast.BoolOp) -> VType:
        parts = [self.expr(v) for v in node.values]
        result = parts[0]
        for part in parts[1:]:
            result = join(result, part)
        return result

    def _ifexp(self, node: ast.IfExp) -> VType:
        test = self.expr(node.test)
        body, orelse = self.expr(node.body), self.expr(node.orelse)
        if test.is_runtime and test.block is False and _shapes_differ(_as_tensor(body), _as_tensor(orelse)):
            self.ternary_mismatches[id(node)] = (node, body, orelse)
        return join(body, orelse)

    def _sequence(self, node: ast.Tuple | ast.List) -> VType:
        for elt in node.elts:
            self.expr(elt)
        return VType(kind="tuple")

    def _subscript(self, node: ast.Subscript) -> VType:
        value = self.expr(node.value)
        self.expr(node.slice)
        if value.block is not True:
            return UNKNOWN
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        rank = 0
        for part in parts:
            if isinstance(part, ast.Constant) and part.value is None:
                rank += 1
            elif isinstance(part, ast.Slice) and part.lower is None and part.upper is None and part.step is None:
                rank += 1
            else:
                return UNKNOWN
        return block(value.kind, rank)

    def _attribute(self, node: ast.Attribute) -> VType:
        name = self._tl_name(node)
        if name is not None:
            if dtype_kind(name) or name in ("int1", "pointer_type"):
                return VType(kind="dtype", constexpr=True)
            return UNKNOWN
        value = self.expr(node.value)
        if node.attr == "dtype":
            return VType(kind="dtype", constexpr=True)
        if node.attr == "T" and value.block:
            return value
        return UNKNOWN

    def _dtype_arg(self, node: ast.expr | None) -> str | None:
        if node is None:
            return None
        name = self._tl_name(node)
        if name is not None:
            return dtype_kind(name)
        if isinstance(node, ast.Call) and self._tl_name(node.func) == "pointer_type":
            return "pointer"
        return None

    def _call(self, node: ast.Call) -> VType:
        func = node.func
        name = self._tl_name(func)
        expr = self.expr
        args = [expr(a) for a in node.args]
        if node.keywords:
            kwargs = {k.arg: expr(k.value) for k in node.keywords if k.arg}
            kw_nodes = {k.arg: k.value for k in node.keywords if k.arg}
        else:   # most calls in a kernel
            kwargs, kw_nodes = {}, {}
        if name is None and isinstance(func, ast.Attribute):
            base = self.expr(func.value)
            if func.attr == "to" and base.block is not None:
                target = self._dtype_arg(node.args[0] if node.args else kw_nodes.get("dtype"))
                return base._replace(kind=target, constexpr=False)
            if func.attr in ("trans", "permute", "reshape", "view", "broadcast_to", "expand_dims") and base.block:
                return block(base.kind, None)
            return UNKNOWN
        if name is None:
            if isinstance(func, ast.Name):
                self.calls.append((func.id, args))
                if func.id in ("min", "max") and args:
                    result = args[0]
                    for a in args[1:]:
                        result = self._binop(ast.Add(), result, a)
                    return result
                if func.id in ("float",):
                    return scalar("float", constexpr=all(a.constexpr for a in args))
                if func.id in ("int", "len"):
                    return scalar("int", constexpr=all(a.constexpr for a in args))
            return UNKNOWN
        if name in ("program_id", "num_programs"):
            return scalar("int")
        if name == "arange":
            return block("int", 1)
        if name in ("zeros", "full"):
            shape = node.args[0] if node.args else kw_nodes.get("shape")
            dtype = node.args[-1] if len(node.args) >= (2 if name == "zeros" else 3) else kw_nodes.get("dtype")
            rank = len(shape.elts) if isinstance(shape, (ast.Tuple, ast.List)) else None
            if rank == 0:
                return scalar(self._dtype_arg(dtype))   # `tl.full((), 0, tl.int32)` is a scalar
            return block(self._dtype_arg(dtype), rank)
        if name in ("zeros_like", "full_like"):
            return args[0]._replace(constexpr=False) if args else UNKNOWN
        if name == "load":
            pointer = args[0] if args else kwargs.get("pointer", UNKNOWN)
            if pointer.kind == "block_pointer":
                return block(None, pointer.rank)
            if pointer.block is True:
                return block(None, pointer.rank)
            if pointer.block is False and pointer.kind == "pointer":
                mask = kwargs.get("mask")
                if mask is None or mask.block is False:
                    return scalar(None)
            return UNKNOWN
        if name == "make_block_ptr":
            shape = node.args[4] if len(node.args) > 4 else kw_nodes.get("block_shape")
            rank = len(shape.elts) if isinstance(shape, (ast.Tuple, ast.List)) else None
            return VType(kind="block_pointer", rank=rank)
        if name == "advance":
            return args[0] if args else UNKNOWN
        if name in _REDUCTIONS:
            if not args:
                return UNKNOWN
            x = args[0]
            axis_node = node.args[1] if len(node.args) > 1 else kw_nodes.get("axis")
            kind = _REDUCTIONS[name] or x.kind
            if name in ("max", "min") and len(node.args) > 1 and not (
                    isinstance(axis_node, ast.Constant) and isinstance(axis_node.value, int)):
                if axis_node is not None and not isinstance(axis_node, (ast.Constant, ast.UnaryOp)):
                    return UNKNOWN
            if axis_node is None or (isinstance(axis_node, ast.Constant) and axis_node.value is None):
                if "keep_dims" in kw_nodes:
                    return UNKNOWN
                return scalar(kind) if x.block is not None else UNKNOWN
            if x.rank is not None and "keep_dims" not in kw_nodes:
                return scalar(kind) if x.rank <= 1 else block(kind, x.rank - 1)
            return VType(kind=kind)
        if name in _ELEMENTWISE_FLOAT:
            x = args[0] if args else UNKNOWN
            return VType(kind="float", block=x.block, rank=x.rank)
        if name in _ELEMENTWISE_SAME:
            x = args[0] if args else UNKNOWN
            return x._replace(constexpr=False)
        if name in ("maximum", "minimum") and len(args) == 2:
            return self._binop(ast.Add(), args[0], args[1])
        if name == "where" and len(args) == 3:
            result = self._binop(ast.Add(), args[1], args[2])
            shaped = self._binop(ast.Add(), args[0]._replace(kind="int"), result._replace(kind="int"))
            return shaped._replace(kind=result.kind)
        if name == "dot":
            if any(a.rank is not None and a.rank < 2 for a in args[:2]):
                return UNKNOWN   # TRI028's error; no second finding downstream
            return block("float" if all(a.kind == "float" for a in args[:2]) else None, 2)
        if name in ("trans", "permute", "reshape", "view", "broadcast_to", "expand_dims", "ravel",
                    "interleave", "join", "cat"):
            x = args[0] if args else UNKNOWN
            return block(x.kind, None) if x.block else UNKNOWN
        if name == "cast" and args:
            target = self._dtype_arg(node.args[1] if len(node.args) > 1 else kw_nodes.get("dtype"))
            return args[0]._replace(kind=target, constexpr=False)
        if name == "cdiv" and len(args) == 2:
            return self._binop(ast.FloorDiv(), args[0], args[1])
        if name in ("rand", "randn"):
            offsets = args[1] if len(args) > 1 else kwargs.get("offset", UNKNOWN)
            return VType(kind="float", block=offsets.block, rank=offsets.rank)
        return UNKNOWN


# `KernelTypes._expr`'s handler per expression class (another class: its child expressions are
# read, and its type is unknown)
_EXPRESSIONS = {
    ast.Constant: KernelTypes._constant, ast.Name: KernelTypes._name, ast.BinOp: KernelTypes._binop_node,
    ast.UnaryOp: KernelTypes._unary, ast.Compare: KernelTypes._compare, ast.BoolOp: KernelTypes._boolop,
    ast.IfExp: KernelTypes._ifexp, ast.Subscript: KernelTypes._subscript, ast.Attribute: KernelTypes._attribute,
    ast.Call: KernelTypes._call, ast.Tuple: KernelTypes._sequence, ast.List: KernelTypes._sequence,
}


def _call_site_params(ctx: PythonContext, helper: Kernel, callers: list[KernelTypes]) -> dict[str, VType] | None:
    """A helper's parameter types from its calls in the file's kernels (None if it has none)."""
    seen: dict[str, VType] = {}
    found = False
    for caller in callers:
        for name, args in caller.calls:
            if name != helper.name:
                continue
            found = True
            for param, value in zip(helper.param_names, args):
                seen[param] = join(seen.get(param), value._replace(origin=None))
    if not found:
        return None
    constexpr = helper.constexpr_names
    out = {}
    for p in helper.params:
        if p.name in constexpr:
            out[p.name] = VType(block=False, rank=0, constexpr=True)
        else:
            out[p.name] = seen.get(p.name, UNKNOWN)
    return out


def dot_rank_problem(types: KernelTypes, call: ast.Call) -> tuple[ast.expr, str] | None:
    """A `tl.dot` operand whose known rank is below 2: (the operand, "a scalar" | "a 1-D block").
    TRI028 reports it; TRI021 leaves such calls to TRI028."""
    for operand in call.args[:2]:
        t = types.of(operand)
        if t.rank is not None and t.rank < 2 and (t.block is True or t.is_runtime):
            return operand, "a scalar" if t.rank == 0 else "a 1-D block"
    return None


# Path segments of code written for a vendor's fork of Triton (Ascend, Cambricon, Kunlunxin, ...),
# whose language differs from triton-lang's: the compile-break rules do not judge it.
_VENDOR_SEGMENTS = ("ascend", "npu", "cambricon", "mlu", "kunlunxin", "kunlun", "xpu", "metax", "mthreads",
                    "musa", "iluvatar", "hygon", "dcu", "enflame", "gcu", "tsingmicro", "sunrise", "aipu",
                    "ppu", "spacemit", "arm")


@lru_cache(maxsize=256)
def vendor_fork(path: str) -> bool:
    """A file whose path names a vendor backend (`backend/_ascend/`, `triton_ascend.py`)."""
    for segment in path.replace("\\", "/").lower().split("/"):
        words = segment.removesuffix(".py").replace("-", "_").split("_")
        if any(w in _VENDOR_SEGMENTS for w in words):
            return True
    return False


def kernel_types(ctx: PythonContext) -> dict[ast.FunctionDef, KernelTypes]:
    """Types of every jit function of the file, computed once per file."""
    return ctx.per_file(("kernel-types",), lambda: _infer(ctx))


def typed_kernels(ctx: PythonContext) -> Iterator[tuple[Kernel, KernelTypes]]:
    """Each kernel of the file with its types (none for a vendor fork's), for the rules built on them."""
    all_types = kernel_types(ctx)
    for kernel in ctx.kernels:
        types = all_types.get(kernel.node)
        if types is not None:
            yield kernel, types


def _infer(ctx: PythonContext) -> dict[ast.FunctionDef, KernelTypes]:
    out: dict[ast.FunctionDef, KernelTypes] = {}
    if vendor_fork(ctx.source.path):
        return out          # no rule judges a vendor fork's kernels
    kernels = list(ctx.kernels)
    roots = [k for k in kernels if not k.is_helper]
    for kernel in roots:
        if kernel.returns_value and not _launches(ctx, kernel):
            # A device function called from kernels elsewhere: its parameters may be blocks.
            out[kernel.node] = KernelTypes(ctx, kernel, {p.name: VType(constexpr=True) if p.constexpr else UNKNOWN
                                                    for p in kernel.params})
        else:
            out[kernel.node] = KernelTypes(ctx, kernel)
    pending = [k for k in kernels if k.is_helper]
    for _ in range(3):
        still = []
        for helper in pending:
            params = _call_site_params(ctx, helper, list(out.values()))
            if params is None:
                still.append(helper)
                continue
            out[helper.node] = KernelTypes(ctx, helper, params)
        pending = still
    for helper in pending:
        out[helper.node] = KernelTypes(ctx, helper, {p.name: VType(constexpr=True) if p.constexpr else UNKNOWN
                                                for p in helper.params})
    return out
