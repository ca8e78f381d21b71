"""Block shapes of a kernel's tensors, for rules that check how tensors combine (TRI021).

Built on `KernelSizes` (`_static_sizes.py`), which knows the values of block sizes per
*scenario* (the constexpr defaults, or each autotune config) and the shapes of `tl.arange`,
`x[:, None]`, `tl.zeros`/`tl.full`, `tl.load`, `tl.dot`, `tl.reshape`, `tl.trans` and element-wise
results. This module adds what a shape checker needs on top:

* a *rank scenario*: every constexpr whose value is unknown stands in as 64, so the rank of a
  tensor is known even when its sizes are not (ranks never depend on the values);
* parameters of jit functions that are not launched kernels (helpers, device functions) have an
  unknown shape: a helper's parameter may be a block;
* `tl.load` with a mask or `other` takes their broadcast shape (the mask may widen the block);
* reductions (`tl.sum(x, axis)` ...) drop (or keep, with `keep_dims=True`) their axis;
* memoised shapes (`_recursion_memo`), so checking every operator of a long file stays linear.

The leading underscore keeps the registry from loading it as a rule.
"""
from __future__ import annotations

import ast
from functools import cached_property

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.rules.triton._memory_flow import KernelFlow
from tritonify.diagnostics.rules.triton._static_sizes import KernelSizes, Scenario, launch_values
from tritonify.diagnostics.triton_ast import Kernel, keyword, tl_name

Shape = tuple[int, ...]
REDUCTIONS = frozenset({"sum", "max", "min", "argmax", "argmin", "xor_sum", "reduce", "cumsum", "cumprod"})
_SCANS = frozenset({"cumsum", "cumprod"})  # keep the input's shape
_STAND_IN = 64


def broadcast(shapes: list[Shape]) -> Shape | None:
    """numpy-style broadcast (right-aligned, size 1 stretches) as Triton's `broadcast_impl_value`
    does it; None when two sizes differ and neither is 1."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(rank):
        dims = {s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0}
        dims.discard(1)
        if len(dims) > 1:
            return None
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def show(shape: Shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def _is_launched_kernel(kernel: Kernel) -> bool:
    """A kernel launched from the host: its parameters are pointers and scalars, never blocks."""
    if kernel.is_helper:
        return False
    if kernel.returns_value:
        return False  # a device function returns a value to its jit caller
    return any(isinstance(c.func, ast.Attribute) and c.func.attr == "program_id" for c in kernel.call_nodes)


class KernelShapes(KernelSizes):
    """Shapes per scenario, plus a rank-only scenario."""

    def __init__(self, ctx: PythonContext, kernel: Kernel, flow: KernelFlow | None = None):
        super().__init__(ctx, kernel, flow)
        self.params_are_scalars = _is_launched_kernel(kernel)

    @cached_property
    def base_env(self) -> dict[str, int]:
        """The constexpr values `KernelSizes` knows, and those every launch in the file passes as
        one integer (`_static_sizes.launch_values`): a launch fails with the values it passes."""
        env = dict(super().base_env)
        missing = {n for n in self.kernel.constexpr_names if n not in env} - self._autotuned_names
        env.update(launch_values(self.ctx, self.kernel, missing))
        return env

    @cached_property
    def rank_scenario(self) -> Scenario:
        env = dict(self.base_env)
        for name in self.kernel.constexpr_names:
            env.setdefault(name, _STAND_IN)
        return Scenario(env)

    def _entry_shape(self, name: str, sc: Scenario) -> Shape | None:
        if (not self.params_are_scalars and self.kernel.param(name) is not None
                and name not in self.kernel.constexpr_names):
            return None  # a helper's parameter may be a block
        return super()._entry_shape(name, sc)

    def _call_shape(self, call: ast.Call, sc: Scenario, rec) -> Shape | None:
        name = tl_name(self.ctx.imports, call.func)
        if name == "load":
            ptr = call.args[0] if call.args else (keyword(call, "pointer").value if keyword(call, "pointer") else None)
            parts = [ptr] + [e for e in self.load_operands(call) if e is not None]
            shapes = [rec(p) for p in parts if p is not None]
            if not shapes or any(s is None for s in shapes):
                return None
            return broadcast(shapes)  # type: ignore[arg-type]
        if name == "dot":
            shape = super()._call_shape(call, sc, rec)
            a = rec(call.args[0]) if len(call.args) > 1 else None
            b = rec(call.args[1]) if len(call.args) > 1 else None
            if a is None or b is None or len(a) != len(b) or len(a) not in (2, 3) or a[-1] != b[-2]:
                return None  # a wrong dot is reported once, not again through every use of its result
            return shape
        method = call.func.attr if name is None and isinstance(call.func, ast.Attribute) else None
        if name in REDUCTIONS or method in REDUCTIONS:
            return self._reduction_shape(call, sc, rec, name or method, method is not None)
        return super()._call_shape(call, sc, rec)

    @staticmethod
    def load_operands(call: ast.Call) -> list[ast.expr | None]:
        """`mask` and `other` of a `tl.load` (positional 1 and 2, or keywords)."""
        out = []
        for index, kw_name in ((1, "mask"), (2, "other")):
            kw = keyword(call, kw_name)
            value = kw.value if kw is not None else (call.args[index] if len(call.args) > index else None)
            out.append(None if isinstance(value, ast.Constant) and value.value is None else value)
        return out

    def axis(self, call: ast.Call, method: bool, sc: Scenario) -> tuple[bool, int | None]:
        """(whether an axis is given, its value when known)."""
        kw = keyword(call, "axis")
        position = 0 if method else 1   # `x.sum(axis)` / `tl.sum(x, axis)`; `x.sum()` gives none
        expr = kw.value if kw is not None else (call.args[position] if len(call.args) > position else None)
        if expr is None or isinstance(expr, ast.Constant) and expr.value is None:
            return False, None
        return True, self.value(expr, sc)

    def _reduction_shape(self, call: ast.Call, sc: Scenario, rec, name: str, method: bool) -> Shape | None:
        if keyword(call, "return_indices") is not None:
            return None  # a tuple
        source = call.func.value if method else (call.args[0] if call.args else None)  # type: ignore[attr-defined]
        inner = rec(source) if source is not None else None
        if inner is None:
            return None
        if name in _SCANS:
            return inner
        given, axis = self.axis(call, method, sc)
        if not given:
            return ()
        if axis is None or not -len(inner) <= axis < len(inner):
            return None
        axis %= len(inner)
        keep = keyword(call, "keep_dims")
        if keep is not None and isinstance(keep.value, ast.Constant) and keep.value.value is True:
            return inner[:axis] + (1,) + inner[axis + 1:]
        return inner[:axis] + inner[axis + 1:]
