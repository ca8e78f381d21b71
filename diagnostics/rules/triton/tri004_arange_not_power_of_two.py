"""TRI004 arange-not-power-of-two: a `tl.arange` range that is not a power of two fails to compile.

Two places show it: the kernel itself (`tl.arange(0, 48)`, a constexpr default or an autotune
config that makes the range 48), and a launch in the same file that passes a run-time tensor
dimension (`BLOCK=n_cols` with `n_cols = x.shape[1]`) for a constexpr used as an arange bound,
instead of `triton.next_power_of_2(n_cols)`. The first fails for every launch; the second only
for the shapes that are not powers of two, which is why it reaches production.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.fixes import import_edit
from tritonify.diagnostics.model import Applicability, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._launch_sites import Origin, launches, module_calls, origin
from tritonify.diagnostics.rules.triton._memory_flow import KernelFlow, kernel_flow
from tritonify.diagnostics.rules.triton._static_sizes import (
    MAX_NUMEL,
    KernelSizes,
    is_power_of_two,
    kernel_sizes,
    next_power_of_two,
)
from tritonify.diagnostics.triton_ast import Kernel, tl_name, walk_nodes

RULE = Rule(
    code="TRI004",
    name="arange-not-power-of-two",
    summary="tl.arange range that is not a power of two (or over 2**20 elements)",
    severity=Severity.ERROR,
    fixable=True, safe_fix=False,
    # Opt-in: 4 of 19 findings were true positives in round 2 of the real-world study
    # (benchmarks/realworld/labels/round2_*.csv), under the 90% the default set requires.
    default=False,
    compile_break=True,
)


def _problem(start: int, end: int) -> str | None:
    span = end - start
    if span <= 0:
        return f"ends at {end}, not after its start {start}"
    if span > MAX_NUMEL:
        return f"spans {span} elements, over Triton's limit of {MAX_NUMEL} (2**20) per tensor"
    if not is_power_of_two(span):
        return f"spans {span} elements, not a power of two"
    return None


def _literal_int(node: ast.expr) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return None


def _in_kernel(ctx: PythonContext, kernel: Kernel, sizes: KernelSizes) -> Iterator[Finding]:
    for call in kernel.calls():
        if tl_name(ctx.imports, call.func) != "arange" or len(call.args) != 2 or call.keywords:
            continue
        if not ctx.target.upstream(call):
            continue  # a vendor fork (Cambricon's, Kunlunxin's Triton) accepts ranges upstream rejects
        start_node, end_node = call.args
        for scenario in sizes.scenarios:
            start, end = sizes.value(start_node, scenario), sizes.value(end_node, scenario)
            if start is None or end is None:
                continue
            problem = _problem(start, end)
            if problem is None:
                continue
            span = end - start
            used = sizes.names(call)
            where = scenario.describe(used)
            known = ", ".join(f"{n}={v}" for n, v in sorted(scenario.env.items()) if n in used and n not in scenario.config)
            if known:
                problem = problem.replace(" elements", f" elements ({known})", 1)
            rounded = next_power_of_two(span) if 0 < span <= MAX_NUMEL else None
            if rounded is not None:
                advice = (f"round the block up to {rounded} (e.g. `triton.next_power_of_2`) and mask the extra lanes "
                          f"(`offs < {span}`)")
            elif span > MAX_NUMEL:
                advice = "split the work into blocks of at most 2**20 elements and loop over them"
            else:
                advice = "make the end larger than the start"
            message = f"`{ctx.segment(call)}` {problem}{f' under {where}' if where else ''}: Triton rejects it at compile time; {advice}"
            fixes = []
            a, b = _literal_int(start_node), _literal_int(end_node)
            if a is not None and b is not None and rounded is not None:
                fixes.append(Fix(
                    title=f"Round the range up to {rounded} elements (add a mask for the {rounded - span} extra lanes)",
                    edits=(ctx.replace(end_node, str(a + rounded)),),
                    applicability=Applicability.UNSAFE,
                ))
            yield ctx.finding(call, message, fixes)
            break  # one finding per call: the first scenario that breaks


def _arange_bounds(ctx: PythonContext, kernel: Kernel, flow: KernelFlow) -> set[str]:
    """Constexpr parameters that are (directly) the start or end of a `tl.arange`."""
    bounds: set[str] = set()
    for call in kernel.calls():
        if tl_name(ctx.imports, call.func) == "arange":
            for arg in call.args:
                if isinstance(arg, ast.Name) and flow.is_constexpr(arg.id) and not flow.is_local(arg.id):
                    bounds.add(arg.id)
    return bounds


# A host variable named like a block size (`BT`, `BK`, `BLOCK_N`, `chunk_size`) holds a tile the
# library chose (read back from a buffer it built), not a caller's free dimension.
_BLOCK_NAME = re.compile(r"^B[A-Z]{1,2}$|^BLOCK|_BLOCK$|^CHUNK|^chunk_size$")


_ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
# Calls an offset passes through and stays an offset of the same lanes; any other call (a load, a
# reduction, `tl.where`, `tl.exp`) yields data, not an index into the tile.
_INDEX_CALLS = {"arange", "multiple_of", "max_contiguous", "broadcast_to", "reshape", "view", "expand_dims",
                "minimum", "maximum", "cast"}


def _index_nodes(ctx: PythonContext, flow: KernelFlow, expr: ast.AST) -> Iterator[ast.AST]:
    """The nodes an index expression is built from, names followed to their values (as
    `flow.expand`), through arithmetic and the calls that keep lanes (`_INDEX_CALLS`, `.to()`),
    but not into what a `tl.load` reads or a reduction, `tl.where` or math function makes:
    those values are data, not offsets into the tile."""
    seen: set[str] = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and node.func.attr in ("to", "cast"):
                stack.append(node.func.value)
            elif tl_name(ctx.imports, node.func) in _INDEX_CALLS:
                stack.extend(node.args)
            continue
        if isinstance(node, ast.Name) and node.id not in seen and node.id in flow.bindings:
            seen.add(node.id)
            stack.extend(b.value for b in flow.bindings[node.id] if b.value is not None)
        stack.extend(ast.iter_child_nodes(node))


def _masks_tail(ctx: PythonContext, kernel: Kernel, flow: KernelFlow, bound: str) -> bool:
    """The kernel bounds offsets built from `tl.arange(0, bound)` by a run-time size
    (`cols < n_cols`, `offs >= seq_len`): it is written for a padded block, so passing the raw
    dimension is the mistake. A kernel that never masks that tile uses it as an exact size (a head
    dimension) on purpose, and says so by construction; the launch is then not reported. Only an
    ordering is a bound: `==`/`!=` pick a lane (`tl.arange(0, E) == top1`), and a loaded value
    compared with another (`m < v`) is data, not the tile's tail."""
    def from_bound(node: ast.AST) -> bool:
        return any(isinstance(n, ast.Call) and tl_name(ctx.imports, n.func) == "arange"
                   and any(isinstance(a, ast.Name) and a.id == bound for a in n.args)
                   for n in _index_nodes(ctx, flow, node))

    runtime = {p.name for p in kernel.params if not p.constexpr}
    for node in kernel.walk():
        if isinstance(node, ast.Compare) and len(node.comparators) == 1 and isinstance(node.ops[0], _ORDERING):
            sides = (node.left, node.comparators[0])
            for a, b in (sides, sides[::-1]):
                if from_bound(a) and flow.names_in(b) & runtime:
                    return True
    return False


def _is_power_of_two_test(node: ast.AST) -> bool:
    """`n & (n - 1)` (the bit trick that is zero only for powers of two), `is_power_of_2(n)`."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd):
        for x, y in ((node.left, node.right), (node.right, node.left)):
            if (isinstance(y, ast.BinOp) and isinstance(y.op, ast.Sub) and isinstance(y.right, ast.Constant)
                    and y.right.value == 1 and ast.dump(y.left) == ast.dump(x)):
                return True
    if isinstance(node, ast.Call):
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        return name.lower().startswith(("is_power_of_2", "is_pow2", "is_power_of_two", "ispow2"))
    return False


def _power_of_two_by_contract(ctx: PythonContext, kernel: Kernel, bound: str) -> bool:
    """The kernel wraps an index with `& (BOUND - 1)` (a ring buffer): correct only when BOUND is a
    power of two, so the kernel is written for such sizes and the allocation guarantees them."""
    for node in kernel.walk():
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd):
            for side in (node.left, node.right):
                if (isinstance(side, ast.BinOp) and isinstance(side.op, ast.Sub) and isinstance(side.left, ast.Name)
                        and side.left.id == bound and isinstance(side.right, ast.Constant) and side.right.value == 1):
                    return True
    return False


def _guarded_by_callers(ctx: PythonContext, host: ast.FunctionDef | None) -> bool:
    """Every call of the launching function in this file comes after a power-of-two test in its
    caller (`if K & (K - 1): return fallback(...)`): the guard sits one function up."""
    if host is None:
        return False
    calls = module_calls(ctx).by_name.get(host.name, [])
    if not calls:
        return False
    for call in calls:
        caller = next((a for a in ctx.ancestors(call) if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
        if caller is None or caller is host:
            return False
        tests = [n for n in ctx.walk(caller) if isinstance(n, (ast.If, ast.Assert)) and n.lineno < call.lineno]
        if not any(_is_power_of_two_test(t) for n in tests for t in walk_nodes(n.test)):
            return False
    return True


def _triton_name(ctx: PythonContext) -> tuple[str, list]:
    """How to spell `triton` in this file, and the import edit when it is not imported."""
    aliases = sorted(ctx.imports.aliases_of("triton"))
    if aliases:
        return aliases[0], []
    edit = import_edit(ctx.source, "triton")
    return "triton", [edit] if edit else []


def _at_launch(ctx: PythonContext, kernel: Kernel, flow: KernelFlow) -> Iterator[Finding]:
    bounds = _arange_bounds(ctx, kernel, flow)
    if not bounds:
        return
    for launch in launches(ctx, kernel):
        for name in sorted(bounds):
            arg = launch.args.get(name)
            if arg is None:
                continue
            kind = origin(ctx, arg, launch.host)
            text = ctx.segment(arg)
            if kind is Origin.DIMENSION and isinstance(arg, ast.Name) and _BLOCK_NAME.match(arg.id):
                continue  # `BT = A.shape[-1]`: the chunk size the library chose when it built A
            if kind is Origin.DIMENSION and not _masks_tail(ctx, kernel, flow, name):
                continue  # an exact tile (`HEAD_DIM=q.shape[-1]`): the kernel is written for sizes that are powers of two
            if kind is Origin.DIMENSION and (_power_of_two_by_contract(ctx, kernel, name)
                                             or _guarded_by_callers(ctx, launch.host)):
                continue
            if not ctx.target.upstream(launch.call):
                continue  # a vendor fork's launcher (its Triton may accept any range)
            if kind is Origin.DIMENSION:
                triton, imports = _triton_name(ctx)
                message = (
                    f"`{text}` (a tensor dimension) is passed as `{name}`, a `tl.arange` bound of `{kernel.name}`: "
                    f"it fails to compile for every size that is not a power of two; pass "
                    f"`{triton}.next_power_of_2({text})` and mask the tail in the kernel (or assert that it is "
                    "a power of two before the launch)"
                )
                fix = Fix(
                    title=f"Pass {triton}.next_power_of_2({text}) (the kernel must mask offsets >= {text})",
                    edits=(ctx.replace(arg, f"{triton}.next_power_of_2({text})"), *imports),
                    applicability=Applicability.UNSAFE,
                )
                yield ctx.finding(arg, message, [fix])
            elif kind is Origin.LITERAL and isinstance(arg, ast.Constant):
                value = int(arg.value)
                if value <= 0:
                    continue
                rounded = next_power_of_two(value)
                message = (
                    f"{text} is passed as `{name}`, a `tl.arange` bound of `{kernel.name}`, and is not a power of two: "
                    f"compile error; pass {rounded} and mask the tail"
                )
                fix = Fix(
                    title=f"Pass {rounded} (the kernel must mask the {rounded - value} extra lanes)",
                    edits=(ctx.replace(arg, str(rounded)),),
                    applicability=Applicability.UNSAFE,
                )
                yield ctx.finding(arg, message, [fix])


def check(ctx: PythonContext) -> Iterator[Finding]:
    for kernel in ctx.kernels:
        if not ctx.target.upstream(kernel.node):
            continue  # a vendor fork's file or kernel: upstream Triton's limits are not its limits
        flow = kernel_flow(ctx, kernel)
        sizes = kernel_sizes(ctx, kernel)   # shared with TRI005
        yield from _in_kernel(ctx, kernel, sizes)
        yield from _at_launch(ctx, kernel, flow)
