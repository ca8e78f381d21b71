"""TRI016 float-scalar-arg: a Python-float kernel argument used with tensors without a cast.

Eager Triton specialises a non-constexpr Python float argument as fp32; the same kernel launched
from `torch.compile` (Inductor) gets it as fp64. `x * eps` then promotes the whole expression,
transcendentals included, to FP64: Liger-Kernel#1350 measured 56.1 us (fp32) against 108.5 us
(fp64) for SwiGLU on an H100, and 56.0 us once the scalar was cast with `.to(tl.float32)`.

A parameter is a float scalar when it is not `tl.constexpr` and its default is a float, a launch
in the same file passes a float (`1e-6`, `1.0 / math.sqrt(d)`), or its name says so (`eps`,
`scale`, `alpha`, `softcap`, `temperature`, `*_eps`, `*_scale`, ...), unless it is used as a
pointer or a launch passes it an int. The rule fires at its first use in arithmetic with a
tensor, unless a cast (`eps = eps.to(tl.float32)` or `tl.cast`) comes first. `@jit` helpers are
skipped: their arguments come from the calling kernel, where the cast belongs.

Reported only where the FP64 costs: the promoted value reaches a tile (one value per element,
`_tile_values`) that feeds a transcendental, a square root or a division (`exp`, `sigmoid`,
`rsqrt`, `/`, a project's `exp2`/`softplus` wrapper: long FP64 sequences), or an operand of a
`tl.dot` (no FP64 tensor cores). Plain multiplies and adds on every element (before a store, in a
recurrence, `acc += tl.dot(q, k) * scale`) and `var + eps` on a row statistic run at half rate,
hidden behind memory traffic on H100/H200-class parts, and are not reported. A cast to any other
dtype (`(q * scale).to(q.dtype)`), or a later plain rebinding of the name, ends the FP64.
Skipped where the file shows the kernel is launched only eagerly (`_launched_eagerly`: flag-gems'
`@libentry` ATen overrides, launches inside functions registered as custom ops or reached from
vLLM's attention implementations or decorated with a workspace decorator that returns
`torch.compiler.disable(...)`, attention kernels that vLLM and sglang run outside the graph),
where the argument arrives as fp32. One finding per expression. Only where the code targets NVIDIA or an unknown
target (`ctx.target`): the Inductor signature and FP64 rates cited are CUDA's.

The fix inserts `eps = tl.cast(eps, tl.float32)` rather than `eps.to(tl.float32)`: both compile
to the same (nothing for fp32, one `truncf` for fp64), but Triton's CPU interpreter
(TRITON_INTERPRET=1) passes Python floats unwrapped, so `.to` raises AttributeError there.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.launch_context import attention_impl, disabling_decorator, eager_names, is_eager
from tritonify.diagnostics.model import Applicability, Edit, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._precision import (
    Launch,
    dtype_kind,
    launches,
    numeric_value,
    tl_alias,
)
from tritonify.diagnostics.rules.triton._tile_values import tile_values
from tritonify.diagnostics.triton_ast import TL, Kernel, Param, child_nodes, dotted, libdevice_name, walk_nodes

RULE = Rule(
    code="TRI016",
    name="float-scalar-arg",
    summary="Python-float kernel argument used with tensors without .to(tl.float32)",
    severity=Severity.WARNING,
    fixable=True,
    # Opt-in: 11 of 29 findings were true positives in round 2 of the real-world study
    # (benchmarks/realworld/labels/round2_*.csv), under the 90% the default set requires.
    default=False,
)

FLOAT_NAMES = {
    "eps", "epsilon", "scale", "sm_scale", "softmax_scale", "qk_scale", "alpha", "beta", "gamma",
    "softcap", "logit_softcap", "softcapping", "temperature", "temp", "inv_temperature", "momentum",
    "lr", "weight_decay", "label_smoothing", "negative_slope", "gate_multiplier", "down_multiplier",
    "multiplier", "lse_square_scale", "dropout_p", "max_norm", "clip_value", "norm_eps", "rms_eps",
    "layer_norm_eps", "variance_epsilon",
}
FLOAT_SUFFIXES = ("_eps", "_epsilon", "_scale", "_multiplier", "_temperature", "_softcap", "_alpha", "_beta")
# Calls whose result is a tensor (the seeds of "loaded tensors").
TENSOR_SOURCES = {
    "load", "dot", "zeros", "zeros_like", "full", "full_like", "rand", "randn", "arange",
    "make_block_ptr", "atomic_add", "reshape", "trans", "sum", "max", "min", "exp", "exp2",
}
POINTER_USES = {"load", "store", "make_block_ptr", "make_tensor_descriptor", "atomic_add", "atomic_max",
                "atomic_min", "atomic_cas", "atomic_xchg", "atomic_and", "atomic_or", "atomic_xor"}
ELEMENTWISE = {"maximum", "minimum", "where", "fma", "clamp", "fdiv", "div_rn", "math.fdiv", "math.div_rn"}


def _is_float_expr(ctx: PythonContext, node: ast.AST) -> bool:
    """A host expression that is certainly a Python float."""
    if isinstance(node, ast.Constant):
        return type(node.value) is float
    if isinstance(node, ast.UnaryOp):
        return _is_float_expr(ctx, node.operand)
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Div) and all(numeric_value(s) is not None or _is_float_expr(ctx, s) for s in (node.left, node.right)):
            return True
        return _is_float_expr(ctx, node.left) or _is_float_expr(ctx, node.right)
    if isinstance(node, ast.Call):
        path = ctx.imports.resolve(node.func) or ""
        return path == "float" or path in ("math.sqrt", "math.log", "math.exp", "math.log2")
    return False


def _is_int_literal(node: ast.AST) -> bool:
    while isinstance(node, ast.UnaryOp):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, bool)


def _name_says_float(name: str) -> bool:
    low = name.lower()
    return low in FLOAT_NAMES or low.endswith(FLOAT_SUFFIXES)


class _Flow:
    """Which locals of a kernel hold tensors, which carry a given scalar parameter, and which
    names are used as pointers."""

    def __init__(self, ctx: PythonContext, kernel: Kernel):
        self.ctx = ctx
        self.kernel = kernel
        self.assigned: dict[str, list[ast.expr]] = {}
        for node in kernel.walk():
            targets, value = [], None
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
                targets, value = [node.target], node.value
            for target in targets:
                for n in walk_nodes(target):
                    if isinstance(n, ast.Name):
                        self.assigned.setdefault(n.id, []).append(value)
        self.tensors = self._tensor_locals()
        self.pointer_names = self._pointer_names()

    def _tl(self, func: ast.AST) -> str | None:
        path = self.ctx.imports.resolve(func) or ""
        return path[len(TL) + 1:] if path.startswith(TL + ".") else None

    def _tensor_locals(self) -> set[str]:
        tensors: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name, values in self.assigned.items():
                if name not in tensors and any(self.is_tensor(v, tensors) for v in values):
                    tensors.add(name)
                    changed = True
        return tensors

    def is_tensor(self, expr: ast.AST, tensors: set[str] | None = None) -> bool:
        tensors = self.tensors if tensors is None else tensors
        for node in walk_nodes(expr):
            if isinstance(node, ast.Name) and node.id in tensors:
                return True
            if isinstance(node, ast.Call) and self._tl(node.func) in TENSOR_SOURCES:
                return True
        return False

    def _pointer_names(self) -> set[str]:
        names: set[str] = set()
        for node in self.kernel.walk():
            if isinstance(node, ast.Call) and self._tl(node.func) in POINTER_USES and node.args:
                names |= self._names_through_locals(node.args[0], set())
            if isinstance(node, ast.Call) and self._tl(node.func) == "make_block_ptr":
                for kw in node.keywords:
                    if kw.arg == "base":
                        names |= self._names_through_locals(kw.value, set())
        return names

    def _names_through_locals(self, expr: ast.AST, seen: set[str]) -> set[str]:
        out: set[str] = set()
        for node in walk_nodes(expr):
            if isinstance(node, ast.Name) and node.id not in seen:
                seen.add(node.id)
                out.add(node.id)
                for value in self.assigned.get(node.id, []):
                    out |= self._names_through_locals(value, seen)
        return out

    def carries(self, expr: ast.AST, param: str) -> bool:
        """`expr` holds the raw (uncast) value of `param`, directly or through a chain of locals
        (none of them a tensor, no float cast on the way)."""
        direct, through = self._reads_raw(expr, param)
        return direct or not through.isdisjoint(self._carriers(param))

    def _reads_raw(self, expr: ast.AST, param: str) -> tuple[bool, set[str]]:
        """(whether `expr` reads `param` outside a float cast, the locals it reads that way that
        could carry it: assigned in the kernel, not tensors)."""
        direct, through = False, set()
        todo = [expr]
        while todo:
            node = todo.pop()
            if isinstance(node, ast.Name):
                if node.id == param:
                    direct = True
                elif node.id not in self.tensors and node.id in self.assigned:
                    through.add(node.id)
            elif not (isinstance(node, ast.Call) and self._is_float_cast(node)):
                todo.extend(child_nodes(node))
        return direct, through

    def _carriers(self, param: str) -> set[str]:
        """Locals that carry `param`: a value bound to them reads it, or reads a carrier (a
        least fixpoint, worked through once per parameter rather than once per use)."""
        cache = self.__dict__.setdefault("_carrier_sets", {})
        if param in cache:
            return cache[param]
        carriers: set[str] = set()
        readers: dict[str, set[str]] = {}
        todo: list[str] = []
        for name, values in self.assigned.items():
            if name == param or name in self.tensors:
                continue  # the parameter itself is matched by name; a tensor never carries it
            for value in values:
                direct, through = self._reads_raw(value, param)
                if direct and name not in carriers:
                    carriers.add(name)
                    todo.append(name)
                for read in through:
                    readers.setdefault(read, set()).add(name)
        while todo:
            for name in readers.get(todo.pop(), ()):
                if name not in carriers:
                    carriers.add(name)
                    todo.append(name)
        cache[param] = carriers
        return carriers

    def _is_float_cast(self, call: ast.Call) -> bool:
        func = call.func
        if self._tl(func) == "cast":
            target = call.args[1] if len(call.args) > 1 else None
        elif isinstance(func, ast.Attribute) and func.attr in ("to", "cast"):
            target = call.args[0] if call.args else None
        else:
            return False
        return dtype_kind(self.ctx, target) in ("fp32", "fp16", "bf16")


def _launch_evidence(ctx: PythonContext, kernel: Kernel, found: list[Launch]) -> tuple[set[str], set[str]]:
    floats, ints = set(), set()
    for launch in found:
        if launch.kernel is not kernel:
            continue
        for name, arg in launch.bound_args().items():
            if _is_float_expr(ctx, arg):
                floats.add(name)
            elif _is_int_literal(arg):
                ints.add(name)
    return floats, ints


def _candidates(ctx: PythonContext, kernel: Kernel, floats: set[str], ints: set[str]) -> list[Param]:
    """Parameters that may be Python floats (the caller drops those used as pointers)."""
    out = []
    for p in kernel.params:
        if p.constexpr or p.name in kernel.constexpr_names or p.annotation or p.name in ints:
            continue
        default_float = p.default is not None and type(getattr(p.default, "value", None)) is float
        if default_float or p.name in floats or _name_says_float(p.name):
            out.append(p)
    return out


def _cast_line(ctx: PythonContext, flow: _Flow, param: str) -> int | None:
    """Line of the first `param = param.to(tl.float32)` (or `tl.cast`) in the kernel."""
    lines = []
    for node in flow.kernel.walk():
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == param for t in node.targets):
            value = node.value
            if isinstance(value, ast.Call) and flow._is_float_cast(value):
                lines.append(node.lineno)
    return min(lines) if lines else None


def _uses(ctx: PythonContext, flow: _Flow, param: str) -> Iterator[ast.AST]:
    """Arithmetic nodes combining the raw parameter with a tensor, in source order."""
    found = []
    for node in flow.kernel.walk():
        if isinstance(node, ast.BinOp) and not isinstance(node.op, (ast.LShift, ast.RShift, ast.BitAnd, ast.BitOr, ast.BitXor)):
            sides = (node.left, node.right)
        elif isinstance(node, ast.AugAssign):
            sides = (node.target, node.value)
        elif isinstance(node, ast.Call) and flow._tl(node.func) in ELEMENTWISE:
            sides = tuple(node.args)
        else:
            continue
        # the innermost combination: a scalar side that carries the parameter, a tensor side
        carrying = [s for s in sides if flow.carries(s, param) and not flow.is_tensor(s)]
        tensor = [s for s in sides if s not in carrying and flow.is_tensor(s)]
        if carrying and tensor:
            found.append(node)
    found.sort(key=lambda n: (n.lineno, n.col_offset))
    return iter(found)


# Calls whose FP64 form is a long instruction sequence (the cost Liger-Kernel#1350 measured).
COSTLY_IN_FP64 = {
    "exp", "exp2", "log", "log2", "log1p", "sigmoid", "sqrt", "sqrt_rn", "rsqrt", "erf", "sin", "cos",
    "pow", "fdiv", "div_rn", "softmax", "math.exp", "math.exp2", "math.log", "math.log2", "math.sqrt",
    "math.rsqrt", "math.erf", "math.pow", "math.fdiv", "math.div_rn", "math.sigmoid",
}


# Project helpers named after a transcendental (wrappers of tl.exp2, libdevice, a softplus).
COSTLY_HELPERS = {"exp", "exp2", "log", "log2", "log1p", "sigmoid", "softplus", "softplus2", "rsqrt", "tanh"}


def _casts_away(flow: "_Flow", call: ast.Call) -> bool:
    """A cast to anything but fp64 (`.to(tl.float32)`, `.to(b_q.dtype)`, `tl.cast(x, y.dtype)`) ends the FP64."""
    func = call.func
    if flow._tl(func) == "cast":
        target = call.args[1] if len(call.args) > 1 else None
    elif isinstance(func, ast.Attribute) and func.attr in ("to", "cast"):
        target = call.args[0] if call.args else None
    else:
        return False
    return target is not None and dtype_kind(flow.ctx, target) != "fp64"


def _is_dot(ctx: PythonContext, call: ast.Call) -> bool:
    return (ctx.imports.resolve(call.func) or "") == f"{TL}.dot"


class _Costs:
    """Per kernel, shared by every parameter and every use: the places where an FP64 value would
    cost (a costly call or a division on a tile; tile arithmetic in a `tl.dot` loop), each with the
    names it reads, and which local names read which (a cast to another dtype stops the reading)."""

    def __init__(self, ctx: PythonContext, kernel: Kernel, flow: "_Flow"):
        self.ctx = ctx
        self.kernel = kernel
        self.flow = flow
        self._reads: dict[int, frozenset[str]] = {}
        self.readers: dict[str, list[tuple[str, int]]] = {}   # name -> (local bound from it, line)
        self.rebinds: dict[str, list[ast.Assign]] = {}       # name -> its plain `name = ...` statements
        for node in kernel.walk():
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
                if len(targets) == 1 and isinstance(targets[0], ast.Name):
                    self.rebinds.setdefault(targets[0].id, []).append(node)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
                targets, value = [node.target], node.value
            else:
                continue
            bound = {n.id for t in targets for n in walk_nodes(t) if isinstance(n, ast.Name)}
            for n in self.names_read(value):
                for name in bound:
                    self.readers.setdefault(n, []).append((name, node.lineno))
        tiles = tile_values(ctx, kernel)
        self.calls: list[tuple[ast.AST, str, list[ast.AST]]] = []
        for node in kernel.walk():
            if isinstance(node, ast.Call) and _is_dot(ctx, node):
                args = [*node.args, *(kw.value for kw in node.keywords if kw.arg in ("a", "b", "acc"))]
                self.calls.append((node, "the `tl.dot` then takes an FP64 operand (no tensor cores)", args))
            elif isinstance(node, ast.Call) and node.args:
                name = flow._tl(node.func)
                lib = libdevice_name(ctx.imports, node.func)
                if name is None and lib is None:
                    # a project's own wrapper (`from fla.ops.utils.op import exp2`, `softplus2(x)`)
                    helper = _last(ctx.imports.resolve(node.func) or dotted(node.func))
                    lib = helper if helper in COSTLY_HELPERS else None
                if name in COSTLY_IN_FP64 or lib in COSTLY_IN_FP64 or lib in COSTLY_HELPERS:
                    args = [a for a in node.args if tiles.is_tile(a)]
                    if args:
                        self.calls.append((node, f"`{(name or lib).split('.')[-1]}` then runs in FP64 on every element", args))
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and tiles.is_tile(node):
                self.calls.append((node, "the division then runs in FP64 on every element", [node.left, node.right]))

    def names_read(self, expr: ast.AST) -> frozenset[str]:
        """Names `expr` reads, not looking inside a cast to another dtype."""
        key = id(expr)
        found = self._reads.get(key)
        if found is None:
            if isinstance(expr, ast.Call) and _casts_away(self.flow, expr):
                found = frozenset()
            elif isinstance(expr, ast.Name):
                found = frozenset((expr.id,))
            else:
                out: set[str] = set()
                for c in child_nodes(expr):
                    out |= self.names_read(c)
                found = frozenset(out)
            self._reads[key] = found
        return found

    def why(self, use: ast.AST) -> str | None:
        """Why the FP64 promotion of `use` costs, or None when it only touches row values or plain
        per-element arithmetic outside `tl.dot` loops."""
        ctx = self.ctx
        holders: set[int] = {id(use)}     # expressions that contain the use, up to a cast that ends it
        seeds: set[str] = set()
        for anc in ctx.ancestors(use):
            if anc is self.kernel.node:
                break
            if isinstance(anc, ast.Call) and _casts_away(self.flow, anc):
                break
            if isinstance(anc, ast.stmt):
                if isinstance(anc, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                    targets = anc.targets if isinstance(anc, ast.Assign) else [anc.target]
                    seeds = {n.id for t in targets for n in walk_nodes(t) if isinstance(n, ast.Name)}
                break
            holders.add(id(anc))
        if isinstance(use, ast.AugAssign) and isinstance(use.target, ast.Name):
            seeds.add(use.target.id)   # `x *= scale` binds x to `scale`: x carries it
        reach, todo = set(seeds), list(seeds)
        killed: dict[str, int] = {}
        while todo:
            name = todo.pop()
            kill = self._rebound_later(use, name, seeds)
            if kill is not None:
                killed[name] = kill
            for reader, line in self.readers.get(name, ()):
                if reader not in reach and (kill is None or line < kill):
                    reach.add(reader)
                    todo.append(reader)
        inside_use = {id(n) for n in walk_nodes(use)} - {id(use)}

        def carries(expr: ast.AST, line: int) -> bool:
            if id(expr) in holders:
                return True
            return any(line < killed.get(n, line + 1) for n in self.names_read(expr) & reach)

        # only what runs on the promoted value: not the operands computed before it (`acc / s` in
        # `acc = acc / s * scale`), nor earlier lines that read a name the use rebinds later
        def after(node: ast.AST) -> bool:
            if id(node) in holders:
                return True
            return id(node) not in inside_use and getattr(node, "lineno", use.lineno) >= use.lineno

        for node, reason, args in self.calls:
            if after(node) and any(carries(a, node.lineno) for a in args):
                return reason
        return None

    def _branches(self, node: ast.AST) -> dict[int, bool]:
        """The `if`s around `node`: id -> whether it sits in the `else` branch."""
        out, child = {}, node
        for anc in self.ctx.ancestors(node):
            if isinstance(anc, ast.If) and child is not anc.test:
                out[id(anc)] = child in anc.orelse
            child = anc
        return out

    def _rebound_later(self, use: ast.AST, name: str, seeds: set[str]) -> int | None:
        """Line of the first later plain assignment that rebinds `name` to a value free of the
        FP64 (`y = y.to(tl.bfloat16)`, `b_ds = tl.dot(b_do, b_v)` in a second loop): past it the
        name no longer holds the promoted value. Only assignments under the same `if`s as the use
        count (a conditional rebinding leaves the FP64 on the other path)."""
        use_ifs = self._branches(use)
        lines = [
            node.lineno for node in self.rebinds.get(name, ())
            if node.lineno > use.lineno and not self.names_read(node.value) & (seeds | {name})
            and self._branches(node).items() <= use_ifs.items()
        ]
        return min(lines) if lines else None


# Registrations that make a Python function an opaque operator: torch.compile calls it as a
# black box, so its Triton launches run eagerly and a Python float arrives as fp32.
# (`torch.library.triton_op` is not one: Inductor traces into it and launches the kernel itself.)
OPAQUE_OP_DECORATORS = {"custom_op", "register_custom_op", "register_kernel"}
OPAQUE_OP_CALLS = {"direct_register_custom_op", "register_custom_op"}


def _last(path: str | None) -> str:
    return (path or "").rsplit(".", 1)[-1]


def _decorator_path(ctx: PythonContext, dec: ast.expr) -> str:
    return ctx.imports.resolve(dec.func if isinstance(dec, ast.Call) else dec) or dotted(
        dec.func if isinstance(dec, ast.Call) else dec) or ""


def _opaque_functions(ctx: PythonContext) -> set[ast.AST]:
    """Functions of the file registered as opaque operators: decorated with
    `torch.library.custom_op` / `torch.library.impl` / `register_kernel` / sglang's
    `register_custom_op`, or passed to vLLM's `direct_register_custom_op(op_func=...)`."""
    def build() -> set[ast.AST]:
        defs: dict[str, list[ast.AST]] = {}
        out: set[ast.AST] = set()
        for node in ctx.module_nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defs.setdefault(node.name, []).append(node)
                for dec in node.decorator_list:
                    path = _decorator_path(ctx, dec)
                    if _last(path) in OPAQUE_OP_DECORATORS or path == "torch.library.impl":
                        out.add(node)
        for call in ctx.module_calls:
            if _last(ctx.imports.resolve(call.func) or dotted(call.func)) not in OPAQUE_OP_CALLS:
                continue
            funcs = [kw.value for kw in call.keywords if kw.arg == "op_func"] + call.args[1:2]
            for f in funcs:
                if isinstance(f, ast.Name):
                    out.update(defs.get(f.id, ()))
        return out
    return ctx.per_file(("tri016-opaque-ops",), build)


def _file_functions(ctx: PythonContext) -> tuple[dict[str, ast.AST], dict[str, list[ast.AST]]]:
    """(module-level functions by name, methods of module-level classes by class name)."""
    defs: dict[str, ast.AST] = {}
    methods: dict[str, list[ast.AST]] = {}
    for node in ctx.tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs[node.name] = node
        elif isinstance(node, ast.ClassDef):
            methods[node.name] = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return defs, methods


def _eager_functions(ctx: PythonContext) -> set[ast.AST]:
    """The functions of this file that run outside torch.compile: registered here as opaque
    operators (`_opaque_functions`), decorated with `torch.compiler.disable`, methods of an attention
    implementation class (`launch_context.attention_impl`: vLLM's `AttentionImpl` family), or named eager by
    another module of the workspace (`launch_context.eager_names`: `torch.compiler.disable(f)`,
    `direct_register_custom_op(op_func=f)`, the functions such an op calls), and every function
    of the file they call (by name; a class named or `Class.apply(...)` reaches its methods)."""
    def build() -> set[ast.AST]:
        defs, methods = _file_functions(ctx)
        roots: set[ast.AST] = set(_opaque_functions(ctx))
        for node in [*defs.values(), *(m for ms in methods.values() for m in ms)]:
            for dec in node.decorator_list:
                path = _decorator_path(ctx, dec)
                if path.endswith(("compiler.disable", "_dynamo.disable")):
                    roots.add(node)
        path = ctx.source.path
        module = ""
        if path and not path.startswith("<") and Path(path).is_file():
            module, names = eager_names(path, ctx.source.text)
            if names:
                roots.update(node for name, node in defs.items() if is_eager(module, name, names))
                # decorated with a decorator of the workspace that returns torch.compiler.disable(...)
                for node in [*defs.values(), *(m for ms in methods.values() for m in ms)]:
                    if any(disabling_decorator(_decorator_path(ctx, d), names) for d in node.decorator_list):
                        roots.add(node)
        for cls in ctx.tree.body:
            # vLLM's attention implementations run inside the opaque unified-attention op
            if isinstance(cls, ast.ClassDef) and attention_impl(cls, module or Path(str(path or "")).stem):
                roots.update(methods.get(cls.name, ()))
        eager: set[ast.AST] = set()
        stack = list(roots)
        while stack:
            fn = stack.pop()
            if fn in eager:
                continue
            eager.add(fn)
            for call in ast.walk(fn):
                if not isinstance(call, ast.Call):
                    continue
                func = call.func
                if isinstance(func, ast.Name) and func.id in defs:
                    stack.append(defs[func.id])
                elif isinstance(func, ast.Name) and func.id in methods:
                    stack.extend(methods[func.id])         # `Runner(...)(...)`: the class's methods
                elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in methods:
                    stack.extend(methods[func.value.id])   # `Fn.apply(...)`: the autograd Function's forward/backward
        return eager
    return ctx.per_file(("tri016-eager-functions",), build)


# Serving engines whose attention runs outside the compiled graph. vLLM: every attention-family
# layer (`unified_attention(_with_output)`, `unified_mla_attention`, `gdn_attention_core`,
# `kda_attention`, mamba mixers, sparse indexers) is a custom op registered with
# `direct_register_custom_op`, opaque to Dynamo; the kernels under its attention packages run in
# those ops' bodies. sglang: `torch.compile` captures the decode batch only and its piecewise mode
# splits attention out, so prefill/extend (and chunked linear-attention prefill) kernels run eagerly.
_ATTENTION_PART = re.compile(r"attention|attn|mla|mamba", re.I)
_PREFILL = re.compile(r"prefill|extend|chunk", re.I)


def _engine_attention_eager(ctx: PythonContext, kernel: Kernel, found: list[Launch]) -> bool:
    parts = Path(str(ctx.source.path or "")).parts
    for engine in ("vllm", "sglang"):
        if engine not in parts:
            continue
        below = parts[len(parts) - 1 - parts[::-1].index(engine) + 1:]
        if not any(_ATTENTION_PART.search(p) for p in below):
            return False
        if engine == "vllm":
            return True
        names = [kernel.node.name, *(getattr(launch.scope, "name", "") for launch in found if launch.kernel is kernel)]
        return any(_PREFILL.search(p) for p in [*below, *names])
    return False


def _launched_eagerly(ctx: PythonContext, kernel: Kernel, found: list[Launch]) -> bool:
    """The kernel is only ever launched eagerly, so the fp64 premise does not hold: a flag-gems
    kernel (`@libentry()`, or a file of the `flag_gems` package: ATen overrides launched by their
    own Python wrappers), or every launch in the file sits in a function that runs outside
    torch.compile (`_eager_functions`: an opaque operator, a `torch.compiler.disable`d entry
    point, here or in another module of the workspace, and what they call), or an attention
    kernel of a serving engine that runs it outside the graph (`_engine_attention_eager`)."""
    if any(_last(_decorator_path(ctx, d)) == "libentry" for d in kernel.node.decorator_list):
        return True
    if "flag_gems" in Path(str(ctx.source.path or "")).parts:
        return True
    if _engine_attention_eager(ctx, kernel, found):
        return True
    mine = [launch for launch in found if launch.kernel is kernel]
    if not mine:
        return False
    eager = _eager_functions(ctx)
    return all(launch.scope in eager for launch in mine)


def _insert_point(ctx: PythonContext, kernel: Kernel) -> tuple[int, str] | None:
    """(line, indentation) of the kernel's first statement after a docstring."""
    body = kernel.node.body
    first = body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        if len(body) == 1:
            return None
        first = body[1]
    if first.lineno == kernel.node.lineno or first.lineno == getattr(body[0], "end_lineno", 0) and first is not body[0]:
        return None  # body on the `def` line or after `"""doc"""; ...`: no clean place to insert
    return first.lineno, ctx.source.indent_of(first.lineno)


def check(ctx: PythonContext) -> Iterator[Finding]:
    found_launches = None
    for kernel in ctx.kernels:
        if kernel.is_helper:
            continue
        if found_launches is None:
            found_launches = launches(ctx)
        floats, ints = _launch_evidence(ctx, kernel, found_launches)
        candidates = _candidates(ctx, kernel, floats, ints)
        if not candidates:
            continue  # most kernels take no float scalar: skip their data flow
        if _launched_eagerly(ctx, kernel, found_launches):
            continue  # (after the cheap screen: it may read the workspace's launch context)
        flow = _Flow(ctx, kernel)
        costs = None   # built on the first use that needs it, once per kernel
        reported: set[int] = set()   # one finding per expression (`x * scale * alpha`: the first parameter)
        for param in candidates:
            name = param.name
            if name in flow.pointer_names:
                continue
            cast_at = _cast_line(ctx, flow, name)
            use, why = None, None
            for candidate in _uses(ctx, flow, name):
                if cast_at is not None and candidate.lineno >= cast_at:
                    break
                if costs is None:
                    costs = _Costs(ctx, kernel, flow)
                why = costs.why(candidate)
                if why:
                    use = candidate
                    break
            if use is None or id(use) in reported or not ctx.target.nvidia(use):
                continue
            reported.add(id(use))
            tl = tl_alias(ctx)
            fixes = []
            point = _insert_point(ctx, kernel)
            if point is not None:
                line, indent = point
                fixes.append(Fix(
                    title=f"Cast `{name}` to fp32 at kernel entry",
                    edits=(Edit.insert(line, 0, f"{indent}{name} = {tl}.cast({name}, {tl}.float32)\n"),),
                    applicability=Applicability.SAFE,
                ))
            snippet = ctx.segment(use)
            if len(snippet) > 40:
                snippet = snippet[:37] + "..."
            carried = _loop_carried_target(ctx, kernel, use)
            if carried is not None:
                message = (
                    f"`{name}` is a Python-float kernel argument: launched from torch.compile/Inductor it arrives as "
                    f"fp64, so `{snippet}` makes the loop-carried `{carried}` fp64 while it enters the loop as fp32: "
                    f"Triton rejects the kernel there (a compile error under torch.compile, not a slowdown); "
                    f"add `{name} = {tl}.cast({name}, {tl}.float32)` at the top of the kernel or make it `tl.constexpr`")
            else:
                message = (
                    f"`{name}` is a Python-float kernel argument: launched from torch.compile/Inductor it "
                    f"arrives as fp64 and `{snippet}` is promoted to FP64; {why} (Liger-Kernel#1350: 56.1 us vs 108.5 us on H100); "
                    f"add `{name} = {tl}.cast({name}, {tl}.float32)` at the top of the kernel or make it `tl.constexpr`")
            yield ctx.finding(use, message, fixes)


def _loop_carried_target(ctx: PythonContext, kernel, use: ast.AST) -> str | None:
    """The name a loop carries that this use is folded into (`acc += x * eps`, `acc = acc * eps`
    inside a `for`/`while`, `acc` bound before the loop to a `tl.zeros`/`tl.full` tile): under
    torch.compile the fp64 scalar turns the carried value fp64 while it enters the loop as fp32,
    which Triton's code generator rejects."""
    stmt = next((a for a in ctx.ancestors(use) if isinstance(a, (ast.AugAssign, ast.Assign))), None)
    if stmt is None:
        return None
    target = stmt.target if isinstance(stmt, ast.AugAssign) else (stmt.targets[0] if len(stmt.targets) == 1 else None)
    if not isinstance(target, ast.Name):
        return None
    if isinstance(stmt, ast.Assign) and not any(isinstance(n, ast.Name) and n.id == target.id for n in ast.walk(stmt.value)):
        return None
    loop = next((a for a in ctx.ancestors(stmt) if isinstance(a, (ast.For, ast.While))), None)
    if loop is None:
        return None
    for node in ast.walk(kernel.node):
        if isinstance(node, ast.Assign) and node.lineno < loop.lineno and isinstance(node.value, ast.Call) \
                and any(isinstance(t, ast.Name) and t.id == target.id for t in node.targets):
            func = node.value.func
            if isinstance(func, ast.Attribute) and func.attr in ("zeros", "full", "zeros_like"):
                return target.id
    return None
