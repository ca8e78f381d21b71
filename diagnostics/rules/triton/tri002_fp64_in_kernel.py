"""TRI002 fp64-in-kernel: FP64 inside a Triton kernel, or float64 tensors launched into one.

FP64 runs at a fraction of FP32 throughput (1/2 on H100/H200, 1/64 on consumer GPUs), takes two
registers per value and doubles the bytes a memory-bound kernel moves. It sneaks in three ways:

1. an explicit dtype in the kernel (`tl.float64` in `.to()`, `tl.cast`, `dtype=`);
2. a float literal fp32 cannot hold (|v| > 3.4028234e38 or 0 < |v| < 2**-126): Triton types it
   fp64, and as a loop-carried value or next to an int tensor it turns the arithmetic FP64
   (the common FLT_MAX spelling `3.4028235e38` is just above fp32's maximum);
3. host code in the same file that passes float64 tensors (`.double()`, `dtype=torch.float64`)
   to `kernel[grid](...)`: every load, store and op on them is FP64.

Dtypes behind a `tl.constexpr` flag branch (`if USE_FP64:`) are intentional and stay quiet: that
is the recommended way to keep an FP64 reference path. So are the other deliberate forms seen in
real libraries: a branch that follows the input's dtype (`elif x.dtype == tl.float64:`), a kernel
or helper whose name says fp64 (`_bincount_weights_fp64_kernel`, `safe_log_f64`), and FP64 on
values already reduced to one per row or program (`tl.max(tl.abs(x)).to(tl.float64)` to compute an
fp8 scale the way torch does): that costs one FP64 op per row. A float64 accumulator is reported
only when a tile (one value per element, `_tile_values`) is combined into it.

Only where the code targets NVIDIA or an unknown target (`ctx.target`): the FP64 rates cited are
NVIDIA's (AMD's data-centre parts run FP64 at the FP32 rate).
"""
from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Applicability, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._precision import (
    FLOAT_KINDS,
    HostDtypes,
    KernelDtypes,
    Launch,
    dtype_kind,
    float_literal_outside_fp32,
    in_constexpr_branch,
    launches,
    pointer_dtypes,
    tl_alias,
)
from tritonify.diagnostics.rules.triton._tile_values import tile_values
from tritonify.diagnostics.triton_ast import TL, Kernel, walk_nodes

RULE = Rule(
    code="TRI002",
    name="fp64-in-kernel",
    summary="FP64 arithmetic or float64 tensors in a Triton kernel",
    severity=Severity.WARNING,
    fixable=True, safe_fix=False,
)

ADVICE = "keep fp32 accumulation (Kahan/pairwise sums if precision matters) or gate FP64 behind a `tl.constexpr` flag"


def _fp64_dtype_nodes(ctx: PythonContext, kernel: Kernel) -> Iterator[ast.AST]:
    """`tl.float64` (any alias) in the kernel body, outermost attribute only."""
    if "float64" not in ctx.source.text and "fp64" not in ctx.source.text:
        return  # a name can only resolve to tl.float64 if the file spells it (in the use or its import)
    inner: set[int] = set()
    for node in kernel.walk():
        if id(node) in inner or not isinstance(node, (ast.Attribute, ast.Name)):
            continue
        if isinstance(node, ast.Attribute):
            inner.update(id(n) for n in walk_nodes(node.value))
        path = ctx.imports.resolve(node) or ""
        if path in (f"{TL}.float64", f"{TL}.fp64"):
            yield node


_FP64_WORDS = {"fp64", "f64", "float64", "double", "dp"}


def _named_fp64(kernel: Kernel) -> bool:
    return any(w in _FP64_WORDS for w in kernel.name.lower().split("_"))


def _dtype_following(ctx: PythonContext, node: ast.AST, kernel: Kernel) -> bool:
    """`node` is in the branch of `if <dtype> == tl.float64:` (or `elif`): FP64 only for FP64 input."""
    child = node
    for anc in ctx.ancestors(node):
        if anc is kernel.node:
            return False
        if isinstance(anc, (ast.If, ast.IfExp)) and child is not anc.test:
            in_body = any(child is s for s in anc.body) if isinstance(anc.body, list) else child is anc.body
            if in_body and any(
                isinstance(c, ast.Compare) and any(isinstance(op, (ast.Eq, ast.Is)) for op in c.ops)
                and any(dtype_kind(ctx, side) == "fp64" for side in (c.left, *c.comparators))
                for c in walk_nodes(anc.test)
            ):
                return True
        child = anc
    return False


def _row_level(ctx: PythonContext, node: ast.AST, kernel: Kernel) -> bool:
    """The float64 applies to values that are one per row or program: a cast of a reduced or
    scalar value, or an accumulator into which no tile is ever combined."""
    values = tile_values(ctx, kernel)
    parent = ctx.parents.get(node)
    if isinstance(parent, ast.Call):
        func = parent.func
        if isinstance(func, ast.Attribute) and func.attr in ("to", "cast") and node in parent.args:
            return not values.is_tile(func.value)
        if (ctx.imports.resolve(func) or "") == f"{TL}.cast" and parent.args and node is not parent.args[0]:
            return not values.is_tile(parent.args[0])
    if isinstance(parent, ast.keyword) and parent.arg == "dtype":
        creation = ctx.parents.get(parent)
        target = ctx.parents.get(creation)
        while isinstance(target, (ast.BinOp, ast.Subscript, ast.UnaryOp)):
            target = ctx.parents.get(target)
        if isinstance(target, ast.Assign) and len(target.targets) == 1 and isinstance(target.targets[0], ast.Name):
            return not _combined_with_a_tile(ctx, kernel, target.targets[0].id)
    return False


def _combined_with_a_tile(ctx: PythonContext, kernel: Kernel, name: str) -> bool:
    """Some operation combines `name` with a tile other than itself (`acc += x`, `acc + x`,
    `tl.maximum(acc, x)` with `x` one value per element)."""
    values = tile_values(ctx, kernel)
    for node in kernel.walk():
        if isinstance(node, ast.BinOp):
            operands = [node.left, node.right]
        elif isinstance(node, ast.AugAssign):
            operands = [node.target, node.value]
        elif isinstance(node, ast.Call) and node.args:
            operands = list(node.args)
        else:
            continue
        if not any(isinstance(o, ast.Name) and o.id == name for o in operands):
            continue
        if any(values.is_tile(o) for o in operands if not (isinstance(o, ast.Name) and o.id == name)):
            return True
    return False


def _usage(ctx: PythonContext, node: ast.AST) -> str:
    parent = ctx.parents.get(node)
    if isinstance(parent, ast.keyword) and parent.arg in ("dtype", "out_dtype"):
        return f"a float64 `{parent.arg}=`"
    if isinstance(parent, ast.Call):
        func = parent.func
        if isinstance(func, ast.Attribute) and func.attr in ("to", "cast"):
            return "a cast to float64"
        if (ctx.imports.resolve(func) or "") == f"{TL}.cast":
            return "a cast to float64"
    return "float64"


def _dtype_fix(ctx: PythonContext, node: ast.AST) -> list[Fix]:
    if isinstance(node, ast.Attribute):
        text = f"{ctx.segment(node.value)}.float32"
    else:
        text = f"{tl_alias(ctx)}.float32"
        if not ctx.imports.aliases_of(TL) and ctx.imports.names.get("float32") != f"{TL}.float32":
            return []
    return [Fix(
        title="Use float32 instead of float64 (changes precision on purpose)",
        edits=(ctx.replace(node, text),),
        applicability=Applicability.UNSAFE,
    )]


def _literal_findings(ctx: PythonContext, kernel: Kernel, make_types: Callable[[], KernelDtypes]) -> Iterator[Finding]:
    """`make_types` builds the kernel's dtypes, needed only next to a literal fp32 cannot hold (rare)."""
    types: KernelDtypes | None = None
    constant = ast.Constant
    for node in kernel.walk():
        if node.__class__ is not constant:
            continue   # (parsed nodes are never subclasses) most nodes: no call made for them
        if not float_literal_outside_fp32(node) or in_constexpr_branch(ctx, node, kernel):
            continue
        anchor = node
        parent = ctx.parents.get(anchor)
        while isinstance(parent, ast.UnaryOp):
            anchor, parent = parent, ctx.parents.get(parent)
        if isinstance(parent, (ast.BinOp, ast.Compare)):
            operands = [parent.left, parent.right] if isinstance(parent, ast.BinOp) else [parent.left, *parent.comparators]
            if types is None:
                types = make_types()
            others = [types.of(o) for o in operands if o is not anchor]
            if others and all(k in FLOAT_KINDS - {"fp64"} for k in others):
                continue  # weakly typed next to a float tensor: rounded to that tensor's dtype
        text = ctx.segment(anchor)
        yield ctx.finding(
            anchor,
            f"float literal `{text}` is outside fp32's normal range, so Triton types it float64: as a "
            "loop-carried value, a scalar or next to an int tensor it makes the arithmetic FP64; "
            "use a value fp32 can hold (e.g. `float(\"inf\")` or 3.4028234e38 for FLT_MAX)",
        )


def _launch_findings(ctx: PythonContext, host: HostDtypes, launch: Launch) -> Iterator[Finding]:
    for param, arg in launch.bound_args().items():
        dtype = host.of(arg, launch.scope, launch.call.lineno)
        if dtype is None or dtype.kind != "fp64":
            continue
        origin = dtype.origin
        inside = any(n is origin for n in walk_nodes(arg))
        where = "" if inside else f" (float64 from `{ctx.segment(origin)}` on line {origin.lineno})"
        fixes = _host_fix(ctx, origin)
        yield ctx.finding(
            arg,
            f"`{ctx.segment(arg)}` is a float64 tensor{where} passed to kernel `{launch.kernel.name}` "
            f"as `{param}`: its loads, math and stores run in FP64; pass fp32 and {ADVICE}",
            fixes,
        )


def _host_fix(ctx: PythonContext, origin: ast.AST) -> list[Fix]:
    if isinstance(origin, ast.Call) and isinstance(origin.func, ast.Attribute) and origin.func.attr == "double":
        edit = ctx.replace(origin, f"{ctx.segment(origin.func.value)}.float()")
    elif isinstance(origin, ast.Attribute) and dtype_kind(ctx, origin) == "fp64":
        edit = ctx.replace(origin, f"{ctx.segment(origin.value)}.float32")
    else:
        return []
    return [Fix(
        title="Make the tensor float32 (changes precision on purpose)",
        edits=(edit,),
        applicability=Applicability.UNSAFE,
    )]


def check(ctx: PythonContext) -> Iterator[Finding]:
    all_launches = launches(ctx)
    host = HostDtypes(ctx)
    for kernel in ctx.kernels:
        intended = _named_fp64(kernel)
        for node in _fp64_dtype_nodes(ctx, kernel):
            if intended or in_constexpr_branch(ctx, node, kernel) or isinstance(ctx.parents.get(node), ast.Compare):
                continue  # gated on purpose, or a dtype check (`x.dtype == tl.float64`) that makes no FP64
            if _dtype_following(ctx, node, kernel) or _row_level(ctx, node, kernel) or not ctx.target.nvidia(node):
                continue
            yield ctx.finding(
                node,
                f"{_usage(ctx, node)} in kernel `{kernel.name}` makes the math FP64 "
                f"(1/2 to 1/64 of FP32 throughput, twice the registers); {ADVICE}",
                _dtype_fix(ctx, node),
            )
        if intended:
            continue
        for finding in _literal_findings(
                ctx, kernel, lambda kernel=kernel: KernelDtypes(ctx, kernel, pointer_dtypes(ctx, kernel, host, all_launches))):
            if ctx.target.nvidia(kernel.node):
                yield finding
    for launch in all_launches:
        if ctx.target.nvidia(launch.call) and not _named_fp64(launch.kernel):
            yield from _launch_findings(ctx, host, launch)
