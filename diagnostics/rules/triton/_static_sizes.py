"""Block sizes and tensor shapes that are known before a kernel runs.

A Triton block size is a compile-time constant, and a linter can often see its value: a literal
(`tl.arange(0, 48)`), a `tl.constexpr` default (`BLOCK: tl.constexpr = 48`), a module constant
(`BLOCK = tl.constexpr(48)`), a local constant (`HALF: tl.constexpr = BLOCK // 2`), or the
values of an autotune `triton.Config`. Each autotune config is a separate *scenario*: the rule
reports the config that breaks, instead of mixing values of different configs.

A value that comes from a launch argument or a heuristic is unknown, and rules stay quiet on it;
the shape checks (`_shapes.KernelShapes`, TRI021/TRI064) also take a constexpr that every launch in
the file passes as one integer (`launch_values`).

Shared by TRI004 and TRI005 (and TRI007's exact-tile test); the leading underscore keeps the
registry from loading it as a rule.
"""
from __future__ import annotations

import ast
import itertools
import operator
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.rules.triton._launch_sites import (
    _host_bindings,
    kernel_aliases,
    launches,
    module_calls,
)
from tritonify.diagnostics.rules.triton._memory_flow import KernelFlow, kernel_flow
from tritonify.diagnostics.rules.triton._recursion_memo import RecursionMemo
from tritonify.diagnostics.triton_ast import (
    Kernel,
    call_path,
    keyword,
    tl_name,
    walk_nodes,
)

MAX_NUMEL = 2 ** 20  # TRITON_MAX_TENSOR_NUMEL in triton 3.x
_DEPTH = 24

_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitOr: operator.or_,
    ast.BitAnd: operator.and_,
}

# Element-wise tl functions: the result has the broadcast shape of the tensor arguments.
_ELEMENTWISE = {
    "exp", "exp2", "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "abs", "sigmoid", "where", "maximum",
    "minimum", "fma", "cos", "sin", "erf", "floor", "ceil", "clamp", "fdiv", "div_rn", "cast",
    "multiple_of", "max_contiguous", "max_constancy", "softmax", "umulhi", "math.exp", "math.log",
}


def is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def next_power_of_two(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


@dataclass(frozen=True)
class Scenario:
    """One assignment of compile-time values: the defaults, or one autotune config on top."""

    env: Mapping[str, int]
    config_index: int | None = None            # 1-based position in the autotune list
    config: Mapping[str, int] = field(default_factory=dict)

    def describe(self, names: set[str]) -> str:
        """'' for the defaults, else 'autotune config 3 (BLOCK_K=8)' naming the values used."""
        if self.config_index is None:
            return ""
        used = ", ".join(f"{k}={v}" for k, v in self.config.items() if k in names) or "its values"
        return f"autotune config {self.config_index} ({used})"


def module_constants(ctx: PythonContext) -> dict[str, int]:
    """`NAME = 64`, `NAME = tl.constexpr(64)`, `NAME: tl.constexpr = 64` at module level,
    when the name is assigned once, and such literals imported from the workspace's other
    modules (computed once per file; callers copy before changing it)."""
    return ctx.per_file(("module-constants",), lambda: _module_constants(ctx))


def _module_constants(ctx: PythonContext) -> dict[str, int]:
    values: dict[str, list[ast.expr]] = {}
    for stmt in ctx.tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            values.setdefault(stmt.targets[0].id, []).append(stmt.value)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            values.setdefault(stmt.target.id, []).append(stmt.value)
    out: dict[str, int] = {}
    for name, exprs in values.items():
        if len(exprs) == 1:
            v = _fold(ctx, exprs[0], out, lambda n: None, 0)
            if v is not None:
                out[name] = v
    # literals imported from another module of the workspace (`from .config import BLOCK`)
    for name, expr in ctx.imports.imported_constants().items():
        if name not in values:
            v = _fold(ctx, expr, out, lambda n: None, 0)
            if v is not None:
                out[name] = v
    return out


def _fold(ctx: PythonContext, expr: ast.AST, env: Mapping[str, int], local, depth: int) -> int | None:
    """Integer value of an expression, or None. `local(name_node)` gives a kernel-local value."""
    if depth > _DEPTH:
        return None
    if isinstance(expr, ast.Constant):
        v = expr.value
        return v if isinstance(v, int) and not isinstance(v, bool) else None
    if isinstance(expr, ast.Name):
        v = local(expr)
        if v is not None:
            return v
        return env.get(expr.id)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        v = _fold(ctx, expr.operand, env, local, depth + 1)
        return None if v is None else (-v if isinstance(expr.op, ast.USub) else v)
    if isinstance(expr, ast.BinOp):
        a = _fold(ctx, expr.left, env, local, depth + 1)
        b = _fold(ctx, expr.right, env, local, depth + 1)
        if a is None or b is None:
            return None
        if isinstance(expr.op, ast.Pow):
            return a ** b if 0 <= b <= 64 else None
        fn = _BINOPS.get(type(expr.op))
        if fn is None or (isinstance(expr.op, (ast.FloorDiv, ast.Mod)) and b == 0):
            return None
        if isinstance(expr.op, (ast.LShift, ast.RShift)) and not 0 <= b <= 64:
            return None
        return fn(a, b)
    if isinstance(expr, ast.Call):
        path = call_path(ctx.imports, expr) or ""
        args = [_fold(ctx, a, env, local, depth + 1) for a in expr.args]
        if any(a is None for a in args) or expr.keywords:
            return None
        last = path.rsplit(".", 1)[-1]
        if path in ("triton.language.constexpr", "constexpr") and len(args) == 1:
            return args[0]
        if last == "next_power_of_2" and len(args) == 1:
            return next_power_of_two(args[0])
        if last == "cdiv" and len(args) == 2 and args[1]:
            return -(-args[0] // args[1])
        if path in ("min", "max") and args:
            return (min if path == "min" else max)(args)
    return None


def launch_values(ctx: PythonContext, kernel: Kernel, names: set[str]) -> dict[str, int]:
    """Values of `names` (constexpr parameters) that every launch of the kernel in this file passes
    as one and the same integer: a literal, a module constant, or a name of the launching function
    bound once to one (`BLOCK = 64` then `k[grid](..., BLOCK=BLOCK)`). Nothing when the kernel is
    also called without a launch (a jit helper of another kernel) or launched with `*args`/`**kw`."""
    if not names:
        return {}
    calls = module_calls(ctx).by_name
    for alias in kernel_aliases(ctx, kernel):
        for node in calls.get(alias, []):
            if not isinstance(node.func, ast.Subscript) or any(k.arg is None for k in node.keywords):
                return {}
    found = launches(ctx, kernel)
    if not found:
        return {}
    consts = module_constants(ctx)
    out: dict[str, int] = {}
    for name in names:
        values = set()
        for launch in found:
            expr = launch.args.get(name)
            if expr is None:
                values.add(None)
                break

            def host_local(node: ast.Name, launch=launch) -> int | None:
                bound = _host_bindings(launch.host, ctx, node.id)
                if bound is None or len(bound) != 1 or launch.host is None:
                    return None
                return _fold(ctx, bound[0], consts, lambda n: None, 1)
            values.add(_fold(ctx, expr, consts, host_local, 0))
        if len(values) == 1 and None not in values:
            out[name] = values.pop()
    return out


class KernelSizes:
    """Compile-time values and shapes inside one kernel."""

    def __init__(self, ctx: PythonContext, kernel: Kernel, flow: KernelFlow | None = None):
        self.ctx = ctx
        self.kernel = kernel
        self.flow = flow or kernel_flow(ctx, kernel)
        self._shapes: RecursionMemo[tuple[int, ...] | None] = RecursionMemo(_DEPTH)
        self._values: dict[tuple[int, int], tuple[ast.AST, int | None]] = {}
        self._self_reads: dict[int, bool] = {}
        self._env_ids: dict[int, tuple[Scenario, int]] = {}
        self._env_firsts: dict[tuple, Scenario] = {}

    # ---- where values come from ----------------------------------------------------------------
    @cached_property
    def _passed_params(self) -> set[str]:
        """Parameters some call in this file passes explicitly: their defaults are not the value."""
        calls = module_calls(self.ctx).by_name
        passed: set[str] = set()
        params = self.kernel.param_names
        for name in kernel_aliases(self.ctx, self.kernel):
            for node in calls.get(name, []):
                if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
                    return set(params)  # *args / **kwargs: anything may be passed
                passed |= set(params[: len(node.args)])
                passed |= {k.arg for k in node.keywords if k.arg}
        return passed

    @cached_property
    def base_env(self) -> dict[str, int]:
        env = dict(module_constants(self.ctx))
        for p in self.kernel.params:
            env.pop(p.name, None)  # a parameter shadows a module constant
            if p.constexpr and p.default is not None and p.name not in self._passed_params:
                v = _fold(self.ctx, p.default, env, lambda n: None, 0)
                if v is not None:
                    env[p.name] = v
        return env

    @cached_property
    def scenarios(self) -> list[Scenario]:
        configs = self._autotune_configs()
        base = self.base_env
        if not configs:
            return [Scenario(base)]
        out = []
        for i, cfg in enumerate(configs, 1):
            env = dict(base)
            for name in self._autotuned_names:
                env.pop(name, None)  # an autotuned name without a known value stays unknown
            env.update(cfg)
            out.append(Scenario(env, i, cfg))
        return out

    @cached_property
    def _autotuned_names(self) -> set[str]:
        names: set[str] = set()
        for call in (self.kernel.autotune, self.kernel.heuristics):
            if call is None:
                continue
            for node in walk_nodes(call):
                if isinstance(node, ast.Dict):
                    names |= {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
        return names

    def _autotune_configs(self) -> list[dict[str, int]]:
        """Values of each `triton.Config` when the list can be read; [] when it cannot, or when
        `prune_configs_by` may drop configs at run time."""
        call = self.kernel.autotune
        if call is None or keyword(call, "prune_configs_by") is not None:
            return []
        configs = keyword(call, "configs")
        expr = configs.value if configs is not None else (call.args[0] if call.args else None)
        expr = self._module_value(expr)
        if isinstance(expr, (ast.List, ast.Tuple)):
            out = []
            for elt in expr.elts:
                cfg = self._config_values(elt, {})
                if cfg is None:
                    return []
                out.append(cfg)
            return out
        if isinstance(expr, ast.ListComp):
            return self._comprehension_configs(expr)
        return []

    def _module_value(self, expr: ast.expr | None) -> ast.expr | None:
        if isinstance(expr, ast.Name):
            found = [s.value for s in self.ctx.tree.body if isinstance(s, ast.Assign)
                     and any(isinstance(t, ast.Name) and t.id == expr.id for t in s.targets)]
            return found[0] if len(found) == 1 else None
        return expr

    def _comprehension_configs(self, comp: ast.ListComp) -> list[dict[str, int]]:
        loops: list[tuple[str, list[int]]] = []
        for gen in comp.generators:
            if gen.ifs or not isinstance(gen.target, ast.Name):
                return []
            it = self._module_value(gen.iter)
            if not isinstance(it, (ast.List, ast.Tuple)):
                return []
            values = [_fold(self.ctx, e, self.base_env, lambda n: None, 0) for e in it.elts]
            if any(v is None for v in values):
                return []
            loops.append((gen.target.id, values))
        out = []
        for combo in itertools.product(*(vals for _, vals in loops)):
            env = {name: v for (name, _), v in zip(loops, combo)}
            cfg = self._config_values(comp.elt, env)
            if cfg is None:
                return []
            out.append(cfg)
        return out

    def _config_values(self, node: ast.expr, loop_env: dict[str, int]) -> dict[str, int] | None:
        """{name: value} of `triton.Config({...}, ...)`; values that are not integers are left out."""
        if not isinstance(node, ast.Call) or not node.args and keyword(node, "kwargs") is None:
            return None
        first = keyword(node, "kwargs")
        d = first.value if first is not None else node.args[0]
        if not isinstance(d, ast.Dict):
            return None
        env = {**self.base_env, **loop_env}
        out = {}
        for k, v in zip(d.keys, d.values):
            if isinstance(k, ast.Constant) and isinstance(k.value, str):
                value = _fold(self.ctx, v, env, lambda n: None, 0)
                if value is not None:
                    out[k.value] = value
        return out

    # ---- integer values ------------------------------------------------------------------------
    def value(self, expr: ast.AST, scenario: Scenario) -> int | None:
        # a pure function of (expr, scenario): the recursion below starts from depth 0 every time
        key = (id(expr), self._env_id(scenario))
        hit = self._values.get(key)
        if hit is not None and hit[0] is expr:
            return hit[1]
        v = self._value(expr, scenario, 0)
        self._values[key] = (expr, v)
        return v

    def _value(self, expr: ast.AST, scenario: Scenario, depth: int, seen: frozenset = frozenset()) -> int | None:
        def local(node: ast.Name) -> int | None:
            if not self.flow.is_local(node.id) or depth > _DEPTH:
                return None
            return self._local_value(node, scenario, depth, seen)

        if isinstance(expr, ast.Name) and self.flow.is_local(expr.id):
            return local(expr)
        return _fold(self.ctx, expr, scenario.env, local, depth)

    def _local_value(self, node: ast.Name, sc: Scenario, depth: int, seen: frozenset) -> int | None:
        """The value of a local at this use: every binding that reaches it must give the same one
        (`BLOCK = 64` on both sides of an `if`), the entry value standing for a parameter's."""
        reach = self.flow.reach(node)
        if reach is None:
            bound = self.flow.single_value(node.id)
            return None if bound is None else self._value(bound, sc, depth + 1, seen)
        values: set[int | None] = set()
        if reach.entry and (self.kernel.param(node.id) or node.id in sc.env):
            values.add(sc.env.get(node.id))
        for b in reach.bindings:
            if b in seen or b.augmented or b.loop_target or b.value is None:
                return None
            values.add(self._value(b.value, sc, depth + 1, seen | {b}))
        return values.pop() if len(values) == 1 else None

    def names(self, expr: ast.AST) -> set[str]:
        """Names (transitively through kernel locals) an expression's value depends on."""
        return self.flow.names_in(expr)

    # ---- shapes ------------------------------------------------------------------------------------
    def shape(self, expr: ast.AST, scenario: Scenario) -> tuple[int, ...] | None:
        """Static shape of a tensor expression under a scenario, or None when unknown."""
        return self._shape(expr, scenario, 0, frozenset())

    def _dims(self, node: ast.AST, scenario: Scenario) -> tuple[int, ...] | None:
        if isinstance(node, (ast.Tuple, ast.List)):
            dims = [self.value(e, scenario) for e in node.elts]
            return None if any(d is None for d in dims) else tuple(dims)  # type: ignore[arg-type]
        d = self.value(node, scenario)
        return None if d is None else (d,)

    def _shape(self, expr: ast.AST, sc: Scenario, depth: int, seen: frozenset) -> tuple[int, ...] | None:
        """`_compute_shape`, memoised per node (a local's shape depends on where it is read: the
        bindings that reach that use) and scenario, reused where the depth gives the same outcome
        (`_recursion_memo`), so a long chain of locals is expanded once, not once per path. `seen`
        only cuts loop-carried cycles, and a loop-carried value keeps one shape in valid Triton,
        so the cut does not change the answer."""
        key = (id(expr), self._env_id(sc))
        return self._shapes.get(key, depth, lambda: self._compute_shape(expr, sc, depth, seen))

    def _env_id(self, sc: Scenario) -> int:
        """One id for every scenario with the same values (autotune configs that differ only in
        num_warps / num_stages): shapes and values read nothing of a scenario but its values."""
        found = self._env_ids.get(id(sc))
        if found is None or found[0] is not sc:
            sig = tuple(sorted(sc.env.items()))
            first = self._env_firsts.setdefault(sig, sc)
            found = self._env_ids[id(sc)] = (sc, id(first))
        return found[1]

    def _compute_shape(self, expr: ast.AST, sc: Scenario, depth: int, seen: frozenset) -> tuple[int, ...] | None:
        if self._shapes.too_deep(depth):
            return None
        rec = lambda e: self._shape(e, sc, depth + 1, seen)
        if isinstance(expr, ast.Constant):
            return ()
        if isinstance(expr, ast.Name):
            if not self.flow.is_local(expr.id):
                return self._entry_shape(expr.id, sc)
            return self._local_shape(expr, sc, depth, seen)
        if isinstance(expr, (ast.BinOp, ast.Compare, ast.BoolOp)):
            parts = ([expr.left, expr.right] if isinstance(expr, ast.BinOp)
                     else [expr.left, *expr.comparators] if isinstance(expr, ast.Compare) else expr.values)
            return _broadcast([rec(p) for p in parts])
        if isinstance(expr, ast.UnaryOp):
            return rec(expr.operand)
        if isinstance(expr, ast.IfExp):
            a, b = rec(expr.body), rec(expr.orelse)
            return a if a == b else None
        if isinstance(expr, ast.Subscript):
            return self._subscript_shape(rec(expr.value), expr.slice)
        if isinstance(expr, ast.Attribute) and expr.attr == "T":
            inner = rec(expr.value)
            return None if inner is None else tuple(reversed(inner))
        if isinstance(expr, ast.Call):
            return self._call_shape(expr, sc, rec)
        return None

    def _entry_shape(self, name: str, sc: Scenario) -> tuple[int, ...] | None:
        """Shape of a name's value on entry: a kernel parameter or a known constant is a scalar."""
        return () if self.kernel.param(name) or name in sc.env else None

    def _local_shape(self, name: ast.Name, sc: Scenario, depth: int, seen: frozenset) -> tuple[int, ...] | None:
        """The shape every binding that reaches this use agrees on (`b` after
        `b = tl.reshape(b, ...)` is the reshape's shape, not the first binding's). A binding already
        being followed (`acc = acc * s` in a loop) is skipped: a loop-carried value keeps its shape."""
        if self._shapes.too_deep(depth):
            return None
        reach = self.flow.reach(name)
        if reach is None:  # a node the walk did not see: all bindings, flow-insensitive
            bindings, entry = tuple(self.flow.bindings[name.id]), False
        else:
            bindings, entry = reach.bindings, reach.entry
        shapes = set()
        if entry and (self.kernel.param(name.id) or name.id in sc.env):  # else unbound there: cannot be read
            shapes.add(self._entry_shape(name.id, sc))
        for b in bindings:
            if b in seen:
                continue
            if b.loop_target:
                shapes.add(())
            elif b.value is None:
                return None
            elif b.augmented:
                # `acc += x` keeps acc's shape; `ptr += rows[:, None] * N` widens a scalar pointer
                target = b.stmt.target  # type: ignore[attr-defined]
                before = self._shape(target, sc, depth + 1, seen | {b})
                added = self._shape(b.value, sc, depth + 1, seen | {b})
                shapes.add(None if before is None or added is None else _broadcast([before, added]))
            elif reach is None and self._reads_itself(b):
                continue  # flow-insensitive fallback: a rebinding from the name itself keeps its shape
            else:
                shapes.add(self._shape(b.value, sc, depth + 1, seen | {b}))
        return shapes.pop() if len(shapes) == 1 else None

    def _reads_itself(self, binding) -> bool:
        """Whether a binding's value reads the name it binds (`acc = acc * s`)."""
        found = self._self_reads.get(id(binding))
        if found is None:
            found = self._self_reads[id(binding)] = _reads(binding.value, binding.name)
        return found

    def _call_shape(self, call: ast.Call, sc: Scenario, rec) -> tuple[int, ...] | None:
        name = tl_name(self.ctx.imports, call.func)
        args = call.args
        kw = {k.arg: k.value for k in call.keywords if k.arg}
        if name is None and isinstance(call.func, ast.Attribute):
            method = call.func.attr
            if method in ("to", "cast"):
                return rec(call.func.value)
            if method == "load":
                return self._descriptor_block(call.func.value, sc)  # desc.load([m, k])
            if method in ("reshape", "view") and args:
                return self._dims(args[0] if len(args) == 1 else ast.Tuple(elts=list(args)), sc)
            if method == "trans" and not args:
                inner = rec(call.func.value)
                return None if inner is None or len(inner) != 2 else (inner[1], inner[0])
            return None
        if name is None:
            return None
        if name == "arange" and len(args) == 2:
            a, b = self.value(args[0], sc), self.value(args[1], sc)
            return None if a is None or b is None else (b - a,)
        if name in ("zeros", "full", "empty"):
            shape = args[0] if args else kw.get("shape")
            return None if shape is None else self._dims(shape, sc)
        if name in ("zeros_like", "full_like"):
            return rec(args[0]) if args else None
        if name == "make_block_ptr":
            shape = kw.get("block_shape", args[4] if len(args) > 4 else None)
            return None if shape is None else self._dims(shape, sc)
        if name == "advance":
            return rec(args[0]) if args else None
        if name == "load_tensor_descriptor" and args:
            return self._descriptor_block(args[0], sc)
        if name == "load":
            ptr = args[0] if args else kw.get("pointer")
            return None if ptr is None else rec(ptr)
        if name in ("reshape", "view") and len(args) >= 2:
            return self._dims(args[1] if len(args) == 2 else ast.Tuple(elts=list(args[1:])), sc)
        if name == "broadcast_to" and len(args) >= 2:
            return self._dims(args[1], sc)
        if name == "trans" and len(args) == 1:
            inner = rec(args[0])
            return None if inner is None or len(inner) != 2 else (inner[1], inner[0])
        if name == "expand_dims" and len(args) == 2:
            inner, axis = rec(args[0]), self.value(args[1], sc)
            if inner is None or axis is None:
                return None
            axis = axis if axis >= 0 else len(inner) + 1 + axis
            return inner[:axis] + (1,) + inner[axis:]
        if name == "dot" and len(args) >= 2:
            a, b = rec(args[0]), rec(args[1])
            if a is None or b is None or len(a) < 2 or len(b) < 2:
                return None
            return a[:-1] + (b[-1],)
        if name in ("program_id", "num_programs"):
            return ()
        if name in _ELEMENTWISE and args:
            return _broadcast([rec(a) for a in args])
        return None

    def _descriptor_block(self, desc: ast.AST, sc: Scenario) -> tuple[int, ...] | None:
        """Block shape of a tensor descriptor: `tl.make_tensor_descriptor(..., block_shape=[BM, BK])`,
        bound to a local (or passed in: then unknown)."""
        if isinstance(desc, ast.Name):
            value = self.flow.value_at(desc)
            if value is None:
                return None
            desc = value
        if not (isinstance(desc, ast.Call) and tl_name(self.ctx.imports, desc.func) == "make_tensor_descriptor"):
            return None
        shape = keyword(desc, "block_shape")
        node = shape.value if shape is not None else (desc.args[3] if len(desc.args) > 3 else None)
        return None if node is None else self._dims(node, sc)

    @staticmethod
    def _subscript_shape(inner: tuple[int, ...] | None, index: ast.AST) -> tuple[int, ...] | None:
        if inner is None:
            return None
        items = index.elts if isinstance(index, ast.Tuple) else [index]
        out, pos = [], 0
        for item in items:
            if isinstance(item, ast.Constant) and item.value is None:
                out.append(1)
            elif isinstance(item, ast.Slice) and item.lower is None and item.upper is None and item.step is None:
                if pos >= len(inner):
                    return None
                out.append(inner[pos])
                pos += 1
            else:
                return None  # integer indexing and ellipsis are rare in kernels
        return tuple(out) + inner[pos:]


def kernel_sizes(ctx: PythonContext, kernel: Kernel) -> KernelSizes:
    """The one `KernelSizes` of `kernel` in this file, shared by the rules that read plain sizes
    (TRI004, TRI005): its values and shapes are pure functions of (expression, scenario), so one
    rule's answers are the other's. A rule with scenarios of its own (TRI014's every-name-is-2
    values, which `_env_id` would not tell from the defaults) or with other shape semantics
    (`KernelShapes`) keeps its own instance."""
    return ctx.per_file(("kernel-sizes", kernel.node), lambda: KernelSizes(ctx, kernel, kernel_flow(ctx, kernel)))


def _reads(expr: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in walk_nodes(expr))


def _broadcast(shapes: list[tuple[int, ...] | None]) -> tuple[int, ...] | None:
    if any(s is None for s in shapes):
        return None
    rank = max((len(s) for s in shapes), default=0)  # type: ignore[arg-type]
    out = []
    for i in range(rank):
        dims = {s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0}  # type: ignore[index]
        dims.discard(1)
        if len(dims) > 1:
            return None
        out.append(dims.pop() if dims else 1)
    return tuple(out)
