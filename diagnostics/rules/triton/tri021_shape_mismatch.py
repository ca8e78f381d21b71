"""TRI021 shape-mismatch: block shapes that Triton cannot combine, found before compiling.

Shapes are inferred statically (`_shapes.KernelShapes`): `tl.arange(0, C)` is [C], `x[:, None]`
and `x[None, :]` add a dimension, `tl.zeros`/`tl.full` take their shape argument, `tl.load`
takes the shape of its pointer block (broadcast with its mask), element-wise operators
broadcast, `tl.dot` gives [M, N], reductions drop their axis. Block sizes are the constexpr
defaults, literals, module `tl.constexpr` values, or the values of each autotune config.

Reported only when the error is certain:
* sizes: in the defaults and in *every* autotune config, two sizes differ (and neither is 1):
  `a + b` with [16] and [32], `tl.dot` with K 64 against 32, a store value or mask that does
  not fit the pointer block. Two different constexpr names whose values are unknown may be equal
  at run time, so they are never compared;
The rank verdicts (which never depend on values: a `tl.dot` operand that is not 2-D (or both
3-D), a store value or mask of higher rank than its pointer block, a reduction axis or a
permutation past the rank) are TRI064's, in the default set; this module's checker gives both
(`shape_findings`), TRI021 the size verdicts.
"""
from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Finding, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._types import dot_rank_problem, kernel_types
from tritonify.diagnostics.rules.triton._shapes import (
    REDUCTIONS,
    KernelShapes,
    Shape,
    broadcast,
    show,
)
from tritonify.diagnostics.rules.triton._static_sizes import Scenario
from tritonify.diagnostics.triton_ast import Kernel, keyword, tl_name

RULE = Rule(
    code="TRI021",
    name="shape-mismatch",
    summary="block sizes that cannot be combined (broadcast, tl.dot K, store value or mask, load mask)",
    severity=Severity.ERROR,
    fixable=False,
    # Opt-in for its cost, not its precision: against ground truth (benchmarks/realworld/precision.py: a
    # compile break is judged by running) it names the compiler's cause in 7 TritonBench-T programs and
    # gives no error in the 318 that ran, and the 8 round-1/2 corpus FPs were rank verdicts (now TRI064's)
    # read from a first binding, since made flow-sensitive (0 corpus findings now). But its size checks
    # add ~45% to the default set's lint time on the corpus (2026-12-02: 17.4 -> 25.7 s user), against
    # the speed target; make `_shapes` cheaper first, then move it into the default set.
    default=False,
    compile_break=True,
    opt_in_because=("against ground truth it names the cause in 7 programs with no alarm, but its size checks "
                    "add about 45% to the default set's corpus lint time, past the speed target"),
)

_ELEMENTWISE_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.BitAnd, ast.BitOr,
                    ast.BitXor, ast.LShift, ast.RShift)
_COMPARE_OPS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)
_ELEMENTWISE_CALLS = frozenset({"where", "maximum", "minimum", "fma", "clamp"})
_BROADCAST_HINT = "sizes must match or be 1 in each dimension (\"Cannot make_shape_compatible\")"

Check = Callable[[Scenario], "str | None"]


def _text(ctx: PythonContext, node: ast.AST, limit: int = 40) -> str:
    text = " ".join(ctx.segment(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _KernelChecker:
    """The shape checks of one kernel. `ranks` and `sizes` pick which verdicts it gives: rank
    verdicts (a store value of higher rank than its pointer block, a `tl.dot` operand that is not
    2-D, a reduction axis or permutation past the rank) never depend on block-size values, so
    TRI064 gives them in the default set; size verdicts stay TRI021's (opt-in)."""

    def __init__(self, ctx: PythonContext, kernel: Kernel, *, ranks: bool = True, sizes: bool = True):
        self.ctx = ctx
        self.kernel = kernel
        self.ranks = ranks
        self.sizes = sizes
        self.types = kernel_types(ctx).get(kernel.node)
        # one inference per kernel for TRI021 and TRI064 (both in the default set)
        self.shapes = ctx.per_file(("kernel-shapes", kernel.node), lambda: KernelShapes(ctx, kernel))

    def shape(self, node: ast.AST | None, sc: Scenario) -> Shape | None:
        return None if node is None else self.shapes.shape(node, sc)

    # ---- verdicts ------------------------------------------------------------------------------
    def in_every_scenario(self, check: Check) -> str | None:
        """The message when `check` fails in the defaults and in every autotune config."""
        scenarios = self.shapes.scenarios
        messages = []
        for sc in scenarios:
            message = check(sc)
            if message is None:
                return None
            messages.append(message)
        if not messages:
            return None
        if scenarios[0].config_index is not None and len(scenarios) > 1:
            return f"{messages[0]} (in each of the {len(scenarios)} autotune configs)"
        return messages[0]

    # ---- checks --------------------------------------------------------------------------------
    def _may_outrank(self, base: ast.expr, others: list[ast.expr]) -> bool:
        """False when the type inference knows the ranks and none of `others` has more dimensions
        than `base`: then the shape inference (the costly part) need not run for a rank verdict."""
        if self.types is None:
            return True
        rb = self.types.of(base).rank
        if rb is None:
            return True
        for expr in others:
            r = self.types.of(expr).rank
            if r is None or r > rb:
                return True
        return False

    def elementwise(self, node: ast.AST, operands: list[ast.expr], what: str) -> str | None:
        if not self.sizes:
            return None
        if self.types is not None and sum(self.types.of(o).block is not False for o in operands) < 2:
            return None  # at most one operand may be a block (the type inference says): nothing to compare

        def sizes(sc: Scenario) -> str | None:
            shapes = []
            for operand in operands:
                s = self.shape(operand, sc)
                if s is None:
                    return None
                if s:
                    shapes.append(s)
            if len(shapes) < 2 or broadcast(shapes) is not None:
                return None
            listed = " and ".join(show(s) for s in shapes)
            return f"{what} combines shapes {listed}, which do not broadcast: {_BROADCAST_HINT}"
        return self.in_every_scenario(sizes)

    def dot(self, call: ast.Call) -> str | None:
        kw = {k.arg: k.value for k in call.keywords if k.arg}
        a = call.args[0] if call.args else kw.get("input")
        b = call.args[1] if len(call.args) > 1 else kw.get("other")
        if a is None or b is None:
            return None
        types = self.types
        if types is not None and dot_rank_problem(types, call) is not None:
            return None   # a scalar or 1-D operand: TRI028 (in the default set) reports it
        if not self.sizes and types is not None:
            ra, rb = types.of(a).rank, types.of(b).rank
            if ra is not None and ra == rb and ra in (2, 3):
                return None  # the type inference's ranks fit: no rank verdict, no shape inference needed
        sa, sb = self.shape(a, self.shapes.rank_scenario), self.shape(b, self.shapes.rank_scenario)
        if sa is not None and sb is not None and not (len(sa) == len(sb) and len(sa) in (2, 3)):
            if not self.ranks:
                return None
            ta, tb = _text(self.ctx, a), _text(self.ctx, b)
            hint = (f"for a matrix-vector product use `tl.sum({ta} * {tb}[None, :], axis=1)`"
                    if (len(sa), len(sb)) == (2, 1) else "reshape the operands to 2-D blocks")
            return (f"`tl.dot` needs two 2-D blocks (or two 3-D, batched): `{ta}` has rank {len(sa)} "
                    f"and `{tb}` rank {len(sb)} (\"input and other must have equal ranks >= 2\"); {hint}")

        def k_dims(sc: Scenario) -> str | None:
            sa, sb = self.shape(a, sc), self.shape(b, sc)
            if sa is None or sb is None or len(sa) != len(sb) or len(sa) not in (2, 3) or sa[-1] == sb[-2]:
                return None
            return (f"`tl.dot` needs a:[M, K] and b:[K, N], but `{_text(self.ctx, a)}` is {show(sa)} and "
                    f"`{_text(self.ctx, b)}` is {show(sb)} (K {sa[-1]} vs {sb[-2]}: \"input and other must have "
                    "equal reduction dimensions\"); fix the block sizes or transpose with `tl.trans`")
        return self.in_every_scenario(k_dims) if self.sizes else None

    def store(self, call: ast.Call) -> str | None:
        kw = {k.arg: k.value for k in call.keywords if k.arg}
        ptr = call.args[0] if call.args else kw.get("pointer")
        value = call.args[1] if len(call.args) > 1 else kw.get("value")
        mask = call.args[2] if len(call.args) > 2 else kw.get("mask")
        if isinstance(mask, ast.Constant) and mask.value is None:
            mask = None
        parts = [(n, e) for n, e in (("value", value), ("mask", mask)) if e is not None]
        rank_sc = self.shapes.rank_scenario
        if self.sizes or self._may_outrank(ptr, [e for _, e in parts]):
            p = self.shape(ptr, rank_sc)
        else:
            p = None  # the type inference's ranks say no value or mask outranks the pointer block
        if p is not None and p:
            for label, expr in parts:
                s = self.shape(expr, rank_sc)
                if s is not None and len(s) > len(p):
                    if not self.ranks:
                        return None  # TRI064's verdict, not again as a size mismatch
                    return (f"`tl.store` {label} `{_text(self.ctx, expr)}` has rank {len(s)} but the pointer block "
                            f"has rank {len(p)}: the {label} must broadcast to the pointer's shape (\"Expected pointer "
                            "argument to have shape ...\")")
        if not self.sizes:
            return None

        def sizes(sc: Scenario) -> str | None:
            p = self.shape(ptr, sc)
            if not p:
                return None
            for label, expr in parts:
                s = self.shape(expr, sc)
                if s is None:
                    return None
                if s and broadcast([p, s]) != p:
                    return (f"`tl.store` {label} `{_text(self.ctx, expr)}` has shape {show(s)}, which does not fit "
                            f"the pointer block {show(p)}: {_BROADCAST_HINT}")
            return None
        return self.in_every_scenario(sizes)

    def load(self, call: ast.Call) -> str | None:
        ptr = call.args[0] if call.args else (keyword(call, "pointer").value if keyword(call, "pointer") else None)
        operands = [ptr, *(e for e in KernelShapes.load_operands(call) if e is not None)]
        if ptr is None or len(operands) < 2:
            return None
        return self.elementwise(call, operands, "`tl.load` (pointer, mask, other)")

    def reduction(self, call: ast.Call, name: str, method: bool) -> str | None:
        source = call.func.value if method else (call.args[0] if call.args else None)  # type: ignore[attr-defined]
        if source is None or not self.ranks:
            return None
        rank_sc = self.shapes.rank_scenario
        given, axis = self.shapes.axis(call, method, rank_sc)
        if not given or axis is None:
            return None
        known = self.types.of(source).rank if self.types is not None else None
        if known is not None and -known <= axis < known:
            return None  # the type inference's rank admits the axis: no shape inference needed
        inner = self.shape(source, rank_sc)
        if inner is None or not inner or not given or axis is None or -len(inner) <= axis < len(inner):
            return None
        return (f"`{name}` over axis {axis} of `{_text(self.ctx, source)}`, which has rank {len(inner)}: the axis "
                f"must be in [-{len(inner)}, {len(inner) - 1}] (\"invalid axis {axis}\")")

    def permute(self, call: ast.Call, name: str, method: bool) -> str | None:
        """`tl.permute(x, dims)` / `tl.trans(x, *dims)` / `x.trans(*dims)` whose dims do not
        number the rank of `x` ("permute dims must have the same length as input shape")."""
        if not self.ranks:
            return None
        source = call.func.value if method else (call.args[0] if call.args else None)  # type: ignore[attr-defined]
        dims = list(call.args if method else call.args[1:])
        if keyword(call, "dims") is not None:
            dims = [keyword(call, "dims").value]  # type: ignore[union-attr]
        if source is None or not dims or any(isinstance(d, ast.Starred) for d in dims):
            return None
        if len(dims) == 1 and isinstance(dims[0], (ast.Tuple, ast.List)):
            dims = list(dims[0].elts)
            if any(isinstance(d, ast.Starred) for d in dims):
                return None
        elif len(dims) == 1 and not isinstance(dims[0], ast.Constant):
            return None  # one name: maybe a tuple of dims
        inner = self.shape(source, self.shapes.rank_scenario)
        if inner is None or not inner or len(dims) == len(inner):
            return None
        return (f"`{name}` of `{_text(self.ctx, source)}` (rank {len(inner)}) with {len(dims)} dim"
                f"{'s' if len(dims) != 1 else ''}: the permutation must name every axis once (\"permute dims must "
                f"have the same length as input shape\"); for a 2-D transpose write `tl.trans({_text(self.ctx, source)})`")

    # ---- walk ----------------------------------------------------------------------------------
    def findings(self) -> Iterator[Finding]:
        for node in self.kernel.nodes:
            kind = type(node)
            message = None
            if kind is ast.BinOp and isinstance(node.op, _ELEMENTWISE_OPS):
                message = self.elementwise(node, [node.left, node.right], f"`{_text(self.ctx, node)}`")
            elif kind is ast.Compare and len(node.ops) == 1 and isinstance(node.ops[0], _COMPARE_OPS):
                message = self.elementwise(node, [node.left, node.comparators[0]], f"`{_text(self.ctx, node)}`")
            elif kind is ast.Call:
                message = self._call(node)
            if message is not None:
                yield self.ctx.finding(node, message)

    def _call(self, call: ast.Call) -> str | None:
        name = tl_name(self.ctx.imports, call.func)
        if name == "dot":
            return self.dot(call)
        if name == "store":
            return self.store(call)
        if name == "load":
            return self.load(call)
        if name in _ELEMENTWISE_CALLS:
            return self.elementwise(call, list(call.args), f"`tl.{name}`")
        if name in REDUCTIONS:
            return self.reduction(call, f"tl.{name}", method=False)
        if name in ("trans", "permute"):
            return self.permute(call, f"tl.{name}", method=False)
        if name is None and isinstance(call.func, ast.Attribute) and call.func.attr in ("trans", "permute"):
            return self.permute(call, f".{call.func.attr}", method=True)
        if name is None and isinstance(call.func, ast.Attribute) and call.func.attr in REDUCTIONS:
            return self.reduction(call, f".{call.func.attr}", method=True)
        return None


# Calls (by attribute or bare name) that create or change a shape other than `tl.arange`.
_SHAPE_MAKERS = frozenset({
    "zeros", "full", "empty", "zeros_like", "full_like", "reshape", "view", "broadcast_to", "broadcast",
    "expand_dims", "trans", "permute", "dot", "dot_scaled", "make_block_ptr", "make_tensor_descriptor", "advance",
    "join", "split", "interleave", "cat", "gather", "histogram", "flip", "sort", *REDUCTIONS,
})


def _may_mismatch(ctx: PythonContext, kernel: Kernel) -> bool:
    """False when every block of the kernel comes from one and the same `tl.arange` and nothing
    changes shapes (no indexing, no reshape/dot/reduction): then all tensors are [C] or scalars and
    cannot mismatch. Most element-wise kernels look like that; skipping them keeps the rule cheap."""
    aranges: set[str] = set()
    for node in kernel.nodes:
        kind = type(node)
        if kind is ast.Subscript:
            return True
        if kind is ast.Attribute and node.attr == "T":
            return True
        if kind is ast.Call:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            if name == "arange":
                aranges.add(ctx.segment(node))
                if len(aranges) > 1:
                    return True
            elif name in _SHAPE_MAKERS:
                return True
    return False


def shape_findings(ctx: PythonContext, kernel: Kernel, *, ranks: bool, sizes: bool) -> Iterator[Finding]:
    """The findings of TRI021 (`sizes`) or TRI064 (`ranks`) in one kernel."""
    if _may_mismatch(ctx, kernel):
        yield from _KernelChecker(ctx, kernel, ranks=ranks, sizes=sizes).findings()


def check(ctx: PythonContext) -> Iterator[Finding]:
    # The rank verdicts are TRI064's (default set); this rule gives those that depend on sizes.
    for kernel in ctx.kernels:
        yield from shape_findings(ctx, kernel, ranks=False, sizes=True)
