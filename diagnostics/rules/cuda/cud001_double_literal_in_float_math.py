"""CUD001 double-literal-in-float-math: `x * 0.7978845608 + 1.0` with `float x` runs in FP64.

C++ gives an unsuffixed floating literal the type `double`, and the usual arithmetic conversions
promote the float operand: the operation, and everything it feeds, runs on the GPU's FP64 units
(1/2 of the FP32 rate on H100/H200, 1/64 on GeForce, L4, L40) with conversions in between.

Precision: nvcc (CUDA 13.0, -O3) folds ONE float operation with a constant that is exactly a
float (0.5, 2.0, 1.0) back to FP32 when the result is stored as float or compared; that case is
not reported. A constant that is not exactly a float (0.1, 1e-5, 0.7978845608), or any chain of
operations, stays in FP64 and is reported. Genuinely double code (double variables, casts to
double, double destinations) is quiet, and so is host code.
"""
from __future__ import annotations

from typing import Iterator

from tritonify.diagnostics.cuda import syntax
from tritonify.diagnostics.cuda.context import CudaContext
from tritonify.diagnostics.cuda.syntax import ARITHMETIC_OPS, COMPARISON_OPS, COMPOUND_ARITHMETIC_OPS
from tritonify.diagnostics.cuda.types import Kind
from tritonify.diagnostics.model import Applicability, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule

RULE = Rule(
    code="CUD001",
    name="double-literal-in-float-math",
    summary="double literal promotes single-precision device arithmetic to FP64",
    severity=Severity.WARNING,
    language="cuda",
    fixable=True,
)

_PASS_THROUGH = ("parenthesized_expression",)


def _constant_root(ctx: CudaContext, leaf):
    """The largest double-constant expression around a literal (`(1.0 / 3.0)`, `-0.5`)."""
    node = leaf
    while node.parent is not None:
        parent = node.parent
        if parent.type in _PASS_THROUGH or (parent.type == "unary_expression" and syntax.operator_of(parent) in ("-", "+")):
            node = parent
            continue
        if parent.type == "binary_expression" and syntax.operator_of(parent) in ARITHMETIC_OPS \
                and ctx.types.kind(parent) == Kind.CONSTANT:
            node = parent
            continue
        call = parent.parent if parent.type == "argument_list" else None
        if call is not None and call.type == "call_expression" and ctx.types.kind(call) == Kind.CONSTANT:
            node = call   # exp(1.0): a double constant too; `exp(1.0f)` picks the float overload
            continue
        break
    return node


def _operation(node):
    """The binary or compound-assignment expression that takes `node` as an operand."""
    parent = node.parent
    if parent is None:
        return None
    if parent.type == "binary_expression":
        return parent
    if parent.type == "assignment_expression" and syntax.operator_of(parent) in COMPOUND_ARITHMETIC_OPS \
            and parent.child_by_field_name("right") == node:
        return parent
    return None


def _other_operand(operation, node):
    left = operation.child_by_field_name("left")
    right = operation.child_by_field_name("right")
    return right if left == node else left


def _single_literal(node):
    node = syntax.unwrap_parentheses(node)
    return node if node is not None and node.type in ("number_literal", "identifier") else None


def _folded_by_nvcc(ctx: CudaContext, constant, operation, other_kind: Kind) -> bool:
    """One float op with an exactly representable constant, narrowed to float right away:
    nvcc -O3 emits FP32 for it (x * 0.5 stored in a float, x > 0.0)."""
    leaf = _single_literal(constant)
    if leaf is None or leaf.type != "number_literal" or other_kind != Kind.FLOAT:
        return False
    value = syntax.classify_number(ctx.text_of(leaf)).value
    if value is None or not syntax.exact_in_float(value):
        return False
    op = syntax.operator_of(operation)
    if operation.type == "assignment_expression":
        return True   # x *= 0.5 with float x: one op, stored as float
    if op in COMPARISON_OPS:
        return True
    return ctx.types.consumer(operation) in ("narrow", "compare", "unknown", "int")


def _leaves(ctx: CudaContext, constant) -> Iterator:
    """The double literals (and double-constant names) inside a constant expression."""
    for node in syntax.walk(constant):
        if node.type == "number_literal" and syntax.classify_number(ctx.text_of(node)).kind == "double":
            yield node
        elif node.type == "identifier" and ctx.types.kind(node) == Kind.CONSTANT:
            yield node


def _reportable(ctx: CudaContext, constant) -> tuple[object, str] | None:
    """(operation, what it computes) when this double constant makes float math run in FP64."""
    operation = _operation(constant)
    if operation is None:
        return None
    op = syntax.operator_of(operation)
    other = _other_operand(operation, constant)
    if operation.type == "assignment_expression":
        other_kind = ctx.types.kind(operation.child_by_field_name("left"))
        if other_kind != Kind.FLOAT:
            return None
    else:
        other_kind = ctx.types.kind(other)
    if op in COMPARISON_OPS:
        if other_kind not in (Kind.FLOAT, Kind.PROMOTED):
            return None
        return (operation, "comparison") if not _folded_by_nvcc(ctx, constant, operation, Kind.FLOAT) else None
    if op not in ARITHMETIC_OPS and op not in COMPOUND_ARITHMETIC_OPS:
        return None
    kind = Kind.PROMOTED if operation.type == "assignment_expression" else ctx.types.kind(operation)
    if kind == Kind.PROMOTED:
        if ctx.types.final_destination(operation) == "double":
            return None   # the author stores the result as double: FP64 is intended
        if _folded_by_nvcc(ctx, constant, operation, other_kind):
            return None
        return operation, "float arithmetic"
    if kind == Kind.INT_DOUBLE:
        top = operation
        while _operation(top) is not None and ctx.types.kind(_operation(top)) == Kind.INT_DOUBLE:
            top = _operation(top)
        above = _operation(top)
        if above is not None and ctx.types.kind(above) == Kind.PROMOTED:
            return operation, "float arithmetic"
        if ctx.types.consumer(top) == "narrow":
            return operation, "arithmetic stored as float"
        return None
    return None


def check(ctx: CudaContext) -> Iterator[Finding]:
    reported: set[int] = set()
    for node in ctx.device_nodes("number_literal", "identifier"):
        if node.type == "identifier" and ctx.types.kind(node) != Kind.CONSTANT:
            continue
        if node.type == "number_literal" and syntax.classify_number(ctx.text_of(node)).kind != "double":
            continue
        if node.id in reported:
            continue
        constant = _constant_root(ctx, node)
        verdict = _reportable(ctx, constant)
        if verdict is None:
            continue
        operation, what = verdict
        expr = " ".join(ctx.text_of(operation).split())
        if len(expr) > 60:
            expr = expr[:57] + "..."
        for leaf in _leaves(ctx, constant):
            reported.add(leaf.id)
            yield _finding(ctx, leaf, expr, what)


def _finding(ctx: CudaContext, leaf, expr: str, what: str) -> Finding:
    text = ctx.text_of(leaf)
    if leaf.type == "number_literal":
        value = syntax.classify_number(text).value
        new = text + "f"
        fix = Fix(
            title=f"Write `{new}` (a float literal)",
            edits=(ctx.insert_after(leaf, "f"),),
            applicability=Applicability.SAFE if value is not None and syntax.float_suffix_is_safe(value) else Applicability.UNSAFE,
        )
        message = (f"double literal `{text}` makes the {what} `{expr}` run in FP64 (1/2 to 1/64 of the FP32 rate); "
                   f"write `{new}`")
    else:
        new = f"static_cast<float>({text})"
        fix = Fix(title=f"Use `{new}`", edits=(ctx.replace(leaf, new),), applicability=Applicability.SAFE)
        message = (f"`{text}` is a double constant: it makes the {what} `{expr}` run in FP64 "
                   f"(1/2 to 1/64 of the FP32 rate); use `{new}` or a float constant")
    return ctx.finding(leaf, message, [fix])
