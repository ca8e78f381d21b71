"""TRI043 nchw-indexed-as-nhwc: a kernel that flattens a tensor's offset as NHWC, ``((n*H + y)*W + x)*C + c``,
launched on a tensor whose launch site shows NCHW memory.

Recognised with the launch site, all in the launching function:
* the tensor is unpacked as NCHW, ``N, C, H, W = x.shape`` (any four names), and its memory is the
  default (contiguous NCHW): ``x = <...>.contiguous()`` with no ``memory_format``, a
  ``torch.empty/zeros/ones/randn/rand`` of four sizes without ``memory_format``, or ``x.contiguous()``
  written in the launch itself; no ``channels_last``, ``permute`` or ``memory_format`` in the function;
* ``x`` goes to pointer parameter ``P`` and the unpacked W and C go to parameters ``Wp`` and ``Cp``;
* inside the kernel, an offset added to ``P`` (directly or through one local name) multiplies by ``Cp``
  a sum that multiplies by ``Wp``: ``(... * Wp + ...) * Cp``, the NHWC pixel offset, where NCHW memory
  needs ``((n*C + c)*H + y)*W + x``.
Then each lane reads a value C*H*W-scrambled: channel c of pixel p is read from another channel and
pixel. Quiet where any part is not shown (a caller's tensor may be channels_last: NHWC memory).
"""
from __future__ import annotations

import ast
from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Finding, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._kernel_flow import bindings
from tritonify.diagnostics.rules.triton._launch_sites import launches

RULE = Rule(
    code="TRI043",
    name="nchw-indexed-as-nhwc",
    summary="kernel indexes a tensor as NHWC where the launch site shows NCHW memory",
    severity=Severity.ERROR,
    # Opt-in: no finding on the real-world corpus to measure it by (benchmarks/realworld/labels/round3_conv.csv)
    default=False,
)

_FACTORIES = {"empty", "zeros", "ones", "randn", "rand"}


def _nchw_unpack(host: ast.FunctionDef, name: str) -> tuple[str, str] | None:
    """(C name, W name) from ``N, C, H, W = name.shape`` in ``host``."""
    for node in ast.walk(host):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple) \
                and len(node.targets[0].elts) == 4 and all(isinstance(e, ast.Name) for e in node.targets[0].elts) \
                and isinstance(node.value, ast.Attribute) and node.value.attr == "shape" \
                and isinstance(node.value.value, ast.Name) and node.value.value.id == name:
            elts = node.targets[0].elts
            return elts[1].id, elts[3].id
    return None


def _nchw_memory(ctx: PythonContext, host: ast.FunctionDef, arg: ast.expr) -> str | None:
    """The tensor's name when the function shows it is contiguous NCHW memory, else None."""
    text = ctx.segment(host)
    if "channels_last" in text or "memory_format" in text or "permute" in text:
        return None
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr == "contiguous" \
            and not arg.args and not arg.keywords and isinstance(arg.func.value, ast.Name):
        return arg.func.value.id
    if not isinstance(arg, ast.Name):
        return None
    bound = [n for n in ast.walk(host) if isinstance(n, ast.Assign)
             and any(isinstance(t, ast.Name) and t.id == arg.id for t in n.targets)]
    if len(bound) != 1 or not isinstance(bound[0].value, ast.Call):
        return None
    call = bound[0].value
    if isinstance(call.func, ast.Attribute) and call.func.attr == "contiguous" and not call.args and not call.keywords:
        return arg.id
    path = ctx.imports.resolve(call.func) or ""
    if path.startswith("torch.") and path.rsplit(".", 1)[-1] in _FACTORIES and len(call.args) == 4:
        return arg.id
    return None


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _nhwc_offset(expr: ast.AST, c_param: str, w_param: str) -> bool:
    """``(... * Wp + ...) * Cp`` somewhere in ``expr`` (either operand order, broadcasts allowed)."""
    for node in ast.walk(expr):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            for side, other in ((node.left, node.right), (node.right, node.left)):
                if _is_name(side, c_param) and _sum_times(other, w_param):
                    return True
    return False


def _sum_times(expr: ast.AST, w_param: str) -> bool:
    while (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "to") \
            or isinstance(expr, ast.Subscript):
        expr = expr.func.value if isinstance(expr, ast.Call) else expr.value  # (...).to(tl.int64), (...)[:, None]
    if not (isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add)):
        return False
    for node in (expr.left, expr.right):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and (
                _is_name(node.left, w_param) or _is_name(node.right, w_param)):
            return True
    return False


def _pointer_offsets(kernel, pointer: str) -> list[ast.AST]:
    """Expressions added to ``pointer`` in the kernel (``pointer + off``), each with the local names it uses
    expanded one level."""
    local = bindings(kernel)
    out = []
    for node in kernel.walk():
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            for side, other in ((node.left, node.right), (node.right, node.left)):
                if _is_name(side, pointer):
                    out.append(other)
                    for name in {n.id for n in ast.walk(other) if isinstance(n, ast.Name)}:
                        out += [b.value for b in local.get(name, [])]
    return out


def check(ctx: PythonContext) -> Iterator[Finding]:
    for kernel in ctx.kernels:
        for launch in launches(ctx, kernel):
            if launch.host is None:
                continue
            for pointer, arg in launch.args.items():
                tensor = _nchw_memory(ctx, launch.host, arg)
                if tensor is None:
                    continue
                names = _nchw_unpack(launch.host, tensor)
                if names is None:
                    continue
                c_host, w_host = names
                c_param = next((p for p, a in launch.args.items() if _is_name(a, c_host)), None)
                w_param = next((p for p, a in launch.args.items() if _is_name(a, w_host)), None)
                if c_param is None or w_param is None:
                    continue
                if any(_nhwc_offset(off, c_param, w_param) for off in _pointer_offsets(kernel, pointer)):
                    yield ctx.finding(
                        arg,
                        f"`{tensor}` is NCHW here (`{tensor}.shape` unpacked as N, C, H, W, contiguous memory) but "
                        f"`{kernel.node.name}` indexes `{pointer}` as NHWC (`(... * {w_param} + ...) * {c_param}`): every "
                        f"lane reads another channel and pixel; pass `{tensor}.permute(0, 2, 3, 1).contiguous()` (or a "
                        "channels_last tensor), or index `((n * C + c) * H + y) * W + x`")
