"""TRI015 dot-precision: implicit fp32 `tl.dot` precision, and the deprecated `allow_tf32=`.

An fp32 x fp32 `tl.dot` without `input_precision=` does not run in fp32: on NVIDIA it uses TF32
tensor cores (10-bit mantissa) by default, the default has moved between Triton versions
(triton#9080 made it "tf32x3", later reverted; Triton 3.9's `tl.dot` resolves it to "tf32" on
NVIDIA and "ieee" on AMD except gfx942) and `TRITON_F32_DEFAULT` can change it per process.
Saying it explicitly is the only way the kernel means the same thing everywhere.

Fires only where both operands are fp32 for sure: cast with `.to(tl.float32)`, built with
`tl.zeros(..., dtype=tl.float32)`, a previous `tl.dot` result, or loaded through a pointer whose
tensor the launch site in the same file makes fp32. Unknown dtypes stay quiet; fp16/bf16/fp8/int8
operands are never affected.

Operands that are only values cast up (a load or an unpacked int4/int8 nibble `.to(tl.float32)`
from a dtype not known to be fp32), or 0/1 masks (`tl.where(causal, 1.0, 0.0)`), (`tl.load(p).to(tl.float32)` where `p`'s tensor is not
known to be fp32) do not count: such values come from fp16/bf16 storage, whose every value TF32
holds exactly (10 explicit mantissa bits, fp32's exponent), so the TF32 product is the fp32
product and the precision claim would be false. The cast then only costs time.

`allow_tf32=` (deprecated by triton#3498, still honoured by Triton 3.x) is an explicit choice of
precision: not reported. Renaming it to `input_precision=` changes nothing.

Opt-in (`default=False`): what is left on real code are fp32 dots on computed fp32 values in
libraries that rely on the TF32 default knowingly (fla's kernels, and vLLM's vendored copies);
saying the precision there is a style choice. Select TRI015 when a kernel must mean the same on
every Triton version.

Only where the code targets NVIDIA or an unknown target (`ctx.target`): TF32 tensor cores are
NVIDIA's (AMD gfx942 aside), and NPU/CPU backends run fp32 dots in fp32.
"""
from __future__ import annotations

import ast
from typing import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Applicability, Edit, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._precision import (
    HostDtypes, KernelDtypes, launches, pointer_dtypes,
)
from tritonify.diagnostics.triton_ast import TL, keyword

RULE = Rule(
    code="TRI015",
    name="dot-precision",
    summary="fp32 tl.dot without input_precision= (runs on TF32 tensor cores by default)",
    severity=Severity.INFO,
    fixable=True,
    default=False, safe_fix=False,
)

NOT_FP32 = {"fp16", "bf16", "fp8", "int", "fp64", "bool"}


def _is_dot(ctx: PythonContext, call: ast.Call) -> bool:
    return (ctx.imports.resolve(call.func) or "") == f"{TL}.dot"


def _upcast_load(ctx: PythonContext, types: KernelDtypes, expr: ast.AST, binds: dict, depth: int = 0) -> bool:
    """`expr` is a value cast up to fp32 from a dtype not known to be fp32 (`tl.load(p).to(tl.float32)`,
    `nibbles.to(tl.float32)`, through names and `tl.trans`): its values are fp16/bf16/int values, exact in TF32."""
    if depth > 8:
        return False
    if isinstance(expr, ast.Attribute) and expr.attr in ("T", "mT"):
        return _upcast_load(ctx, types, expr.value, binds, depth + 1)
    if isinstance(expr, ast.Name):
        values = binds.get(expr.id)
        return bool(values) and all(_upcast_load(ctx, types, v, binds, depth + 1) for v in values)
    if not isinstance(expr, ast.Call):
        return False
    func = expr.func
    path = ctx.imports.resolve(func) or ""
    if path in (f"{TL}.trans", f"{TL}.permute", f"{TL}.reshape") and expr.args:
        return _upcast_load(ctx, types, expr.args[0], binds, depth + 1)
    if isinstance(func, ast.Attribute) and func.attr in ("trans", "T"):
        return _upcast_load(ctx, types, func.value, binds, depth + 1)
    if _constant_choice(ctx, expr):
        return True   # `tl.where(causal, 1.0, 0.0)`: a mask of small constants, exact in TF32
    if isinstance(func, ast.Attribute) and func.attr in ("to", "cast") and types.of(expr) == "fp32":
        if _constant_choice(ctx, func.value):
            return True
        inner = func.value
    elif path == f"{TL}.cast" and expr.args and types.of(expr) == "fp32":
        inner = expr.args[0]
    else:
        return False
    # a value that was not fp32 before the cast (fp16/bf16/fp8 storage, small ints unpacked from
    # int4/int8) is exact in TF32; only an fp32 (or fp64) source makes the cast a real fp32 operand
    return types.of(inner) not in ("fp32", "fp64")


def _constant_choice(ctx: PythonContext, expr: ast.AST) -> bool:
    """`tl.where(c, 1.0, 0.0)`: every value is one of a few literals that TF32 holds exactly."""
    if not (isinstance(expr, ast.Call) and (ctx.imports.resolve(expr.func) or "") == f"{TL}.where" and len(expr.args) == 3):
        return False
    return all(isinstance(a, ast.Constant) and isinstance(a.value, (int, float)) and float(a.value) in (0.0, 1.0, -1.0)
               for a in expr.args[1:])


def _value_bindings(kernel) -> dict:
    out: dict = {}
    for node in kernel.walk():
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out.setdefault(t.id, []).append(node.value)
        elif isinstance(node, (ast.AugAssign, ast.For)) and isinstance(node.target, ast.Name):
            out.setdefault(node.target.id, []).append(None)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            out.setdefault(node.target.id, []).append(node.value)
    return out


def _add_keyword(ctx: PythonContext, call: ast.Call, text: str) -> Edit:
    """Insert `, text` after the call's last argument."""
    last = max([*call.args, *call.keywords], key=lambda n: (n.end_lineno, n.end_col_offset))
    _, _, line, col = ctx.source.node_range(last)
    return Edit.insert(line, col, f", {text}")


def check(ctx: PythonContext) -> Iterator[Finding]:
    all_launches = None
    host = None
    for kernel in ctx.kernels:
        types = None
        binds = None
        for call in kernel.calls():
            if not _is_dot(ctx, call):
                continue
            if keyword(call, "allow_tf32") is not None or keyword(call, "input_precision") is not None:
                continue   # the precision is chosen explicitly (allow_tf32= is deprecated but honoured)
            if len(call.args) > 3 or len(call.args) < 2:
                continue
            if types is None:
                if all_launches is None:
                    all_launches, host = launches(ctx), HostDtypes(ctx)
                types = KernelDtypes(ctx, kernel, pointer_dtypes(ctx, kernel, host, all_launches))
                binds = _value_bindings(kernel)
            kinds = [types.of(a) for a in call.args[:2]]
            # tl.dot requires equal operand dtypes, so one known fp32 operand settles both.
            if "fp32" not in kinds or any(k in NOT_FP32 for k in kinds):
                continue
            if all(_upcast_load(ctx, types, a, binds) or types.of(a) != "fp32" for a in call.args[:2]):
                continue   # fp16/bf16 values cast up: exact in TF32
            if not ctx.target.nvidia(call):
                continue
            fixes = [
                Fix('Add input_precision="tf32" (today\'s NVIDIA default, made explicit)',
                    (_add_keyword(ctx, call, 'input_precision="tf32"'),), Applicability.UNSAFE),
                Fix('Add input_precision="ieee" (true fp32, several times slower)',
                    (_add_keyword(ctx, call, 'input_precision="ieee"'),), Applicability.UNSAFE),
            ]
            yield ctx.finding(
                call,
                "fp32 `tl.dot` without `input_precision=` runs on TF32 tensor cores by default "
                "(10-bit mantissa; the default has changed between Triton versions and backends); "
                'pass `input_precision="ieee"` for fp32 accuracy or `"tf32"` to keep the speed explicitly',
                fixes,
            )
