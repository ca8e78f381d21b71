"""TRI008 atomic-contention: atomics issued every loop iteration, or by every program to one address."""
from __future__ import annotations

import ast
from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Finding, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._atomic_calls import (
    atomic_calls,
    lock_pointers,
    mask_arg,
    pointer_arg,
    spin_loops,
    value_arg,
)
from tritonify.diagnostics.rules.triton._kernel_flow import (
    assigned_in,
    bindings,
    depends_on,
    enclosing_loops,
    is_tl_call,
    names_in,
    program_dependent,
    taint,
    value_is_used,
)
from tritonify.diagnostics.triton_ast import Kernel, walk_nodes

RULE = Rule(
    code="TRI008",
    name="atomic-contention",
    summary="atomic inside a loop, or every program's atomic on the same address",
    severity=Severity.WARNING,
    fixable=False,
    # Opt-in: 1 of 15 findings were true positives in round 2 of the real-world study
    # (benchmarks/realworld/labels/round2_*.csv), under the 90% the default set requires.
    default=False,
)


def _is_persistent_loop(ctx: PythonContext, kernel: Kernel, loop: ast.stmt, varying: set[str], seed) -> bool:
    """`for tile in range(pid, num_tiles, NUM_SMS)`: a grid-stride loop over tiles, so one atomic per
    iteration is already one atomic per output tile. The start depends on the program and the
    stride is a program count (`tl.num_programs`, NUM_SMS), not a tile size used by `tl.arange`
    (`range(begin_m, seqlen, BLOCK_M)` walks the rows other programs also visit)."""
    if not (isinstance(loop, ast.For) and isinstance(loop.iter, ast.Call) and len(loop.iter.args) >= 3):
        return False
    start, step = loop.iter.args[0], loop.iter.args[2]
    if not depends_on(start, varying, seed):
        return False
    if any(is_tl_call(ctx, n, "num_programs") for n in walk_nodes(step)):
        return True
    tile_sizes = {
        name for c in kernel.calls() if is_tl_call(ctx, c, "arange", "zeros", "full") for a in c.args for name in names_in(a)
    }
    return isinstance(step, ast.Name) and step.id not in tile_sizes


def _program_row(ctx: PythonContext, binds, expr: ast.AST) -> bool:
    """The address itself (not a value it loads) moves with the program id: `cnt_ptr + (pid + 1) * n
    + expert_id` is this program's own row, while `hist_ptr + tl.load(x_ptr + pid * B + offs)` is not."""
    seen: set[str] = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        if is_tl_call(ctx, node, "program_id"):
            return True
        if is_tl_call(ctx, node, "load"):
            continue
        if isinstance(node, ast.Name) and node.id not in seen:
            seen.add(node.id)
            stack.extend(b.value for b in binds.get(node.id, []) if not isinstance(b.stmt, ast.For))
            continue
        stack.extend(ast.iter_child_nodes(node))
    return False


def _selects_programs(test: ast.expr, pid_names: set[str], pid_seed) -> bool:
    """`pid == 0`, `pid_k == SPLIT_K - 1`: a test that lets only chosen programs through.
    (A data-dependent test such as `tl.max(x) > 0` lets any number through.)"""
    for node in walk_nodes(test):
        if (
            isinstance(node, ast.Compare)
            and any(isinstance(op, (ast.Eq, ast.Is)) for op in node.ops)
            and any(depends_on(side, pid_names, pid_seed) for side in (node.left, *node.comparators))
        ):
            return True
    return False


def _guarded_by_program(ctx: PythonContext, node: ast.AST, kernel: Kernel, pid_names: set[str], pid_seed) -> bool:
    """Inside `if pid == 0:`: not every program runs it."""
    for anc in ctx.ancestors(node):
        if anc is kernel.node:
            return False
        if isinstance(anc, (ast.If, ast.IfExp)) and _selects_programs(anc.test, pid_names, pid_seed):
            return True
    return False


def _is_int_constant(value: ast.expr | None) -> bool:
    return isinstance(value, ast.Constant) and isinstance(value.value, int) and not isinstance(value.value, bool)


def _loop_message(op: str, invariant: bool, result_used: bool, counts: bool) -> str:
    if result_used:
        return (
            f"`tl.{op}` inside a loop, and its result steers the work (a shared counter or work queue): every "
            "iteration serialises on one address and such loops have hung on some backends; prefer a static "
            "persistent schedule `for tile in range(pid, num_tiles, NUM_PROGRAMS)`"
        )
    if invariant:
        return (
            f"`tl.{op}` on the same address every iteration: accumulate into a local variable inside the loop and "
            "issue one atomic per program after it (or a two-stage reduction)"
        )
    order = "" if counts else " and the float sum order is nondeterministic"
    local = "count locally (e.g. `tl.histogram`)" if counts else "accumulate locally"
    return (
        f"`tl.{op}` every iteration into memory that other programs update too: the atomics serialise on hot "
        f"addresses{order}; {local} and issue one atomic per program, or write per-program partials and reduce "
        "them in a second stage"
    )


def _one_address_message(op: str, value: ast.expr | None) -> str:
    order = "" if _is_int_constant(value) else " (and float sums land in a different order each run)"
    return (
        f"every program issues `tl.{op}` on the same address, so they all serialise on it{order}; write one "
        "partial per program and reduce them in a second stage"
    )


def check(ctx: PythonContext) -> Iterator[Finding]:
    for kernel in ctx.kernels:
        sites = list(atomic_calls(ctx, kernel))
        if not sites:
            continue
        spins = spin_loops(ctx, kernel)
        polls = {id(s.poll) for s in spins}
        locks = lock_pointers(ctx, spins)
        binds = bindings(kernel)
        varying, seed = program_dependent(ctx, kernel, binds)

        def pid_seed(n: ast.AST) -> bool:
            return is_tl_call(ctx, n, "program_id")

        pid_names = taint(kernel, binds, pid_seed)

        def loads(n: ast.AST) -> bool:
            return is_tl_call(ctx, n, "load")

        data_dependent = taint(kernel, binds, loads)  # e.g. bin or expert ids read from memory
        has_program_id = any(is_tl_call(ctx, c, "program_id") for c in kernel.calls())

        for call, op in sites:
            ptr = pointer_arg(call)
            if ptr is None or id(call) in polls or ast.unparse(ptr) in locks:
                continue  # lock traffic: TRI018's business
            loops = enclosing_loops(ctx, call, kernel.node)
            if loops:
                loop = loops[0]
                if (
                    _is_persistent_loop(ctx, kernel, loop, varying, seed)
                    and names_in(ptr) & assigned_in(loop)
                    and not depends_on(ptr, data_dependent, loads)
                ):
                    continue  # the tile's own output address, once per tile
                if (_program_row(ctx, binds, ptr) and depends_on(ptr, data_dependent, loads)
                        and not depends_on(ptr, varying - pid_names - data_dependent, seed)):
                    continue  # this program's own histogram row (`cnt_ptr + (pid + 1) * n + expert_id`)
                invariant = not (names_in(ptr) & assigned_in(loop))
                counts = _is_int_constant(value_arg(call, op))
                yield ctx.finding(call, _loop_message(op, invariant, value_is_used(ctx, call), counts))
                continue
            # One address from every program: the pointer never depends on program_id/arange.
            if kernel.is_helper or not has_program_id or value_is_used(ctx, call):
                continue  # helpers get offset pointers; a used result is a ticket, not an accumulation
            if depends_on(ptr, varying, seed):
                continue
            mask = mask_arg(call, op)
            if mask is not None and _selects_programs(mask, pid_names, pid_seed):
                continue
            if _guarded_by_program(ctx, call, kernel, pid_names, pid_seed):
                continue
            if op in ("atomic_max", "atomic_min"):
                continue  # one max per program into a global amax: order-free and paid once per program
            # once per program after a block reduction: a cost paid once per program, not per element
            yield ctx.finding(call, _one_address_message(op, value_arg(call, op)), severity=Severity.INFO)
