"""TRI018 spin-lock: a `while` loop in a kernel that waits for another program (lock or barrier)."""
from __future__ import annotations

from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Finding, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._atomic_calls import atomic_op, spin_loops

RULE = Rule(
    code="TRI018",
    name="spin-lock",
    summary="cross-program spin lock or barrier (polling an atomic or volatile load in a while loop)",
    severity=Severity.WARNING,
    fixable=False,
    # Opt-in: in round 1 of the real-world study every sampled finding (5) was a deliberate design
    # (stream-K fix-up and grid barriers on a persistent grid of one program per SM, a decoupled
    # look-back scan) or a short mutex held by a running program; none could hang as written.
    default=False,
)


def _what(ctx: PythonContext, poll) -> str:
    op = atomic_op(ctx, poll)
    if op == "atomic_cas":
        return "spins on `atomic_cas` to take a lock"
    if op == "atomic_xchg":
        return "spins on `atomic_xchg` to take a lock"
    if op:
        return f"polls `{op}(ptr, 0)` until other programs update it"
    return "polls a volatile load until other programs update it"


def check(ctx: PythonContext) -> Iterator[Finding]:
    for kernel in ctx.kernels:
        for spin in spin_loops(ctx, kernel):
            message = (
                f"this loop {_what(ctx, spin.poll)}: a cross-program lock/barrier hangs unless every program it "
                "waits for is resident at once, and its memory ordering differs between backends; prefer a "
                "two-stage reduction (per-program partials, then a second kernel) or plain `tl.atomic_add` "
                "accumulation without a lock"
            )
            yield ctx.finding(spin.loop.test, message)
