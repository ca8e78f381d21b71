"""TRI027 unsupported-tensor-operator: Python operators and indexing a Triton tensor does not have.

Inside a kernel a run-time value is a `tl.tensor`, and only some Python syntax maps onto it:

- `x ** 2`: `tl.tensor` has no `__pow__` (up to the newest Triton recorded in
  `diagnostics/triton_api/api.json`): write `x * x`, or `libdevice.pow(x, y)`;
- `x[0]`, `x[i]`, `x[1:3]` on a block: only `None` and a bare `:` may index a block
  ("unsupported tensor index"); use `tl.sum(tl.where(offs == i, x, 0), 0)` or load the element;
- `x[i] = v` on a block: no item assignment (`__setitem__ is not supported`); build the block
  with `tl.where`;
- `t[i]` on a tuple parameter (a shape passed as `x.shape`) with a run-time index `i` (a `range`
  loop variable): a tuple is indexed at compile time only; loop with `tl.static_range`;
- `a < b < c` with a run-time operand, in the Triton versions that reject it ("simultaneous
  multiple comparison is not supported", before 3.7): write `(a < b) & (b < c)`;
- `len(x)`, `float(x)`, `int(x)` of a run-time tensor;
- `x_ptr.shape[0]` on a pointer or scalar (its shape is `()` in the kernel: "list index out of range");
- `p[i]` on a pointer or scalar (`tl.load(p + i)` is meant: "Did you forget to add @triton.jit ?").

Whether a value is a tensor, a block or a constexpr comes from the type inference (`_types.py`);
unknown values are left alone.
"""
from __future__ import annotations

import ast
from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Applicability, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._types import typed_kernels
from tritonify.diagnostics.triton_api import for_version

RULE = Rule(
    code="TRI027",
    name="unsupported-tensor-operator",
    summary="Python operator, indexing or builtin that a Triton tensor does not support",
    severity=Severity.ERROR,
    fixable=True,
    compile_break=True,
)


def _simple(node: ast.expr) -> bool:
    return isinstance(node, (ast.Name, ast.Constant)) or (
        isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name))


def _bad_index(node: ast.expr) -> bool:
    parts = node.elts if isinstance(node, ast.Tuple) else [node]
    for part in parts:
        if isinstance(part, ast.Constant) and part.value is None:
            continue
        if isinstance(part, ast.Slice) and part.lower is None and part.upper is None and part.step is None:
            continue
        return True
    return False


# the node classes a finding can be on: every other node of a kernel is passed over at once
_EXAMINED = frozenset({ast.BinOp, ast.Subscript, ast.Compare, ast.Call})


def check(ctx: PythonContext) -> Iterator[Finding]:
    api = for_version()
    for kernel, types in typed_kernels(ctx):
        loop_iters = {id(n.iter) for n in kernel.nodes if isinstance(n, ast.For)}
        for node in kernel.nodes:
            if node.__class__ not in _EXAMINED:
                continue   # (parsed nodes are never subclasses)
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and "__pow__" not in api.tensor_methods:
                left, right = types.of(node.left), types.of(node.right)
                if left.is_runtime or right.is_runtime:
                    fixes = []
                    if isinstance(node.right, ast.Constant) and node.right.value == 2 and _simple(node.left):
                        base = ast.unparse(node.left)
                        fixes.append(Fix(title=f"Write `{base} * {base}`",
                                         edits=(ctx.replace_expr(node, f"{base} * {base}"),),
                                         applicability=Applicability.SAFE))
                    yield ctx.finding(node, f"`{ast.unparse(node)}`: a Triton tensor has no `**` (Triton "
                                            f"{api.version}); write `x * x` for a square, or "
                                            "`libdevice.pow(x, y)` (`from triton.language.extra import libdevice`)",
                                      fixes)
            elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) \
                    and node.value.attr == "shape" and types.of(node.value.value).is_runtime \
                    and types.of(node.value.value).block is False:
                base = ast.unparse(node.value.value)
                what = "a pointer" if types.of(node.value.value).kind == "pointer" else "a scalar"
                yield ctx.finding(node, f"`{ast.unparse(node)}`: `{base}` is {what}, whose shape is `()` inside a "
                                        "kernel (\"list index out of range\"); pass the size as an argument")
            elif isinstance(node, ast.Subscript):
                value = types.of(node.value)
                if value.block is True and not value.constexpr and value.kind != "tuple" and _bad_index(node.slice):
                    if isinstance(node.ctx, ast.Store):
                        message = (f"`{ast.unparse(node)} = ...`: a Triton block has no item assignment; build "
                                   "the new block with `tl.where(offs == i, v, x)`")
                    else:
                        message = (f"`{ast.unparse(node)}`: a Triton block can be indexed only with `None` and "
                                   "`:` (\"unsupported tensor index\"); select with "
                                   "`tl.sum(tl.where(offs == i, x, 0), axis=0)` or load the element itself")
                    yield ctx.finding(node, message)
                elif not isinstance(node.ctx, ast.Store) and value.is_runtime and value.block is False \
                        and _bad_index(node.slice):
                    what = "a pointer" if value.kind == "pointer" else "a Triton scalar"
                    hint = (f"load the element: `tl.load({ast.unparse(node.value)} + {ast.unparse(node.slice)})`"
                            if value.kind == "pointer" else "a scalar has no elements")
                    yield ctx.finding(node, f"`{ast.unparse(node)}`: `{ast.unparse(node.value)}` is {what}, which "
                                            "cannot be indexed inside a kernel (\"Did you forget to add "
                                            f"@triton.jit ?\"); {hint}")
                elif isinstance(node.ctx, ast.Store) and value.is_runtime and value.block is False:
                    yield ctx.finding(node, f"`{ast.unparse(node)} = ...`: `{ast.unparse(node.value)}` is a "
                                            "Triton scalar, which has no item assignment; store through a pointer "
                                            "with `tl.store(ptr + i, v)`")
                elif value.kind == "tuple" and not isinstance(node.ctx, ast.Store):
                    index = types.of(node.slice)
                    if index.is_runtime and index.block is False:
                        yield ctx.finding(node, f"`{ast.unparse(node)}`: `{ast.unparse(node.value)}` is a tuple, "
                                                f"indexed only at compile time, and `{ast.unparse(node.slice)}` is a "
                                                "run-time value; loop with `tl.static_range` (or pass the "
                                                "sizes as separate arguments)")
            elif isinstance(node, ast.Compare) and len(node.ops) > 1 \
                    and not api.features.get("chained_comparison", True):
                parts = [node.left, *node.comparators]
                if any(types.of(p).is_runtime for p in parts):
                    fixes = []
                    if all(_simple(p) or isinstance(p, (ast.BinOp, ast.Call)) for p in parts[1:-1]):
                        texts = [ast.unparse(p) for p in parts]
                        ops = [ast.unparse(ast.Compare(left=ast.Name("a"), ops=[op],
                                                       comparators=[ast.Name("b")]))[2:-2] for op in node.ops]
                        pieces = [f"({texts[i]} {ops[i]} {texts[i + 1]})" for i in range(len(ops))]
                        fixes.append(Fix(title="Split into `&`-joined comparisons",
                                         edits=(ctx.replace_expr(node, " & ".join(pieces)),),
                                         applicability=Applicability.SAFE))
                    yield ctx.finding(node, f"`{ast.unparse(node)}`: Triton {api.version} rejects a chained "
                                            "comparison of run-time values (\"simultaneous multiple comparison is "
                                            "not supported\"); write `(a < b) & (b < c)`", fixes)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range" \
                    and id(node) not in loop_iters \
                    and any(types.of(a).is_runtime for a in node.args) and "range" not in kernel.param_names:
                yield ctx.finding(node, f"`{ast.unparse(node)}` outside a `for` statement is Python's range, "
                                        "which needs Python ints, and gets a Triton run-time value; loop with "
                                        "`for i in range(...)` directly (a list cannot hold run-time values)")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 1 \
                    and node.func.id in ("len", "float", "int") and node.func.id not in kernel.param_names:
                arg = types.of(node.args[0])
                if node.func.id == "len" and arg.is_runtime:
                    yield ctx.finding(node, f"`{ast.unparse(node)}`: a Triton tensor has no `len()`; use the "
                                            "`tl.constexpr` size it was made with (or pass the length)")
                elif node.func.id in ("float", "int") and arg.is_runtime:
                    target = "tl.float32" if node.func.id == "float" else "tl.int32"
                    yield ctx.finding(node, f"`{ast.unparse(node)}`: a Triton tensor cannot be turned into a "
                                            f"Python {node.func.id}; use `.to({target})`")
