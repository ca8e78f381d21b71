"""Atomic operations and cross-program polling loops in Triton kernels.

Shared by TRI008 (atomic contention), TRI012 (autotuned kernels that accumulate atomically)
and TRI018 (spin locks), so the three agree on what an atomic is and which loops are spins:
an atomic that polls a lock belongs to TRI018 alone.
"""
from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.rules.triton._kernel_flow import names_in
from tritonify.diagnostics.triton_ast import Kernel, keyword, tl_name, walk_nodes

ATOMIC_OPS = frozenset({
    "atomic_add", "atomic_max", "atomic_min", "atomic_xchg", "atomic_cas", "atomic_and", "atomic_or", "atomic_xor",
})
# Atomics whose effect changes when the same launch runs twice on the same memory: a sum
# doubles, an xor cancels, an exchange flips a flag other programs read. max/min/and/or are
# idempotent (running them again with the same operands leaves the same result), and a
# compare-and-swap is a lock attempt.
NON_IDEMPOTENT_OPS = frozenset({"atomic_add", "atomic_xor", "atomic_xchg"})
# Ops whose identity element makes them a pure read: atomic_add(p, 0) is a polling load.
_READ_WITH_ZERO = {"atomic_add", "atomic_or", "atomic_xor"}


def atomic_op(ctx: PythonContext, node: ast.AST) -> str | None:
    """`atomic_add` for `tl.atomic_add(...)` under any alias, else None."""
    if isinstance(node, ast.Call):
        name = tl_name(ctx.imports, node.func)
        if name in ATOMIC_OPS:
            return name
    return None


def atomic_calls(ctx: PythonContext, kernel: Kernel) -> Iterator[tuple[ast.Call, str]]:
    for call in kernel.calls():
        op = atomic_op(ctx, call)
        if op:
            yield call, op


def _arg(call: ast.Call, index: int, name: str) -> ast.expr | None:
    kw = keyword(call, name)
    if kw is not None:
        return kw.value
    return call.args[index] if len(call.args) > index else None


def pointer_arg(call: ast.Call) -> ast.expr | None:
    return _arg(call, 0, "pointer")


def value_arg(call: ast.Call, op: str) -> ast.expr | None:
    return _arg(call, 2, "val") if op == "atomic_cas" else _arg(call, 1, "val")


def mask_arg(call: ast.Call, op: str) -> ast.expr | None:
    return None if op == "atomic_cas" else _arg(call, 2, "mask")


def _is_zero(expr: ast.expr | None) -> bool:
    return isinstance(expr, ast.Constant) and not isinstance(expr.value, bool) and expr.value == 0


def is_read_only_atomic(call: ast.Call, op: str) -> bool:
    """`tl.atomic_add(p, 0)` and friends: they read memory coherently and change nothing."""
    return op in _READ_WITH_ZERO and _is_zero(value_arg(call, op))


def is_volatile_load(ctx: PythonContext, node: ast.AST) -> bool:
    if not (isinstance(node, ast.Call) and tl_name(ctx.imports, node.func) == "load"):
        return False
    kw = keyword(node, "volatile")
    return kw is not None and isinstance(kw.value, ast.Constant) and kw.value.value is True


def _waits_on_others(ctx: PythonContext, node: ast.AST) -> bool:
    """A call whose value only changes when another program writes: a lock attempt
    (compare-and-swap, exchange), an atomic read, or a volatile load."""
    op = atomic_op(ctx, node)
    if op in ("atomic_cas", "atomic_xchg"):
        return True
    if op and is_read_only_atomic(node, op):  # type: ignore[arg-type]
        return True
    return is_volatile_load(ctx, node)


@dataclass(frozen=True)
class SpinLoop:
    loop: ast.While
    poll: ast.Call          # the call whose result the loop waits on


def spin_loops(ctx: PythonContext, kernel: Kernel) -> list[SpinLoop]:
    """`while` loops that wait for another program: the test polls a lock or flag directly
    (`while tl.atomic_cas(lock, 0, 1) == 1:`), or tests a name that the body re-reads that way
    (`while seen < n: seen = tl.load(flag, volatile=True)`).

    A loop whose own atomics make the progress it waits for (a work queue doing
    `idx = tl.atomic_add(counter, 1)`) is not a spin: it ends without help from others."""
    found: list[SpinLoop] = []
    for node in kernel.walk():
        if not isinstance(node, ast.While):
            continue
        poll = next((n for n in walk_nodes(node.test) if _waits_on_others(ctx, n)), None)
        if poll is None:
            tested = names_in(node.test)
            for stmt in node.body:
                for sub in walk_nodes(stmt):
                    if isinstance(sub, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and sub.value is not None:
                        targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                        bound = {x.id for t in targets for x in walk_nodes(t) if isinstance(x, ast.Name)}
                        if bound & tested:
                            poll = next((n for n in walk_nodes(sub.value) if _waits_on_others(ctx, n)), None)
                    if poll is not None:
                        break
                if poll is not None:
                    break
        if poll is not None:
            found.append(SpinLoop(node, poll))  # type: ignore[arg-type]
    return found


def lock_pointers(ctx: PythonContext, spins: list[SpinLoop]) -> set[str]:
    """Source text of the pointers that spin loops poll (the lock or flag addresses)."""
    out: set[str] = set()
    for spin in spins:
        ptr = pointer_arg(spin.poll)
        if ptr is not None:
            out.add(ast.unparse(ptr))
    return out
