"""TRI008 atomic-contention: an accumulating atomic issued every loop iteration into memory other programs update.

Not reported (round 1 and 2 of the real-world study: FP or NOISE): one atomic per program outside
any loop (a split reduction, paid once per program); `scope="cta"` atomics (shared-memory cursors
and histograms of one program); atomics whose result is used (a slot, ticket or work-queue index:
the claim is the point); `atomic_xchg`/`atomic_cas` and the bitwise `atomic_or`/`and`/`xor` (flags, locks and bit sets:
no accumulation to hoist); an atomic
in an outer loop whose value was summed over a whole inner loop, or in an unrolled
`tl.static_range` loop where each copy updates its own slice (one atomic per output per program);
files and branches for other targets than NVIDIA."""
from __future__ import annotations

import ast
from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Finding, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._atomic_calls import (
    atomic_calls,
    lock_pointers,
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
from tritonify.diagnostics.triton_ast import Kernel, keyword, walk_nodes

RULE = Rule(
    code="TRI008",
    name="atomic-contention",
    summary="accumulating atomic (add/max/min) issued every loop iteration into addresses other programs also update",
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


def _is_int_constant(value: ast.expr | None) -> bool:
    return isinstance(value, ast.Constant) and isinstance(value.value, int) and not isinstance(value.value, bool)


def _loop_message(op: str, invariant: bool, counts: bool) -> str:
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


def _cta_scope(call: ast.Call) -> bool:
    """`scope="cta"`: an atomic on this program's own shared memory (a compaction cursor, a local
    histogram); no other program touches it."""
    kw = keyword(call, "scope")
    return kw is not None and isinstance(kw.value, ast.Constant) and kw.value.value == "cta"


def _value_names(binds, value: ast.expr | None) -> set[str]:
    """The names the value reads, and the names their bindings read, one step back
    (`local_sum = tl.sum(acc, 1)` reads `acc`)."""
    direct = names_in(value) if value is not None else set()
    out = set(direct)
    for name in direct:
        for b in binds.get(name, []):
            if not isinstance(b.stmt, ast.For):
                out |= names_in(b.value)
    return out


def _accumulated_in_inner_loop(ctx: PythonContext, binds, call: ast.Call, op: str, loop: ast.stmt) -> bool:
    """The value is a local summed over a whole inner loop of this iteration (`for c in channels:
    for i in range(0, n, BLOCK): dw += tl.sum(...)` then `tl.atomic_add(dw_ptr + c, dw)`): one
    atomic per output after the work, the split reduction done right."""
    names = _value_names(binds, value_arg(call, op))
    for inner in walk_nodes(loop):
        if inner is loop or not isinstance(inner, (ast.For, ast.While)):
            continue
        if any(n is call for n in walk_nodes(inner)):
            continue  # the atomic sits in this loop: not an inner one
        if names & {t.id for n in walk_nodes(inner) if isinstance(n, ast.AugAssign)
                    for t in walk_nodes(n.target) if isinstance(t, ast.Name)}:
            return True
    return False


def _unrolled_slices(ctx: PythonContext, loop: ast.stmt, ptr: ast.expr) -> bool:
    """`for i in tl.static_range(HC): tl.atomic_add(p + i * stride, ...)`: an unrolled loop whose
    every copy updates its own slice, i.e. one atomic per slice per program."""
    if not (isinstance(loop, ast.For) and isinstance(loop.iter, ast.Call) and is_tl_call(ctx, loop.iter, "static_range")):
        return False
    return bool((names_in(loop.target) | assigned_in(loop)) & names_in(ptr))


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

        for call, op in sites:
            ptr = pointer_arg(call)
            if ptr is None or id(call) in polls or ast.unparse(ptr) in locks:
                continue  # lock traffic: TRI018's business
            if op in ("atomic_xchg", "atomic_cas", "atomic_or", "atomic_and", "atomic_xor"):
                continue  # flags, locks and bit sets (stream-K `atomic_xchg(locks + pid, 1)`), not accumulation
            if _cta_scope(call) or value_is_used(ctx, call):
                continue  # shared-memory cursor; a result used as a slot or ticket index
            loops = enclosing_loops(ctx, call, kernel.node)
            if not loops:
                continue  # once per program (after a local reduction): paid once, not reported
            if not ctx.target.nvidia(call):
                continue
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
            if _accumulated_in_inner_loop(ctx, binds, call, op, loop) or _unrolled_slices(ctx, loop, ptr):
                continue  # one atomic per output after a whole local accumulation
            invariant = not (names_in(ptr) & assigned_in(loop))
            counts = _is_int_constant(value_arg(call, op))
            yield ctx.finding(call, _loop_message(op, invariant, counts))
