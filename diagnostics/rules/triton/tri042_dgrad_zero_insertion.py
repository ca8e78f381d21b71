"""TRI042 dgrad-zero-insertion: a conv's input gradient computed as one GEMM over the output gradient
with zeros inserted between its pixels (stride > 1).

Recognised in host code, all three in one function:
* a buffer made by ``torch.zeros`` / ``torch.zeros_like`` / ``.new_zeros``;
* written at stride-spaced positions: a subscript store whose index holds ``i * stride...`` or a
  slice stepped by ``stride...`` (a name or attribute with "stride" in it), the output gradient
  spread out with stride - 1 zeros between pixels;
* passed to a Triton kernel launch (``kernel[grid](..., buffer, ...)``).

That launch is one implicit GEMM whose K loop walks every filter tap over every position of the
spread-out gradient: at stride s, (s*s - 1)/(s*s) of its multiply-adds read inserted zeros (3/4 at
stride 2), and the buffer itself is s*s times the gradient's size, written and read once more.
Quiet where the stride is not a name that says so (no guess at what a spacing means).
"""
from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Finding, Severity
from tritonify.diagnostics.registry import Rule

RULE = Rule(
    code="TRI042",
    name="dgrad-zero-insertion",
    summary="conv input gradient as one GEMM over a zero-stuffed output gradient (stride > 1)",
    severity=Severity.WARNING,
    language="python-host",
    # Opt-in since round 5 of the real-world study (labelled blind): 1 TP of 3; the two NOISE are
    # flag-gems' Kunlunxin and MThreads backend copies of the same conv2d backward.
    default=False,
)

_ZEROS = {"zeros", "zeros_like", "new_zeros"}


# A call of a subscript (`kernel[grid](`): `]`, then blanks, line continuations, closing brackets or
# comments, then `(`. Without one nothing is launched, so nothing can fire.
_GAP = r"[\s\\)]*(?:#[^\n]*\n[\s\\)]*)*"
_SUBSCRIPT_CALL = re.compile(r"\]" + _GAP + r"\(")
# A call of `zeros`, `zeros_like` or `new_zeros` (the only buffers the rule reads), the same gap allowed.
_ZEROS_CALL = re.compile(r"(?<!\w)(?:new_)?zeros(?:_like)?" + _GAP + r"\(")


def may_fire(text: str) -> bool:
    return ("zeros" in text and "stride" in text and _ZEROS_CALL.search(text) is not None
            and _SUBSCRIPT_CALL.search(text) is not None)


def _says_stride(node: ast.AST) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and "stride" in sub.id.lower():
            return True
        if isinstance(sub, ast.Attribute) and "stride" in sub.attr.lower():
            return True
    return False


def _spread_index(index: ast.expr) -> bool:
    """An index that places values stride apart: ``i * stride_h`` or ``::stride_h``."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    for part in parts:
        if isinstance(part, ast.Slice) and part.step is not None and _says_stride(part.step):
            return True
        if isinstance(part, ast.BinOp) and isinstance(part.op, ast.Mult) and (
                _says_stride(part.left) or _says_stride(part.right)):
            return True
    return False


def _is_zeros_buffer(ctx: PythonContext, node: ast.AST) -> bool:
    """`name = torch.zeros(...)` (or `zeros_like`, `.new_zeros`): one statement that makes a buffer."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
            and isinstance(node.value, ast.Call):
        f = node.value.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if name in _ZEROS:
            return name == "new_zeros" or (ctx.imports.resolve(f) or "").startswith("torch.")
    return False


def _zeros_buffers(ctx: PythonContext, func: ast.FunctionDef) -> dict[str, ast.Assign]:
    found = {}
    for node in ctx.walk(func):
        if _is_zeros_buffer(ctx, node):
            found.setdefault(node.targets[0].id, node)
    return found


def _launched(ctx: PythonContext, func: ast.FunctionDef, name: str) -> bool:
    for node in ctx.walk(func):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):
            if any(isinstance(a, ast.Name) and a.id == name for a in node.args):
                return True
    return False


def check(ctx: PythonContext) -> Iterator[Finding]:
    # The screen: a function has a buffer only where the module has one (one walk of the module,
    # not one walk per function, nested functions included).
    if "zeros" not in ctx.source.text:
        return   # every name in _ZEROS spells it
    if not any(n.__class__ is ast.Assign and _is_zeros_buffer(ctx, n) for n in ctx.module_nodes):
        return
    for func in (n for n in ctx.module_nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        buffers = _zeros_buffers(ctx, func)
        if not buffers:
            continue
        reported = set()
        for node in ctx.walk(func):
            if not isinstance(node, ast.Assign):
                continue
            for target in node.targets:
                if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                        and target.value.id in buffers and target.value.id not in reported \
                        and _spread_index(target.slice) and _launched(ctx, func, target.value.id):
                    reported.add(target.value.id)
                    yield ctx.finding(
                        node,
                        f"`{target.value.id}` spreads the output gradient stride apart with zeros between pixels and "
                        "feeds one conv GEMM: at stride 2, 3/4 of its multiply-adds read inserted zeros; compute dgrad "
                        "as stride_h x stride_w subproblems, one per input phase with only the taps that reach it")
