"""TRI014 masked-load-no-other: a masked `tl.load` without `other=` that feeds a reduction.

Triton's spec leaves masked-off lanes of `tl.load(p, mask=m)` undefined. NVIDIA, AMD and Intel
happen to return 0, which is the right filler for a sum and the wrong one for a max over negative
values (or a min over positive ones); another backend, or a future one, may return anything. The
rule follows the loaded value through assignments and arithmetic (order matters: a rebinding
`x = tl.where(mask, x, 0.0)` cleans it) to `tl.max/min/sum/dot/argmax/argmin/cumsum/reduce`, and
stays quiet when the reduction runs along an axis the mask does not cover (rows masked, columns
reduced: the undefined rows are dropped by the store mask).
"""
from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Applicability, Edit, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._memory_flow import (
    Access,
    KernelFlow,
    kernel_flow,
)
from tritonify.diagnostics.rules.triton._static_sizes import KernelSizes, Scenario
from tritonify.diagnostics.triton_ast import child_nodes, keyword, tl_name, walk_nodes

RULE = Rule(
    code="TRI014",
    name="masked-load-no-other",
    summary="masked tl.load without other= whose value feeds a reduction",
    severity=Severity.WARNING,
    fixable=True,
    # Opt-in: round 1 of the real-world study found 10 of 15 sampled findings real (67%): masked
    # lanes that stay in rows a `tl.dot` never mixes and are never stored, the tail of an inclusive
    # scan, or a product whose partner is zeroed on the same lanes are reported too.
    # Opt-in: 31 of 46 findings were true positives in round 2 of the real-world study
    # (benchmarks/realworld/labels/round2_*.csv), under the 90% the default set requires.
    default=False,
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


class _Tracker:
    """Follows one masked load through the kernel's statements in order."""

    def __init__(self, ctx: PythonContext, flow: KernelFlow, load: Access):
        self.ctx = ctx
        self.flow = flow
        self.load = load
        self.mask_names = {n.id for n in walk_nodes(load.mask) if isinstance(n, ast.Name)} if load.mask else set()
        self.tainted: dict[str, str] = {}
        self.consumers: list[tuple[Consumer, ast.expr, int]] = []  # (consumer, operand, operand index)

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
            if isinstance(expr.op, (ast.Add, ast.Sub)):
                return _combine([left, right])       # x - m, x + bias: a shift keeps the order
            if isinstance(expr.op, (ast.Mult, ast.Div)) and right is None and _positive_constant(expr.right):
                return left                          # x * 0.5, x / 2
            if isinstance(expr.op, ast.Mult) and left is None and _positive_constant(expr.left):
                return right
            return MIXED
        if isinstance(expr, ast.Subscript):
            return self.label(expr.value)            # x[:, None]
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
            if lab:
                self.consumers.append((Consumer(call, kind, lab), operand, index))

    def _assign(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Assign):
            lab = self.label(stmt.value)
            for target in stmt.targets:
                self._bind(target, lab)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self._bind(stmt.target, self.label(stmt.value))
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            lab = _combine([self.label(stmt.value), self.tainted.get(stmt.target.id)])
            if lab:
                self.tainted[stmt.target.id] = lab

    def _bind(self, target: ast.AST, lab: str | None) -> None:
        if isinstance(target, ast.Name):
            if lab:
                self.tainted[target.id] = lab
            else:
                self.tainted.pop(target.id, None)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._bind(elt, lab)


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
                       operand: ast.expr, index: int, ctx: PythonContext) -> bool:
    axes = _masked_axes(sizes, scenario, load.mask, operand)  # type: ignore[arg-type]
    if axes is None:
        return True  # cannot tell: the spec says undefined, so report it
    rank = len(sizes.shape(operand, scenario) or ())
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


def _filler(consumers: list[Consumer]) -> tuple[str, bool] | None:
    """(the `other=` value, whether it is a safe fix) for the reductions the value reaches."""
    kinds = {c.kind for c in consumers}
    if "reduce" in kinds or (kinds & MAXIMUM and kinds & MINIMUM):
        return None  # a custom combine function, or both a max and a min: no single identity
    extreme = MAXIMUM if kinds & MAXIMUM else MINIMUM if kinds & MINIMUM else set()
    if not extreme:
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


def _fix(ctx: PythonContext, load: Access, value: str, safe: bool) -> Fix:
    _, _, end_line, end_col = ctx.source.node_range(load.mask)  # type: ignore[arg-type]
    return Fix(
        title=f"Add other={value}",
        edits=(Edit.insert(end_line, end_col, f", other={value}"),),
        applicability=Applicability.SAFE if safe else Applicability.UNSAFE,
    )


def check(ctx: PythonContext) -> Iterator[Finding]:
    for kernel in ctx.kernels:
        flow = kernel_flow(ctx, kernel)
        loads = [a for a in flow.accesses if a.op == "load" and a.mask is not None and a.other is None]
        if not loads:
            continue
        sizes = KernelSizes(ctx, kernel, flow)
        scenario = Scenario(_AnyDim(sizes.base_env))
        for load in loads:
            tracker = _Tracker(ctx, flow, load)
            tracker.run()
            hits: list[Consumer] = []
            for consumer, operand, index in tracker.consumers:
                if _along_masked_axis(sizes, scenario, load, consumer, operand, index, ctx) \
                        and all(h.call is not consumer.call for h in hits):
                    hits.append(consumer)
            if not hits:
                continue
            choice = _filler(hits)
            value, safe = choice if choice is not None else (None, False)
            names = ", ".join(dict.fromkeys(f"`tl.{h.kind}` (line {h.call.lineno})" for h in hits))
            if value is not None and safe:
                advice = f"add `other={value}`"
            elif value is not None:
                advice = (f"add `other={value}` (what GPUs return today; the value reaches the reduction through "
                          "other arithmetic, so an infinite filler could become nan: check that 0 is neutral there)")
            else:
                advice = ("no single `other=` suits every use: pass one and clean the other uses with "
                          "`tl.where(mask, x, <neutral value>)`")
            if {h.kind for h in hits} & (MAXIMUM | MINIMUM):
                why = "today's GPUs fill them with 0, the wrong value for a max over negatives or a min over positives"
            else:
                why = "today's GPUs happen to fill them with 0, but nothing promises it, and one inf or NaN poisons the result"
            message = (
                f"masked `tl.load` without `other=` feeds {names}: masked-off lanes are undefined by the spec "
                f"({why}); {advice}"
            )
            fixes = [_fix(ctx, load, value, safe)] if value is not None else []
            yield ctx.finding(load.call, message, fixes)
