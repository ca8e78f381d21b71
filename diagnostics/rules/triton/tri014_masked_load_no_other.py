"""TRI014 masked-load-no-other: a masked `tl.load` without `other=` whose masked-off lanes change a result.

Triton's spec leaves masked-off lanes of `tl.load(p, mask=m)` undefined; every GPU backend in use
(NVIDIA, AMD, Intel) loads 0 there. The rule follows that 0 through assignments and arithmetic
(order matters: a rebinding `x = tl.where(mask, x, 0.0)` cleans it) to
`tl.max/min/sum/dot/argmax/argmin/cumsum/reduce` along an axis the mask covers, and reports only
where 0, or what it became on the way, is not neutral there: a max or min of the value, a sum of a
term that is not 0 (`exp(x)`, `x - mean`, `a / b`), a product. Sums of loaded zeros, sums of
squares, matmul tails and maxima of absolute values are quiet: every backend gives the same,
correct result (hygiene, not a finding). The axes are followed through `x[:, None]`, `tl.trans`
and `tl.permute`; masks cleaned by a conjunction, partners that are 0 on the same lanes and the
tail of an inclusive `tl.cumsum` whose uses only write valid lanes stay quiet as before.
"""
from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Union

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Applicability, Edit, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._memory_flow import (
    Access,
    KernelFlow,
    kernel_flow,
)
from tritonify.diagnostics.rules.triton._kernel_flow import names_in
from tritonify.diagnostics.rules.triton._static_sizes import KernelSizes, Scenario
from tritonify.diagnostics.triton_ast import child_nodes, keyword, tl_name, walk_nodes, walk_nodes_and_parents

RULE = Rule(
    code="TRI014",
    name="masked-load-no-other",
    summary="masked tl.load without other= whose masked-off lanes (0 on every GPU) change a reduction",
    severity=Severity.WARNING,
    fixable=True,
    # Default: it fires only where the masked lanes change a result on today's GPUs (issue 26);
    # rounds 1-3 of the real-world study counted sums of loaded zeros as true, which the written
    # standard (CONTRIBUTING.md, "Labelling findings") labels NOISE (benchmarks/realworld/labels/).
    default=True,
)

ADDITIVE = {"sum", "dot", "cumsum"}
MAXIMUM = {"max", "argmax"}
MINIMUM = {"min", "argmin"}
REDUCTIONS = ADDITIVE | MAXIMUM | MINIMUM | {"reduce"}
_EXP = {"exp", "exp2"}
_STOPS = {"load", "store", "program_id", "num_programs", "arange", "zeros", "full"} | REDUCTIONS
# How a value is derived from the load, which decides the filler that is safe to put in:
# RAW: order-preserving (copies, casts, +/- another value, * or / by a positive constant), so a
#      -inf/inf filler stays the identity of a max/min; EXP: exp() of a RAW value (a softmax
#      numerator: -inf becomes 0, the identity of the sum); MIXED: anything else (x * w, abs, -x),
#      where -inf could turn into nan and only 0.0 (what GPUs return today) keeps the behaviour.
RAW, EXP, MIXED = "raw", "exp", "mixed"
_CASTS = {"to", "cast"}
_LAYOUT = {"trans", "permute", "expand_dims", "reshape", "view", "broadcast_to"}
# Which axes of a value hold the masked-off lanes: one boolean per axis; FREE for a value that does
# not carry the load (any rank, broadcasts away); None when it cannot be told.
class _Free:
    __slots__ = ()


class _Maybe:
    __slots__ = ()


FREE = _Free()
# An index vector whose value cannot be read (a loop start from a helper): rank 1 when indexed
# as `v[None, :]`, its axis taken to span lanes (so it counts as masked: the cautious side).
MAYBE = _Maybe()
Pattern = Union[tuple[bool, ...], _Free, _Maybe, None]
# What a value holds on the load's masked-off lanes when it does not carry the load itself.
ZERO, NEG_INF = "zero", "-inf"
# What a tracked value holds on the load's masked-off lanes when the load returns 0 there.
LANE_ZERO, LANE_NONZERO, LANE_NEG_INF, LANE_UNKNOWN = "zero", "nonzero", "-inf", "unknown"


class _AnyDim(Mapping[str, int]):
    """Scenario values where every unknown name is a dimension of 2: shapes then tell which
    dimensions span lanes (> 1) and which are broadcast (1), whatever the block sizes are."""

    def __init__(self, known: Mapping[str, int]):
        self.known = known

    def __getitem__(self, key: str) -> int:
        return self.known.get(key, 2)

    def get(self, key, default=None):  # type: ignore[override]
        return self.known.get(key, 2)

    def __contains__(self, key) -> bool:
        return True

    def __iter__(self):
        return iter(self.known)

    def __len__(self) -> int:
        return len(self.known)


@dataclass
class Consumer:
    call: ast.Call
    kind: str          # the reduction's name
    label: str         # RAW, or EXP when the value only arrives through exp() (softmax)
    lane: str = "unknown"                    # what the masked lanes hold there (LANE_*)
    origins: tuple[ast.expr, ...] = ()       # where a loaded 0 turned into another value
    nonneg: bool = False                     # the operand is never negative (abs, squares, exp)
    partner_zero: bool = False               # a tl.dot whose other operand is 0 on those lanes


def _combine(labels) -> str | None:
    labels = {x for x in labels if x}
    if not labels:
        return None
    return labels.pop() if len(labels) == 1 else MIXED


def _positive_constant(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool) \
        and node.value > 0


def _reduction_of(ctx: PythonContext, call: ast.Call) -> tuple[str, list[ast.expr], ast.expr | None] | None:
    """(kind, tensor operands, axis) for `tl.sum(x, 0)` or `x.sum(0)`, else None."""
    name = tl_name(ctx.imports, call.func)
    if name in REDUCTIONS:
        if name == "dot":
            return name, list(call.args[:2]), None
        axis = keyword(call, "axis").value if keyword(call, "axis") else (call.args[1] if len(call.args) > 1 else None)
        return name, list(call.args[:1]), axis
    if name is None and isinstance(call.func, ast.Attribute) and call.func.attr in REDUCTIONS - {"dot"}:
        axis = keyword(call, "axis").value if keyword(call, "axis") else (call.args[0] if call.args else None)
        return call.func.attr, [call.func.value], axis
    return None


def _unsubscripted(expr: ast.AST) -> ast.AST:
    """`mask` for `mask[:, None]`: broadcasting a mask keeps it False on the same lanes."""
    while isinstance(expr, ast.Subscript):
        expr = expr.value
    return expr


def _conjunction_with(expr: ast.AST, is_mask) -> bool:
    """`a & mask`, `(a & b) & mask[:, None]`, `a and mask`: False wherever the mask is."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitAnd):
        return any(is_mask(e) or _conjunction_with(e, is_mask) for e in (expr.left, expr.right))
    if isinstance(expr, ast.BoolOp) and isinstance(expr.op, ast.And):
        return any(is_mask(e) or _conjunction_with(e, is_mask) for e in expr.values)
    return False


def _constant_fill(expr: ast.AST) -> str | None:
    """ZERO for `0`, `0.0`; NEG_INF for `-float("inf")`, `float("-inf")`, `-math.inf`."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool):
        return ZERO if expr.value == 0 else NEG_INF if expr.value == float("-inf") else None
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        inner = expr.operand
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == "float" \
                and inner.args and isinstance(inner.args[0], ast.Constant) and str(inner.args[0].value).lower() == "inf":
            return NEG_INF
        if isinstance(inner, ast.Attribute) and inner.attr == "inf":
            return NEG_INF
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "float" \
            and expr.args and isinstance(expr.args[0], ast.Constant) and str(expr.args[0].value).lower() == "-inf":
        return NEG_INF
    return None


def _broadcast(patterns: list) -> Pattern:
    if any(p is None or p is MAYBE for p in patterns):
        return None
    known = [p for p in patterns if p is not FREE]
    if not known:
        return FREE
    rank = max(len(p) for p in known)
    out = [False] * rank
    for p in known:
        for i, flag in enumerate(p):
            out[rank - len(p) + i] |= flag
    return tuple(out)


def _index(inner: Pattern, index: ast.AST) -> Pattern:
    """The pattern of `x[:, None]` from x's: `None` adds an unmasked axis, `:` keeps one."""
    items = index.elts if isinstance(index, ast.Tuple) else [index]
    if inner is MAYBE:
        full = [i for i in items if isinstance(i, ast.Slice)]
        inner = (True,) if len(full) == 1 else None
    if inner is None or inner is FREE:
        return inner
    out: list[bool] = []
    pos = 0
    for item in items:
        if isinstance(item, ast.Constant) and item.value is None:
            out.append(False)
        elif isinstance(item, ast.Slice) and item.lower is None and item.upper is None and item.step is None:
            if pos >= len(inner):  # type: ignore[arg-type]
                return None
            out.append(inner[pos])  # type: ignore[index]
            pos += 1
        else:
            return None
    return tuple(out) + tuple(inner[pos:])  # type: ignore[index]


_SPAN_ELEMENTWISE = {"cdiv", "minimum", "maximum", "where", "abs", "multiple_of", "max_contiguous", "max_constancy",
                     "cast"}


class _Spans:
    """Which axes of an index expression span lanes (`rows[:, None] < n` -> (True, False)), read
    from its structure where the static shape is unknown (a block size from a launch argument, a
    program id through a wrapper module): `tl.arange` spans its axis, scalars (parameters,
    constants, `program_id`) span none and broadcast."""

    def __init__(self, ctx: PythonContext, flow: KernelFlow, sizes: KernelSizes, scenario: Scenario):
        self.ctx, self.flow, self.sizes, self.scenario = ctx, flow, sizes, scenario
        self.depth = 0

    def __call__(self, expr: ast.AST) -> Pattern:
        shape = self.sizes.shape(expr, self.scenario)
        if shape is not None:
            return tuple(d != 1 for d in shape)
        if self.depth > 12:
            return None
        self.depth += 1
        try:
            found = self._structural(expr)
        finally:
            self.depth -= 1
        return MAYBE if found is None and isinstance(expr, ast.Name) else found

    def _structural(self, expr: ast.AST) -> Pattern:
        if isinstance(expr, ast.Constant):
            return FREE
        if isinstance(expr, ast.Name):
            if not self.flow.is_local(expr.id):
                return FREE if self.flow.param(expr.id) or expr.id in self.sizes.base_env else None
            reach = self.flow.reach(expr)
            if reach is None or not reach.bindings or reach.entry:
                return None
            found, added = set(), []
            for b in reach.bindings:
                if b.loop_target:
                    found.add(FREE if _range_loop(self.ctx, b.stmt) else None)  # `for i in range(...)`: a scalar
                elif b.value is None:
                    return None
                elif b.augmented:
                    added.append(self(b.value))  # `offs += BLOCK`: a loop-carried value keeps its axes
                else:
                    found.add(self(b.value))
            return _broadcast([found.pop(), *added]) if len(found) == 1 else None
        if isinstance(expr, ast.BinOp):
            return _broadcast([self(expr.left), self(expr.right)])
        if isinstance(expr, ast.Compare):
            return _broadcast([self(e) for e in (expr.left, *expr.comparators)])
        if isinstance(expr, ast.BoolOp):
            return _broadcast([self(e) for e in expr.values])
        if isinstance(expr, ast.UnaryOp):
            return self(expr.operand)
        if isinstance(expr, ast.Subscript):
            return _index(self(expr.value), expr.slice)
        if isinstance(expr, ast.Call):
            name = tl_name(self.ctx.imports, expr.func)
            attr = expr.func.attr if isinstance(expr.func, ast.Attribute) else None
            if name == "arange" or (name is None and attr == "arange"):
                return (True,)
            if name in ("program_id", "num_programs") or (name is None and attr in ("program_id", "num_programs")):
                return FREE
            if name is None and attr in _CASTS:
                return self(expr.func.value)  # type: ignore[union-attr]
            if name in _SPAN_ELEMENTWISE:
                return _broadcast([self(a) for a in expr.args])
            if name == "load" and expr.args:
                mask = keyword(expr, "mask").value if keyword(expr, "mask") else (expr.args[1] if len(expr.args) > 1 else None)
                return _broadcast([self(expr.args[0])] + ([self(mask)] if mask is not None else []))
        return None


def _range_loop(ctx: PythonContext, stmt: ast.AST) -> bool:
    if not isinstance(stmt, ast.For) or not isinstance(stmt.iter, ast.Call):
        return False
    func = stmt.iter.func
    return (isinstance(func, ast.Name) and func.id == "range") or tl_name(ctx.imports, func) in ("range", "static_range")


def _load_pattern(spans: _Spans, load: Access) -> Pattern:
    """The masked axes of the loaded tile: the mask's spanning axes, right-aligned with the
    tile's axes. When the tile's axes cannot be read (a pointer advanced in a loop), a mask of
    rank 2 or more is taken to have the tile's rank (kernels rarely go past 2-D tiles)."""
    mask_axes, load_axes = spans(load.mask), spans(load.call)  # type: ignore[arg-type]
    if not isinstance(mask_axes, tuple):
        return None
    if not isinstance(load_axes, tuple) and len(mask_axes) >= 2:
        load_axes = mask_axes
    if not isinstance(load_axes, tuple):
        return None
    if len(mask_axes) > len(load_axes):
        return None
    offset = len(load_axes) - len(mask_axes)
    return tuple(i >= offset and mask_axes[i - offset] for i in range(len(load_axes)))


class _Tracker:
    """Follows one masked load through the kernel's statements in order."""

    def __init__(self, ctx: PythonContext, flow: KernelFlow, load: Access, sizes: KernelSizes, scenario: Scenario):
        self.ctx = ctx
        self.flow = flow
        self.load = load
        self.sizes = sizes
        self.scenario = scenario
        self.mask_names = {n.id for n in walk_nodes(load.mask) if isinstance(n, ast.Name)} if load.mask else set()
        self.mask_dump = ast.dump(_unsubscripted(load.mask)) if load.mask else ""
        # equal dumps need equal node classes: most expressions are told apart without a dump
        self.mask_class = _unsubscripted(load.mask).__class__ if load.mask else None
        self.mask_aliases = {load.mask.id} if isinstance(load.mask, ast.Name) else set()
        self.covered = flow.names_in(load.mask) if load.mask else set()
        self.load_pattern = _load_pattern(_Spans(ctx, flow, sizes, scenario), load)
        self.tainted: dict[str, str] = {}
        self.patterns: dict[str, Pattern] = {}
        self.fills: dict[str, str] = {}
        # What each tracked name holds on the masked-off lanes when the load returns 0 there (what
        # every GPU backend does): LANE_ZERO, LANE_NONZERO, LANE_NEG_INF or LANE_UNKNOWN, and the
        # expressions where a 0 first turned into something else (where a `tl.where` repairs it).
        self.lanes: dict[str, tuple[str, tuple[ast.expr, ...]]] = {}
        self.nonneg: set[str] = set()
        # (consumer, operand, operand index, the operand's masked axes)
        self.consumers: list[tuple[Consumer, ast.expr, int, Pattern]] = []

    def label(self, expr: ast.AST) -> str | None:
        """RAW / EXP / MIXED when `expr` carries the loaded value, None when it does not."""
        if expr is self.load.call:
            return RAW
        if isinstance(expr, ast.Name):
            return self.tainted.get(expr.id)
        if isinstance(expr, ast.Call):
            return self._call_label(expr)
        if isinstance(expr, ast.BinOp):
            left, right = self.label(expr.left), self.label(expr.right)
            if left is None and right is None:
                return None
            if isinstance(expr.op, ast.BitAnd) and (self._is_mask(expr.left, left) or self._is_mask(expr.right, right)):
                return None                          # cond & mask: False on every masked lane
            if isinstance(expr.op, ast.Mult) and ((left is None and self.fill(expr.left) == ZERO)
                                                  or (right is None and self.fill(expr.right) == ZERO)):
                return None                          # x * w, w filled with 0 on the masked lanes
            if isinstance(expr.op, (ast.Add, ast.Sub)):
                return _combine([left, right])       # x - m, x + bias: a shift keeps the order
            if isinstance(expr.op, (ast.Mult, ast.Div)) and right is None and _positive_constant(expr.right):
                return left                          # x * 0.5, x / 2
            if isinstance(expr.op, ast.Mult) and left is None and _positive_constant(expr.left):
                return right
            return MIXED
        if isinstance(expr, ast.Subscript):
            return self.label(expr.value)            # x[:, None]
        if isinstance(expr, ast.BoolOp) and isinstance(expr.op, ast.And) \
                and any(self._is_mask(v, self.label(v)) for v in expr.values):
            return None                              # cond and mask
        if isinstance(expr, (ast.UnaryOp, ast.Compare, ast.BoolOp, ast.IfExp, ast.Attribute, ast.Tuple)):
            inner = _combine(self.label(c) for c in child_nodes(expr) if isinstance(c, ast.expr))
            return None if inner is None else MIXED
        return None

    def _call_label(self, call: ast.Call) -> str | None:
        name = tl_name(self.ctx.imports, call.func)
        if name == "where" and call.args:
            cond = {n.id for n in walk_nodes(call.args[0]) if isinstance(n, ast.Name)}
            if cond & self.mask_names:
                return None  # tl.where(mask, x, 0.0): the masked lanes are replaced
        if name in _STOPS:
            return None
        if name is None and isinstance(call.func, ast.Attribute) and call.func.attr in _CASTS:
            return self.label(call.func.value)      # x.to(tl.float32)
        args = [*call.args, *(k.value for k in call.keywords)]
        if name is None and isinstance(call.func, ast.Attribute):
            args.append(call.func.value)
        inner = _combine(self.label(a) for a in args)
        if inner is None:
            return None
        if name == "cast":
            return inner
        if name in _EXP:
            return EXP if inner == RAW else MIXED
        return MIXED

    def _is_mask(self, expr: ast.AST, lab: str | None) -> bool:
        """Whether `expr` is the load's own mask (or a name bound to it, or to a conjunction with
        it), so that it is False on every masked-off lane."""
        if lab is not None:
            return False
        inner = _unsubscripted(expr)
        if isinstance(inner, ast.Name) and inner.id in self.mask_aliases:
            return True
        return inner.__class__ is self.mask_class and ast.dump(inner) == self.mask_dump

    def _covers(self, cond: ast.AST) -> bool:
        """Whether a condition (or another load's mask) is False wherever the load's mask is:
        it reads every name the mask reads (`row_ok & (cols < n)` for `mask=cols < n`)."""
        return bool(self.covered) and self.covered <= self.flow.names_in(cond)

    def fill(self, expr: ast.AST) -> str | None:
        """ZERO when `expr` is a finite 0 on the load's masked-off lanes (another load with
        `other=0` under a mask that covers them, `tl.where(mask, x, 0)`, `exp(-inf)`), NEG_INF
        when it is -inf there, else None."""
        if self.label(expr) is not None:
            return None
        if isinstance(expr, ast.Name):
            return self.fills.get(expr.id)
        if isinstance(expr, ast.Subscript):
            return self.fill(expr.value)
        if isinstance(expr, ast.Attribute) and expr.attr == "T":
            return self.fill(expr.value)
        if isinstance(expr, ast.BinOp):
            left, right = self.fill(expr.left), self.fill(expr.right)
            if isinstance(expr.op, ast.Mult) and ZERO in (left, right):
                return ZERO
            if isinstance(expr.op, ast.Div) and left == ZERO:
                return ZERO
            if isinstance(expr.op, (ast.Add, ast.Sub)) and left == NEG_INF and right is None:
                return NEG_INF                       # qk - m: -inf stays -inf
            if isinstance(expr.op, (ast.Mult, ast.Div)) and left == NEG_INF and _positive_constant(expr.right):
                return NEG_INF
            return None
        if not isinstance(expr, ast.Call):
            return None
        name = tl_name(self.ctx.imports, expr.func)
        if name in ("zeros", "zeros_like") or (name == "full" and len(expr.args) > 1
                                              and _constant_fill(expr.args[1]) == ZERO):
            return ZERO                              # an accumulator that starts at 0
        if name is None and isinstance(expr.func, ast.Attribute) and expr.func.attr in _CASTS | _LAYOUT:
            return self.fill(expr.func.value)
        if name in _LAYOUT | {"cast"} and expr.args:
            return self.fill(expr.args[0])
        if name in _EXP and expr.args:
            return ZERO if self.fill(expr.args[0]) == NEG_INF else None
        if name == "where" and len(expr.args) == 3 and self._covers(expr.args[0]):
            return _constant_fill(expr.args[2])
        if name == "load" and self.flow is not None:
            other = keyword(expr, "other").value if keyword(expr, "other") else (expr.args[2] if len(expr.args) > 2 else None)
            mask = keyword(expr, "mask").value if keyword(expr, "mask") else (expr.args[1] if len(expr.args) > 1 else None)
            if other is not None and mask is not None and _constant_fill(other) == ZERO and self._covers(mask):
                return ZERO
        return None

    def lane(self, expr: ast.AST, origin: ast.AST | None = None) -> tuple[str, tuple[ast.expr, ...]]:
        """What `expr` holds on the load's masked-off lanes when the load returns 0 there (every
        GPU backend today), and where a 0 turned into another value on the way (`x - mean`,
        `tl.exp(x)`, `a / b`): the terms a `tl.where(mask, ..., 0)` repairs."""
        state, origins, made = self._lane(expr)
        if made:
            origins = origins + ((origin if origin is not None else expr),)  # type: ignore[operator]
        return state, origins

    def _lane(self, expr: ast.AST) -> tuple[str, tuple[ast.expr, ...], bool]:
        """(state, origins, whether this very expression turned a 0 into a non-zero value)."""
        if expr is self.load.call:
            return LANE_ZERO, (), False
        if self.label(expr) is None:
            fill = self.fill(expr)
            if fill == ZERO or self._masked_zero(expr):
                return LANE_ZERO, (), False
            if fill == NEG_INF:
                return LANE_NEG_INF, (), False
            return (LANE_NONZERO if self._statistic(expr, 0) else LANE_UNKNOWN), (), False
        if isinstance(expr, ast.Name):
            state, origins = self.lanes.get(expr.id, (LANE_UNKNOWN, ()))
            return state, origins, False
        if isinstance(expr, ast.Subscript) or (isinstance(expr, ast.Attribute) and expr.attr == "T"):
            state, origins = self.lane(expr.value)
            return state, origins, False
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
            state, origins = self.lane(expr.operand)
            return state, origins, False
        if isinstance(expr, ast.BinOp):
            (left, lo), (right, ro) = self.lane(expr.left), self.lane(expr.right)
            origins = lo + ro
            op = expr.op
            if isinstance(op, (ast.Add, ast.Sub)):
                if left == right == LANE_ZERO:
                    return LANE_ZERO, (), False
                if {left, right} == {LANE_ZERO, LANE_NONZERO}:
                    # a loaded 0 shifted by a statistic or a constant: x - mean, x + 1.0
                    made = (left if self.label(expr.left) is not None else right) == LANE_ZERO
                    return LANE_NONZERO, origins, made
                if LANE_NEG_INF in (left, right) and LANE_UNKNOWN not in (left, right):
                    return LANE_NEG_INF, origins, False
                return LANE_UNKNOWN, origins, False
            if isinstance(op, ast.Mult):
                if LANE_ZERO in (left, right) and LANE_NEG_INF not in (left, right):
                    return LANE_ZERO, (), False
                if left == right == LANE_NONZERO:
                    return LANE_NONZERO, origins, False
                return LANE_UNKNOWN, origins, False
            if isinstance(op, (ast.Div, ast.FloorDiv, ast.Mod)):
                if right == LANE_ZERO:
                    return LANE_NONZERO, origins, True    # 0 / 0 = nan, x / 0 = inf
                if left == LANE_ZERO:
                    return LANE_ZERO, (), False
                if left == right == LANE_NONZERO:
                    return LANE_NONZERO, origins, False
                return LANE_UNKNOWN, origins, False
            if isinstance(op, ast.Pow):
                if left == LANE_ZERO and _positive_constant(expr.right):
                    return LANE_ZERO, (), False
                return (LANE_NONZERO if left == LANE_NONZERO else LANE_UNKNOWN), origins, False
            return LANE_UNKNOWN, origins, False
        if isinstance(expr, ast.Call):
            name = tl_name(self.ctx.imports, expr.func)
            method = expr.func.attr if name is None and isinstance(expr.func, ast.Attribute) else None
            if method in _CASTS | _LAYOUT:
                state, origins = self.lane(expr.func.value)  # type: ignore[union-attr]
                return state, origins, False
            if not expr.args:
                return LANE_UNKNOWN, (), False
            state, origins = self.lane(expr.args[0])
            if name in _LAYOUT | {"cast", "abs", "sqrt", "sqrt_rn", "sin", "tanh", "erf"}:
                return state, origins, False
            if name in _EXP or name in ("cos", "sigmoid", "log", "log2", "rsqrt"):
                if state == LANE_ZERO:
                    return LANE_NONZERO, origins, True    # exp(0) = 1, log(0) = -inf, 1/sqrt(0) = inf
                if name in _EXP and state == LANE_NEG_INF:
                    return LANE_ZERO, (), False
                if name in _EXP and state == LANE_NONZERO:
                    return LANE_NONZERO, origins, False
                return LANE_UNKNOWN, origins, False
            if name == "where" and len(expr.args) == 3:
                (a, ao), (b, bo) = self.lane(expr.args[1]), self.lane(expr.args[2])
                return (a if a == b and a != LANE_NEG_INF else LANE_UNKNOWN), ao + bo, False
            return LANE_UNKNOWN, origins, False
        return LANE_UNKNOWN, (), False

    def _masked_zero(self, expr: ast.AST) -> bool:
        """Another masked load without `other=` whose mask covers this one's: 0 on those lanes
        wherever this load is 0 (what every backend returns)."""
        if isinstance(expr, ast.Call) and tl_name(self.ctx.imports, expr.func) == "load":
            other = keyword(expr, "other") or (expr.args[2] if len(expr.args) > 2 else None)
            mask = keyword(expr, "mask").value if keyword(expr, "mask") else (expr.args[1] if len(expr.args) > 1 else None)
            return other is None and mask is not None and self._covers(mask)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _CASTS:
            return self._masked_zero(expr.func.value)
        if isinstance(expr, ast.Name) and self.flow.is_local(expr.id):
            value = self.flow.value_at(expr)
            return value is not None and value is not expr and self._masked_zero(value)
        return False

    def _statistic(self, expr: ast.AST, depth: int) -> bool:
        """A value that is the same on every lane and not 0 by construction: a non-zero constant, a
        scalar argument, a reduction (a mean, a max), a scalar load, or arithmetic of these."""
        if depth > 8:
            return False
        if isinstance(expr, ast.Constant):
            return isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool) and expr.value != 0
        if isinstance(expr, ast.Name):
            if not self.flow.is_local(expr.id):
                param = self.flow.param(expr.id)
                return param is not None and not self.flow.is_constexpr(expr.id) and not expr.id.endswith("_ptr")
            value = self.flow.value_at(expr)
            return value is not None and self._statistic(value, depth + 1)
        if isinstance(expr, ast.Subscript):
            return self._statistic(expr.value, depth + 1)
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
            return self._statistic(expr.operand, depth + 1)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Mult, ast.Div)):
            return self._statistic(expr.left, depth + 1) and self._statistic(expr.right, depth + 1)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
            # mean + eps, a - b: a statistic when one side is, and the other is one too (or a constant)
            return self._statistic(expr.left, depth + 1) and self._statistic(expr.right, depth + 1)
        if isinstance(expr, ast.Call):
            name = tl_name(self.ctx.imports, expr.func)
            if name in ("sum", "max", "min") or (name is None and isinstance(expr.func, ast.Attribute)
                                                 and expr.func.attr in ("sum", "max", "min")):
                # a mean or a max over the data; `tl.sum(x) / n` arrives here through the division
                return True
            if name is None and isinstance(expr.func, ast.Attribute) and expr.func.attr in _CASTS:
                return self._statistic(expr.func.value, depth + 1)
            if name in ("rsqrt", "sqrt", "exp", "log") and expr.args:
                return self._statistic(expr.args[0], depth + 1)
            if name == "load" and expr.args and keyword(expr, "mask") is None and len(expr.args) == 1:
                spans = _Spans(self.ctx, self.flow, self.sizes, self.scenario)(expr.args[0])
                return spans is FREE or spans == ()   # one value per program: a saved mean, a scale
        return False

    def is_nonneg(self, expr: ast.AST) -> bool:
        """`abs(x)`, `x * x`, `x ** 2`, `exp(x)`, `sqrt(x)`, `tl.maximum(x, 0)`: never below 0, so a
        0 on the masked lanes cannot win a max over it."""
        if isinstance(expr, ast.Name):
            return expr.id in self.nonneg
        if isinstance(expr, ast.Subscript):
            return self.is_nonneg(expr.value)
        if isinstance(expr, ast.BinOp):
            if isinstance(expr.op, ast.Mult) and ast.dump(expr.left) == ast.dump(expr.right):
                return True
            if isinstance(expr.op, ast.Pow) and isinstance(expr.right, ast.Constant) and expr.right.value == 2:
                return True
            if isinstance(expr.op, (ast.Mult, ast.Div, ast.Add)):
                return self.is_nonneg(expr.left) and (self.is_nonneg(expr.right) or _positive_constant(expr.right))
            return False
        if isinstance(expr, ast.Call):
            name = tl_name(self.ctx.imports, expr.func)
            if name is None and isinstance(expr.func, ast.Attribute) and expr.func.attr in _CASTS:
                return self.is_nonneg(expr.func.value)
            if name in ("abs", "exp", "exp2", "sqrt", "sqrt_rn", "sigmoid"):
                return True
            if name == "maximum" and len(expr.args) == 2:
                return any(_constant_fill(a) == ZERO for a in expr.args)
            if name in ("cast",) and expr.args:
                return self.is_nonneg(expr.args[0])
        return False

    def pattern(self, expr: ast.AST) -> Pattern:
        """Which axes of `expr` hold the load's masked-off lanes (a tuple of booleans, one per
        axis), followed through broadcasting, `x[:, None]`, `tl.trans` and `tl.permute`; FREE for a
        value that does not carry the load; None when it cannot be told."""
        if expr is not self.load.call and self.label(expr) is None:
            shape = self.sizes.shape(expr, self.scenario)
            return FREE if shape is None else (False,) * len(shape)
        if expr is self.load.call:
            return self.load_pattern
        if isinstance(expr, ast.Name):
            return self.patterns.get(expr.id)
        if isinstance(expr, ast.BinOp):
            return _broadcast([self.pattern(expr.left), self.pattern(expr.right)])
        if isinstance(expr, ast.Compare):
            return _broadcast([self.pattern(e) for e in (expr.left, *expr.comparators)])
        if isinstance(expr, ast.BoolOp):
            return _broadcast([self.pattern(e) for e in expr.values])
        if isinstance(expr, ast.UnaryOp):
            return self.pattern(expr.operand)
        if isinstance(expr, ast.Subscript):
            return _index(self.pattern(expr.value), expr.slice)
        if isinstance(expr, ast.Attribute) and expr.attr == "T":
            inner = self.pattern(expr.value)
            return None if inner is None or inner is FREE else tuple(reversed(inner))
        if not isinstance(expr, ast.Call):
            return None
        name = tl_name(self.ctx.imports, expr.func)
        method = expr.func.attr if name is None and isinstance(expr.func, ast.Attribute) else None
        if name in ("trans", "permute") and expr.args:
            return self._permuted(self.pattern(expr.args[0]), expr.args[1:])
        if method in ("trans", "permute"):
            return self._permuted(self.pattern(expr.func.value), expr.args)  # type: ignore[union-attr]
        if method in _CASTS:
            return self.pattern(expr.func.value)  # type: ignore[union-attr]
        if name == "expand_dims" and len(expr.args) == 2:
            inner, axis = self.pattern(expr.args[0]), self.sizes.value(expr.args[1], self.scenario)
            if inner is None or inner is FREE or axis is None:
                return None
            axis = axis if axis >= 0 else len(inner) + 1 + axis
            return inner[:axis] + (False,) + inner[axis:]
        if name in ("reshape", "view", "broadcast_to") or method in ("reshape", "view", "broadcast_to", "expand_dims"):
            return None
        args = [*expr.args, *(k.value for k in expr.keywords)]
        if method is not None:
            args.append(expr.func.value)  # type: ignore[union-attr]
        return _broadcast([self.pattern(a) for a in args if isinstance(a, ast.expr)])

    def _permuted(self, inner: Pattern, dims: list[ast.expr]) -> Pattern:
        if inner is None or inner is FREE:
            return None
        if len(dims) == 1 and isinstance(dims[0], (ast.Tuple, ast.List)):
            dims = list(dims[0].elts)
        if not dims:
            return tuple(reversed(inner)) if len(inner) == 2 else None
        order = [self.sizes.value(d, self.scenario) for d in dims]
        if any(o is None for o in order) or sorted(order) != list(range(len(inner))):  # type: ignore[type-var]
            return None
        return tuple(inner[o] for o in order)  # type: ignore[index]

    def _expressions(self, stmt: ast.stmt) -> list[ast.AST]:
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            return [stmt.iter]
        if isinstance(stmt, (ast.If, ast.While)):
            return [stmt.test]
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            return [i.context_expr for i in stmt.items]
        if isinstance(stmt, (ast.FunctionDef, ast.ClassDef, ast.Try)):
            return []
        return [stmt]

    def run(self) -> None:
        for stmt in self.flow.statements():
            for expr in self._expressions(stmt):
                for node in walk_nodes(expr):
                    if isinstance(node, ast.Call):
                        self._consume(node)
            self._assign(stmt)

    def _consume(self, call: ast.Call) -> None:
        found = _reduction_of(self.ctx, call)
        if found is None:
            return
        kind, operands, _ = found
        for index, operand in enumerate(operands):
            lab = self.label(operand)
            if not lab:
                continue
            if kind == "dot" and self.fill(operands[1 - index]) == ZERO:
                continue  # its partner is 0 on the masked lanes: only an inf/NaN fill could leak
            lane, origins = self.lane(operand)
            partner_zero = kind == "dot" and self.lane(operands[1 - index])[0] == LANE_ZERO
            consumer = Consumer(call, kind, lab, lane, origins, self.is_nonneg(operand), partner_zero)
            self.consumers.append((consumer, operand, index, self.pattern(operand)))

    def _assign(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                self._bind(target, stmt.value)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self._bind(stmt.target, stmt.value)
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            name = stmt.target.id
            if isinstance(stmt.op, ast.Mult) and name not in self.tainted and self.fills.get(name) == ZERO:
                return  # `x *= gate` with x filled with 0 on the masked lanes: x stays 0 there
            value_lab = self.label(stmt.value)
            lab = _combine([value_lab, self.tainted.get(name)])
            if lab:
                before = self.patterns.get(name) if name in self.tainted else FREE
                self.patterns[name] = _broadcast([before, self.pattern(stmt.value) if value_lab else FREE])
                combined = ast.BinOp(left=ast.Name(id=name, ctx=ast.Load()), op=stmt.op, right=stmt.value)
                self.lanes[name] = self.lane(combined, origin=stmt.value)
                self.tainted[name] = lab
                if not (name in self.nonneg and isinstance(stmt.op, ast.Add) and self.is_nonneg(stmt.value)):
                    self.nonneg.discard(name)
            self.fills.pop(name, None)
            self.mask_aliases.discard(name)

    def _bind(self, target: ast.AST, value: ast.expr) -> None:
        if isinstance(target, ast.Name):
            lab = self.label(value)
            name = target.id
            # read the value before the name is rebound (`x = x * g` reads the old x)
            pattern = self.pattern(value) if lab else None
            fill = None if lab else self.fill(value)
            alias = not lab and (self._is_mask(value, None)
                                 or _conjunction_with(value, lambda v: self._is_mask(v, self.label(v))))
            lane = self.lane(value) if lab else None
            nonneg = self.is_nonneg(value)
            self.fills.pop(name, None)
            self.mask_aliases.discard(name)
            self.nonneg.discard(name)
            if nonneg:
                self.nonneg.add(name)
            if lab:
                self.tainted[name] = lab
                self.patterns[name] = pattern
                self.lanes[name] = lane  # type: ignore[assignment]
                return
            self.tainted.pop(name, None)
            self.lanes.pop(name, None)
            self.patterns.pop(name, None)
            if fill:
                self.fills[name] = fill
            if alias:
                self.mask_aliases.add(name)
                self.mask_names.add(name)
        elif isinstance(target, (ast.Tuple, ast.List)):
            elts = value.elts if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) \
                else [value] * len(target.elts)
            for elt, part in zip(target.elts, elts):
                self._bind(elt, part)


def _masked_axes(sizes: KernelSizes, scenario: Scenario, mask: ast.expr, operand: ast.expr) -> set[int] | None:
    """Axes of `operand` along which the load's mask varies; None when shapes are unknown or the
    value changed shape on the way."""
    load_shape = sizes.shape(operand, scenario)
    mask_shape = sizes.shape(mask, scenario)
    if load_shape is None or mask_shape is None or len(mask_shape) > len(load_shape):
        return None
    offset = len(load_shape) - len(mask_shape)
    return {offset + i for i, d in enumerate(mask_shape) if d != 1}


def _along_masked_axis(sizes: KernelSizes, scenario: Scenario, load: Access, consumer: Consumer,
                       operand: ast.expr, index: int, ctx: PythonContext, pattern: Pattern) -> bool:
    shape = sizes.shape(operand, scenario)
    if pattern is not None and pattern is not FREE and (shape is None or len(shape) == len(pattern)):
        axes: set[int] | None = {i for i, flag in enumerate(pattern) if flag}
        rank = len(pattern)
    else:
        axes = _masked_axes(sizes, scenario, load.mask, operand)  # type: ignore[arg-type]
        rank = len(shape or ())
    if axes is None:
        return True  # cannot tell: the spec says undefined, so report it
    if consumer.kind == "dot":
        reduced = {rank - 1} if index == 0 else {rank - 2}
    else:
        found = _reduction_of(ctx, consumer.call)
        axis_node = found[2] if found else None
        if axis_node is None or (isinstance(axis_node, ast.Constant) and axis_node.value is None):
            reduced = set(range(rank))
        else:
            value = sizes.value(axis_node, scenario)
            if value is None:
                return True
            reduced = {value % rank} if rank else set()
    return bool(axes & reduced)


class _ScanTail:
    """An inclusive `tl.cumsum` over a tile masked at its tail (`mask = offs < n`, offs rising
    along the scan): the masked lanes come after every valid lane, so they reach no valid lane of
    the scan. The finding is dropped when every use of the scan only writes valid lanes: stores
    masked by a conjunction with the load's mask, or by `offs == n - 1` (the last valid lane).
    A store of lane `BLOCK - 1`, a `tl.sum` of the scan or a branch on it keep it."""

    def __init__(self, ctx: PythonContext, flow: KernelFlow, tracker: _Tracker):
        self.ctx, self.flow, self.tracker = ctx, flow, tracker
        self.bound = self._tail(tracker.load.mask)

    def _resolved(self, expr: ast.AST | None) -> ast.AST | None:
        if isinstance(expr, ast.Name):
            value = self.flow.value_at(expr)
            return value if value is not None else expr
        return expr

    def _tail(self, mask: ast.AST | None) -> tuple[str, str] | None:
        """(index, bound) as dumped ASTs for a mask `index < bound` whose index rises with the lane."""
        mask = self._resolved(mask)
        if not (isinstance(mask, ast.Compare) and len(mask.ops) == 1 and isinstance(mask.ops[0], ast.Lt)):
            return None
        if not self._rising(mask.left, 0):
            return None
        return ast.dump(mask.left), ast.dump(mask.comparators[0])

    def _rising(self, expr: ast.AST, depth: int) -> bool:
        """`tl.arange(0, B)` plus scalars (program offsets, loop starts)."""
        if depth > 8:
            return False
        if isinstance(expr, ast.Call) and tl_name(self.ctx.imports, expr.func) == "arange":
            return True
        if isinstance(expr, ast.Name):
            value = self.flow.value_at(expr)
            return value is not None and self._rising(value, depth + 1)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            spans = _Spans(self.ctx, self.flow, self.tracker.sizes, self.tracker.scenario)
            left, right = self._rising(expr.left, depth + 1), self._rising(expr.right, depth + 1)
            scalar = lambda e: (lambda a: a is FREE or a == ())(spans(e))  # noqa: E731
            return (left and scalar(expr.right)) or (right and scalar(expr.left))
        return False

    def _valid_store_mask(self, mask: ast.AST | None) -> bool:
        if mask is None:
            return False
        tracker = self.tracker
        if tracker._is_mask(mask, None) or _conjunction_with(mask, lambda v: tracker._is_mask(v, tracker.label(v))):
            return True
        resolved = self._resolved(mask)
        if _conjunction_with(resolved, lambda v: tracker._is_mask(v, tracker.label(v))):  # type: ignore[arg-type]
            return True
        if isinstance(resolved, ast.Compare) and len(resolved.ops) == 1 and isinstance(resolved.ops[0], ast.Eq):
            last = resolved.comparators[0]
            return self.bound is not None and ast.dump(resolved.left) == self.bound[0] \
                and isinstance(last, ast.BinOp) and isinstance(last.op, ast.Sub) \
                and ast.dump(last.left) == self.bound[1] \
                and isinstance(last.right, ast.Constant) and last.right.value == 1
        return False

    def only_valid_lanes(self, consumer: Consumer, pattern: Pattern) -> bool:
        call = consumer.call
        if consumer.kind != "cumsum" or self.bound is None or pattern != (True,):
            return False
        reverse = keyword(call, "reverse")
        if reverse is not None and not (isinstance(reverse.value, ast.Constant) and reverse.value.value is False):
            return False
        scans: set[str] = set()
        started = False
        for stmt in self.flow.statements():
            nodes, parents = walk_nodes_and_parents(stmt)
            if not started:
                if not any(n is call for n in nodes):
                    continue
                started = True
                starts: list[ast.AST] = [call]
            else:
                starts = [n for n in nodes if isinstance(n, ast.Name) and n.id in scans
                          and isinstance(n.ctx, ast.Load)]
            bound: set[str] = set()
            for start in starts:
                where = self._climb(start, parents)
                if where is None:
                    return False
                bound |= where
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for t in targets:
                    if isinstance(t, ast.Name) and t.id not in bound:
                        scans.discard(t.id)  # rebound to a value that does not read the scan
            scans |= bound
        return started

    def _climb(self, node: ast.AST, parents: dict[ast.AST, ast.AST]) -> set[str] | None:
        """Names the scan's value is bound to from this use, or None when it may reach a lane
        that is not valid (a reduction, a branch, an unmasked store, a call)."""
        cur = node
        while True:
            parent = parents.get(cur)
            if parent is None:
                return None
            if isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.keyword)):
                cur = parent
                continue
            if isinstance(parent, ast.Attribute) and parent.attr in _CASTS:
                cur = parent
                continue
            if isinstance(parent, ast.Call):
                name = tl_name(self.ctx.imports, parent.func)
                if name == "store":
                    mask = keyword(parent, "mask").value if keyword(parent, "mask") else (
                        parent.args[2] if len(parent.args) > 2 else None)
                    return set() if self._valid_store_mask(mask) else None
                cast = name is None and isinstance(parent.func, ast.Attribute) and parent.func.attr in _CASTS
                if name in ("where", "cast") or cast:
                    cur = parent
                    continue
                return None
            if isinstance(parent, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
                if all(isinstance(t, ast.Name) for t in targets):
                    return {t.id for t in targets}  # type: ignore[attr-defined]
                return None
            return None


def _filler(consumers: list[Consumer]) -> tuple[str, bool] | None:
    """(the `other=` value, whether it is a safe fix) for the reductions the value reaches."""
    kinds = {c.kind for c in consumers}
    if "reduce" in kinds or (kinds & MAXIMUM and kinds & MINIMUM):
        return None  # a custom combine function, or both a max and a min: no single identity
    extreme = MAXIMUM if kinds & MAXIMUM else MINIMUM if kinds & MINIMUM else set()
    if not extreme:
        if consumers and all(c.label == EXP for c in consumers):
            return '-float("inf")', True  # only exp(x) is summed: exp(-inf) = 0
        return "0.0", True  # sums and dots: 0 is their identity and what GPUs return today
    value = '-float("inf")' if extreme is MAXIMUM else 'float("inf")'
    extremes = [c for c in consumers if c.kind in extreme]
    additive = [c for c in consumers if c.kind in ADDITIVE]
    if all(c.label == RAW for c in extremes) and all(c.label == EXP for c in additive):
        return value, True
    if all(c.label == RAW for c in extremes):
        return None  # max(x) and sum(x) of the same raw value: no single filler
    # The value reaches the max/min through x * w, abs(...) and the like, where +-inf could turn
    # into nan: 0.0 keeps what GPUs do today; whether 0 can win the max is for the author to see.
    return "0.0", False


def _combine_kind(ctx: PythonContext, call: ast.Call) -> str | None:
    """"product" or "sum" for `tl.reduce(x, axis, fn)` whose combine function returns `a * b` or
    `a + b`; None for any other (or unreadable) combine function."""
    fn = keyword(call, "combine_fn").value if keyword(call, "combine_fn") else (call.args[2] if len(call.args) > 2 else None)
    if not isinstance(fn, ast.Name):
        return None
    for node in ctx.module_nodes:
        if isinstance(node, ast.FunctionDef) and node.name == fn.id and len(node.args.args) == 2:
            returns = [n for n in ast.walk(node) if isinstance(n, ast.Return)]
            if len(returns) == 1 and isinstance(returns[0].value, ast.BinOp):
                op = returns[0].value.op
                return "product" if isinstance(op, ast.Mult) else "sum" if isinstance(op, ast.Add) else None
    return None


def _hazard(ctx: PythonContext, c: Consumer) -> str | None:
    """Why the masked-off lanes change this reduction's result on today's GPUs (which fill them
    with 0), or None when 0 (or what it became on the way) is neutral there."""
    at = f"`tl.{c.kind}` (line {c.call.lineno})"
    turned = ""
    if c.origins:
        shown = ast.unparse(c.origins[0])
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        turned = f" and `{shown}` (line {c.origins[0].lineno}) turns them into"
    if c.kind in ADDITIVE:
        if c.kind == "dot" and c.partner_zero:
            return None
        if c.lane == LANE_NONZERO:
            return f"the masked-off lanes load as 0{turned or ' and arrive as'} a non-zero value that {at} adds"
        if c.lane == LANE_NEG_INF:
            return f"the masked-off lanes load as 0{turned or ' and arrive as'} -inf, which {at} adds"
        return None
    if c.kind in MAXIMUM:
        if c.lane == LANE_ZERO and not c.nonneg:
            return f"the masked-off lanes load as 0, which wins {at} whenever every valid value is negative"
        if c.lane == LANE_NONZERO or (c.label == RAW and c.lane != LANE_NEG_INF):
            return f"the masked-off lanes load as 0{turned or ' and arrive as'} a value that can win {at}"
        return None
    if c.kind in MINIMUM:
        if c.lane == LANE_ZERO:
            return f"the masked-off lanes load as 0, which wins {at} whenever every valid value is positive"
        if c.lane == LANE_NONZERO or (c.label == RAW and c.lane != LANE_NEG_INF):
            return f"the masked-off lanes load as 0{turned or ' and arrive as'} a value that can win {at}"
        return None
    if c.kind == "reduce":
        combine = _combine_kind(ctx, c.call)
        if combine == "product" and c.lane in (LANE_ZERO, LANE_NONZERO):
            return f"the masked-off lanes load as 0{turned or ''}, which changes the product {at} computes"
        if combine == "sum" and c.lane == LANE_NONZERO:
            return f"the masked-off lanes load as 0{turned or ' and arrive as'} a non-zero value that {at} adds"
    return None


def _fix(ctx: PythonContext, load: Access, value: str, safe: bool) -> Fix:
    _, _, end_line, end_col = ctx.source.node_range(load.mask)  # type: ignore[arg-type]
    return Fix(
        title=f"Add other={value}",
        edits=(Edit.insert(end_line, end_col, f", other={value}"),),
        applicability=Applicability.SAFE if safe else Applicability.UNSAFE,
    )


def _repairs(value: str, hits: list[Consumer]) -> bool:
    """Whether `other=value` gives every hazardous reduction its identity on the masked lanes:
    -inf for a max of the raw value and for a sum of exp(raw) (exp(-inf) = 0), inf for a min."""
    for h in hits:
        if h.kind in MAXIMUM and not (value == '-float("inf")' and h.label == RAW):
            return False
        if h.kind in MINIMUM and not (value == 'float("inf")' and h.label == RAW):
            return False
        if h.kind in ADDITIVE and not (value == '-float("inf")' and h.label == EXP):
            return False
        if h.kind == "reduce":
            return False
    return True


def _mask_text(ctx: PythonContext, flow: KernelFlow, kernel_node: ast.FunctionDef, load: Access) -> str | None:
    """The load's mask as source text that means the same anywhere in the kernel: every name it
    reads is a parameter or bound once."""
    mask = load.mask
    if mask is None:
        return None
    counts: dict[str, int] = {}
    for node in ast.walk(kernel_node):
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For)):
            targets = [node.target]
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, ast.Name):
                    counts[n.id] = counts.get(n.id, 0) + 1
    for n in walk_nodes(mask):
        if isinstance(n, ast.Name) and counts.get(n.id, 0) > 1:
            return None
        if isinstance(n, ast.Name) and counts.get(n.id, 0) == 0 and flow.param(n.id) is None:
            return None
    return ast.unparse(mask)


def _where_fix(ctx: PythonContext, flow: KernelFlow, kernel_node: ast.FunctionDef, load: Access,
               hits: list[tuple[Consumer, ast.expr]]) -> Fix | None:
    """`tl.where(mask, term, identity)` on each term where a loaded 0 turned into another value
    (for sums), or on the reduction's operand (for a max or min)."""
    func = load.call.func
    mask = _mask_text(ctx, flow, kernel_node, load)
    if mask is None or not isinstance(func, ast.Attribute):
        return None
    where = f"{ast.unparse(func.value)}.where"
    targets: dict[int, tuple[ast.expr, str]] = {}
    for c, operand in hits:
        if c.kind in ADDITIVE or c.kind == "reduce":
            if not c.origins:
                return None
            for o in c.origins:
                targets[id(o)] = (o, "0.0")
        else:
            targets[id(operand)] = (operand, '-float("inf")' if c.kind in MAXIMUM else 'float("inf")')
    spans = []
    for node, _ in targets.values():
        if node.lineno < load.call.lineno:
            return None  # the term comes before the load (a loop-carried value): the mask is not bound there
        spans.append(ctx.source.node_range(node))
    spans.sort()
    if any(a[2:] > b[:2] for a, b in zip(spans, spans[1:])):
        return None  # nested terms: one edit would overwrite the other
    edits = tuple(ctx.replace(node, f"{where}({mask}, {ast.unparse(node)}, {identity})")
                  for node, identity in targets.values())
    return Fix(title=f"Wrap the term in {where}({mask}, ..., <identity>)", edits=edits,
               applicability=Applicability.UNSAFE)


_NESTED_BODIES = ("body", "orelse", "finalbody")


def _own_nodes(stmt: ast.stmt) -> list[ast.AST]:
    """The nodes of a statement without the statement lists that `KernelFlow.statements()` yields
    on their own (a loop's or branch's body, an `else`, a handler's body): walking each statement
    whole walked a body once per enclosing statement. The same nodes are covered, each once."""
    nested = [f for f in _NESTED_BODIES
              if isinstance(getattr(stmt, f, None), list) and getattr(stmt, f) and isinstance(getattr(stmt, f)[0], ast.stmt)]
    handlers = getattr(stmt, "handlers", None) or []
    if not nested and not handlers:
        return walk_nodes(stmt)
    out: list[ast.AST] = [stmt]
    for name in stmt._fields:
        if name in nested or name == "handlers":
            continue
        value = getattr(stmt, name, None)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, ast.AST):
                out += walk_nodes(item)
    for handler in handlers:
        out.append(handler)
        if handler.type is not None:
            out += walk_nodes(handler.type)
    return out


def _reaching_reductions(ctx: PythonContext, flow: KernelFlow) -> tuple[set[str], set[int]]:
    """What can reach a reduction's operand, once per kernel: the names (a superset: every name an
    operand reads, and every name those are computed from, in any order, so loop-carried values
    count), and the ids of the nodes inside the operands themselves. A load whose value reaches
    neither cannot change a reduction, so it is not followed through the kernel: following each
    masked load through every statement made a kernel of 2,500 loads quadratic (14.6 s)."""
    depends: dict[str, set[str]] = {}
    roots: set[str] = set()
    inside: set[int] = set()
    for stmt in flow.statements():
        own = _own_nodes(stmt)   # nested bodies come as statements of their own
        walruses = []
        for node in own:
            cls = node.__class__   # parsed nodes are never subclasses
            if cls is ast.NamedExpr:
                walruses.append(node)
            elif cls is ast.Call:
                found = _reduction_of(ctx, node)
                if found is not None:
                    for operand in found[1]:
                        for sub in walk_nodes(operand):
                            inside.add(id(sub))
                            if isinstance(sub, ast.Name):
                                roots.add(sub.id)
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            read = names_in(stmt.value)
            if isinstance(stmt, ast.AugAssign):
                read |= names_in(stmt.target)
            for target in targets:
                for name in names_in(target):
                    depends.setdefault(name, set()).update(read)
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            for name in names_in(stmt.target):
                depends.setdefault(name, set()).update(names_in(stmt.iter))
        for node in walruses:
            depends.setdefault(node.target.id, set()).update(names_in(node.value))
    reach, todo = set(roots), list(roots)
    while todo:
        for name in depends.get(todo.pop(), ()):
            if name not in reach:
                reach.add(name)
                todo.append(name)
    return reach, inside


def _may_reach(flow: KernelFlow, load: Access, statement_of: dict[int, ast.stmt], reach: set[str],
               inside: set[int]) -> bool:
    """Whether `load`'s value may reach a reduction (see `_reaching_reductions`); True where the
    statement holding it is not a plain assignment (conservative)."""
    if id(load.call) in inside:
        return True
    stmt = statement_of.get(id(load.call))
    if not isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        return True
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    return any(name in reach for target in targets for name in names_in(target))


def check(ctx: PythonContext) -> Iterator[Finding]:
    for kernel in ctx.kernels:
        flow = kernel_flow(ctx, kernel)
        loads = [a for a in flow.accesses if a.op == "load" and a.mask is not None and a.other is None
                 and not (isinstance(a.mask, ast.Constant) and a.mask.value is True)]  # mask=True masks nothing
        if not loads:
            continue
        reach, inside = _reaching_reductions(ctx, flow)
        statement_of = {id(node): stmt for stmt in flow.statements()
                        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and stmt.value is not None
                        for node in walk_nodes(stmt.value) if node.__class__ is ast.Call}
        loads = [load for load in loads if _may_reach(flow, load, statement_of, reach, inside)]
        if not loads:
            continue
        sizes = KernelSizes(ctx, kernel, flow)
        scenario = Scenario(_AnyDim(sizes.base_env))
        for load in loads:
            tracker = _Tracker(ctx, flow, load, sizes, scenario)
            tracker.run()
            reached: list[Consumer] = []
            hits: list[tuple[Consumer, ast.expr, str]] = []
            scan_tail = _ScanTail(ctx, flow, tracker)
            for consumer, operand, index, pattern in tracker.consumers:
                if scan_tail.only_valid_lanes(consumer, pattern):
                    continue
                if not _along_masked_axis(sizes, scenario, load, consumer, operand, index, ctx, pattern):
                    continue
                if all(h.call is not consumer.call for h in reached):
                    reached.append(consumer)
                why = _hazard(ctx, consumer)
                if why is not None and all(h.call is not consumer.call for h, _, _ in hits):
                    hits.append((consumer, operand, why))
            if not hits:
                continue  # 0 (what every GPU returns on masked lanes) is neutral for every use
            choice = _filler(reached)
            hit_consumers = [h for h, _, _ in hits]
            fixes: list[Fix] = []
            if choice is not None and choice[1] and _repairs(choice[0], hit_consumers):
                fixes.append(_fix(ctx, load, choice[0], True))
                advice = f"add `other={choice[0]}`"
            else:
                where = _where_fix(ctx, flow, kernel.node, load, [(h, o) for h, o, _ in hits])
                if where is not None:
                    fixes.append(where)
                advice = ("no `other=` repairs every use: wrap the term in `tl.where(mask, ..., 0.0)` "
                          "(for a max, `-inf`; for a min, `inf`)")
            reasons = "; ".join(dict.fromkeys(why for _, _, why in hits))
            message = f"masked `tl.load` without `other=`: {reasons}; {advice}"
            yield ctx.finding(load.call, message, fixes)
