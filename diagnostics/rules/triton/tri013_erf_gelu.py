"""TRI013 erf-gelu: exact erf-GELU in a kernel where the tanh/sigmoid form would do.

`0.5 * x * (1 + erf(x * 0.7071...))` calls libdevice's `erff` (a polynomial with a branch, a
dozen or more instructions). The tanh approximation written as a sigmoid,
`x * sigmoid(1.5957691 * x * (1 + 0.044715 * x * x))`, needs one `ex2` and one reciprocal and
stays within 4.8e-4 (absolute) of the exact GELU. Whether that error is acceptable is the model's
call (BERT/ViT checkpoints were trained with exact GELU; GPT-2 style models with the tanh form),
so this is information only and the rewrite is offered as an unsafe fix.

Only the GELU shape fires: `erf(x * 1/sqrt(2))` (or `x / sqrt(2)`) inside `1 + erf(...)` in a
product with `0.5` and the same `x`, directly or through a local (`cdf = 0.5 * (1 + erf(..))`,
`y = x * cdf`). A bare normal CDF, or GELU's backward, stays quiet.

Opt-in (`default=False`): the rewrite changes the model's numerics, and in the real-world study
the exact GELU was the model's specified activation in a memory-bound kernel (where the erf cost
hides behind the loads). Select TRI013 to look for candidates. Only where the code targets NVIDIA
or an unknown target (`ctx.target`).
"""
from __future__ import annotations

import ast
import math
from typing import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Applicability, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._precision import numeric_value, tl_alias
from tritonify.diagnostics.triton_ast import TL, Kernel, libdevice_name

RULE = Rule(
    code="TRI013",
    name="erf-gelu",
    summary="exact erf-GELU where the cheaper tanh/sigmoid form may do",
    severity=Severity.INFO,
    fixable=True, safe_fix=False,
    default=False,
)

INV_SQRT2 = 1 / math.sqrt(2)
SQRT2 = math.sqrt(2)


def _is_erf(ctx: PythonContext, func: ast.expr) -> bool:
    if libdevice_name(ctx.imports, func) == "erf":
        return True
    return (ctx.imports.resolve(func) or "") in (f"{TL}.erf", f"{TL}.math.erf")


def _constants(ctx: PythonContext, kernel: Kernel) -> dict[str, float]:
    """Names bound to numbers at module level or in the kernel (`SQRT1_2 = 0.7071...`,
    `INV_SQRT2: tl.constexpr = ...`, `X = tl.constexpr(0.7071...)`)."""
    out: dict[str, float] = {}
    for stmt in [*ctx.tree.body, *kernel.walk()]:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name, value = stmt.targets[0].id, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            name, value = stmt.target.id, stmt.value
        else:
            continue
        if isinstance(value, ast.Call) and (ctx.imports.resolve(value.func) or "").endswith("constexpr") and value.args:
            value = value.args[0]
        number = numeric_value(value)
        if number is not None:
            out[name] = number
    return out


def _value(node: ast.AST, constants: dict[str, float]) -> float | None:
    number = numeric_value(node)
    if number is None and isinstance(node, ast.Name):
        number = constants.get(node.id)
    return number


def _close(a: float | None, b: float) -> bool:
    return a is not None and abs(a - b) <= 1e-4 * b


def _scaled_operand(arg: ast.AST, constants: dict[str, float]) -> ast.AST | None:
    """`x` when `arg` is `x * 0.7071..`, `0.7071.. * x` or `x / 1.4142..`."""
    if not isinstance(arg, ast.BinOp):
        return None
    if isinstance(arg.op, ast.Mult):
        if _close(_value(arg.right, constants), INV_SQRT2):
            return arg.left
        if _close(_value(arg.left, constants), INV_SQRT2):
            return arg.right
    if isinstance(arg.op, ast.Div) and _close(_value(arg.right, constants), SQRT2):
        return arg.left
    return None


def _factors(node: ast.AST) -> list[ast.AST]:
    """Operands of a chain of multiplications (parentheses ignored)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _factors(node.left) + _factors(node.right)
    return [node]


def _product_root(ctx: PythonContext, node: ast.AST) -> ast.AST:
    """The outermost multiplication chain `node` is a factor of."""
    root = node
    parent = ctx.parents.get(root)
    while isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Mult):
        root, parent = parent, ctx.parents.get(parent)
    return root


def _one_plus(ctx: PythonContext, call: ast.Call) -> ast.AST | None:
    """The `1 + erf(...)` node around the call, if that is how it is used."""
    parent = ctx.parents.get(call)
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Add):
        other = parent.left if parent.right is call else parent.right
        if numeric_value(other) == 1.0:
            return parent
    return None


def _gelu_site(ctx: PythonContext, kernel: Kernel, call: ast.Call, x: ast.AST, one_plus: ast.AST):
    """(node to rewrite or None, other factors) when the erf is part of a GELU of `x`."""
    x_text = ctx.segment(x)
    root = _product_root(ctx, one_plus)
    factors = _factors(root)
    halves = [f for f in factors if numeric_value(f) == 0.5]
    xs = [f for f in factors if ctx.segment(f) == x_text]
    if halves and xs:
        rest = [f for f in factors if f is not one_plus and f is not halves[0] and f is not xs[0]]
        return root, rest
    if halves and len(factors) == 2:
        # `cdf = 0.5 * (1 + erf(x * 0.7071))` ... `y = x * cdf`: GELU through a local.
        stmt = ctx.parents.get(root)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            local = stmt.targets[0].id
            for node in kernel.walk():
                if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
                    sides = {ctx.segment(node.left), ctx.segment(node.right)}
                    if sides == {local, x_text}:
                        return None, []
    return False, []


def _sigmoid_form(tl: str, x: str) -> str:
    return f"{x} * {tl}.sigmoid(1.5957691 * {x} * (1 + 0.044715 * {x} * {x}))"


def _atom(ctx: PythonContext, node: ast.AST) -> str:
    text = ctx.segment(node)
    if isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)):
        return text
    return f"({text})"


def check(ctx: PythonContext) -> Iterator[Finding]:
    for kernel in ctx.kernels:
        constants = None
        for call in kernel.calls():
            if not (_is_erf(ctx, call.func) and len(call.args) == 1):
                continue
            constants = constants if constants is not None else _constants(ctx, kernel)
            x = _scaled_operand(call.args[0], constants)
            one_plus = _one_plus(ctx, call) if x is not None else None
            if one_plus is None:
                continue
            site, rest = _gelu_site(ctx, kernel, call, x, one_plus)
            if site is False or not ctx.target.nvidia(call):
                continue
            tl = tl_alias(ctx)
            x_atom = _atom(ctx, x)
            fixes = []
            if site is not None:
                text = " * ".join([_sigmoid_form(tl, x_atom), *(_atom(ctx, f) for f in rest)])
                fixes.append(Fix(
                    title="Use the tanh-approximate GELU in sigmoid form (abs error <= 4.8e-4)",
                    edits=(ctx.replace_expr(site, text),),
                    applicability=Applicability.UNSAFE,
                ))
            yield ctx.finding(
                call,
                "exact erf-GELU: if the model tolerates the tanh approximation, "
                f"`{_sigmoid_form(tl, 'x')}` is cheaper (one exp, no erf polynomial) and within ~5e-4 of exact",
                fixes,
            )
