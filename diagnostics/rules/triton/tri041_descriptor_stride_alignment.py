"""TRI041 descriptor-stride-alignment: a TMA tensor descriptor over a tensor whose shape, known at the
call, gives a dimension a stride that is not a multiple of 16 bytes.

Recognised in host code: ``TensorDescriptor.from_tensor(t, ...)`` or ``TensorDescriptor(t, shape,
strides, block_shape)`` (``triton.tools.tensor_descriptor``) where ``t`` is bound once in the same
function to ``torch.empty`` / ``zeros`` / ``ones`` / ``randn`` / ``rand`` / ``full`` with every size an
integer known there (a literal, a module-level
or imported integer constant, or + - * // of those) and the dtype a literal ``torch.<dtype>`` (fp32
when none is given). The tensor is contiguous, so the stride of dimension i is the product of the
sizes after it; a descriptor needs every stride but the last at a multiple of 16 bytes (the copy
engine's rule, asserted by ``TensorDescriptor.__post_init__``: "strides must be 16-byte aligned").
Quiet where any size or the dtype is not known at the call.
"""
from __future__ import annotations

import ast
from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Finding, Severity
from tritonify.diagnostics.registry import Rule

RULE = Rule(
    code="TRI041",
    name="descriptor-stride-alignment",
    summary="TMA tensor descriptor over a tensor whose launch-site shape gives a stride that is not 16-byte aligned",
    severity=Severity.ERROR,
    language="python-host",
    # Opt-in: no finding on the real-world corpus to measure it by (benchmarks/realworld/labels/round3_conv.csv)
    default=False,
)

DESCRIPTOR = "triton.tools.tensor_descriptor.TensorDescriptor"
FACTORIES = {"empty", "zeros", "ones", "randn", "rand", "full"}
ITEMSIZE = {"float32": 4, "float": 4, "float16": 2, "half": 2, "bfloat16": 2, "float64": 8, "double": 8,
            "int8": 1, "uint8": 1, "int16": 2, "int32": 4, "int": 4, "int64": 8, "long": 8,
            "float8_e4m3fn": 1, "float8_e5m2": 1, "float8_e4m3fnuz": 1, "float8_e5m2fnuz": 1, "bool": 1}


def may_fire(text: str) -> bool:
    return "TensorDescriptor" in text


_OPS = {ast.Mult: lambda a, b: a * b, ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
        ast.FloorDiv: lambda a, b: a // b if b else None}


def _scalar(ctx: PythonContext, node: ast.expr) -> bool:
    """A number known where the tensor is made (a literal, a known integer, arithmetic of those): an
    operand that cannot change a tensor's shape by broadcasting."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp):
        return _scalar(ctx, node.operand)
    if isinstance(node, ast.BinOp):
        return _scalar(ctx, node.left) and _scalar(ctx, node.right)
    return isinstance(node, ast.Name) and _int(ctx, node) is not None


def _module_int(ctx: PythonContext, name: str) -> int | None:
    """A module-level ``NAME = <int>`` (or ``A, B = <int>, <int>``), assigned once."""
    values = []
    for stmt in ctx.tree.body:
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
            continue
        target, value = stmt.targets[0], stmt.value
        pairs = (zip(target.elts, value.elts) if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)
                 and len(target.elts) == len(value.elts) else [(target, value)])
        values += [v for t, v in pairs if isinstance(t, ast.Name) and t.id == name]
    if len(values) == 1 and isinstance(values[0], ast.Constant) and type(values[0].value) is int:
        return values[0].value
    return None


def _int(ctx: PythonContext, node: ast.expr) -> int | None:
    """An integer known where the tensor is made: a literal, a module or imported constant, or + - * //
    of those."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        a, b = _int(ctx, node.left), _int(ctx, node.right)
        return None if a is None or b is None else _OPS[type(node.op)](a, b)
    if isinstance(node, ast.Name):
        value = ctx.imports.constant(node)  # an imported literal
        if isinstance(value, ast.Constant) and type(value.value) is int:
            return value.value
        return _module_int(ctx, node.id)
    return None


def _made_here(ctx: PythonContext, func: ast.AST, name: str) -> tuple[list[int], int] | None:
    """(sizes, itemsize) of ``name`` when it is bound once in ``func`` to a torch factory of literal sizes."""
    bound = [n for n in ctx.walk(func) if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.With))
             and any(isinstance(t, ast.Name) and t.id == name for t in _targets(n))]
    if len(bound) != 1 or not isinstance(bound[0], ast.Assign):
        return None
    call = bound[0].value
    while isinstance(call, ast.BinOp) and _scalar(ctx, call.right):  # torch.randn(...) / scale: same shape
        call = call.left
    if not isinstance(call, ast.Call):
        return None
    path = ctx.imports.resolve(call.func) or ""
    if not path.startswith("torch.") or path.rsplit(".", 1)[-1] not in FACTORIES:
        return None
    args = call.args[:-1] if path.endswith(".full") else call.args
    if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
        args = args[0].elts
    sizes = [_int(ctx, a) for a in args]
    if not sizes or any(s is None for s in sizes):
        return None
    dtype = next((k.value for k in call.keywords if k.arg == "dtype"), None)
    if dtype is None:
        itemsize = 4
    else:
        dpath = ctx.imports.resolve(dtype) or ""
        if not dpath.startswith("torch.") or dpath[len("torch."):] not in ITEMSIZE:
            return None
        itemsize = ITEMSIZE[dpath[len("torch."):]]
    return sizes, itemsize


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        out = []
        for t in node.targets:
            out += t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]
        return out
    if isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For)):
        return [node.target]
    if isinstance(node, ast.With):
        return [i.optional_vars for i in node.items if i.optional_vars is not None]
    return []


def _tensor_arg(call: ast.Call) -> ast.expr | None:
    for k in call.keywords:
        if k.arg in ("tensor", "base"):
            return k.value
    return call.args[0] if call.args else None


def check(ctx: PythonContext) -> Iterator[Finding]:
    for func in (n for n in ctx.module_nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        for call in (n for n in ctx.walk(func) if isinstance(n, ast.Call)):
            path = ctx.imports.resolve(call.func) or ""
            if path not in (DESCRIPTOR, DESCRIPTOR + ".from_tensor"):
                continue
            if path == DESCRIPTOR and len(call.args) + len(call.keywords) >= 3:
                strides = call.args[2] if len(call.args) > 2 else next((k.value for k in call.keywords if k.arg == "strides"), None)
                if strides is not None and ".stride()" not in ctx.segment(strides):
                    continue  # strides written out: not the tensor's own, not decided here
            tensor = _tensor_arg(call)
            if not isinstance(tensor, ast.Name):
                continue
            made = _made_here(ctx, func, tensor.id)
            if made is None:
                continue
            sizes, itemsize = made
            for dim in range(len(sizes) - 1):
                stride = 1
                for s in sizes[dim + 1:]:
                    stride *= s
                if stride * itemsize % 16:
                    yield ctx.finding(
                        call,
                        f"`{tensor.id}` is {'x'.join(map(str, sizes))} of {itemsize}-byte elements: dimension {dim}'s stride is "
                        f"{stride} elements = {stride * itemsize} bytes, not a multiple of 16, which a TMA descriptor requires "
                        f"(TensorDescriptor asserts); pad the last dimension to a multiple of {16 // itemsize if itemsize < 16 else 1} "
                        "elements and slice the view")
                    break
