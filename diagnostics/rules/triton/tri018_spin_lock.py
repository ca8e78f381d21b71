"""TRI018 spin-lock: a `while` loop in a kernel that waits for another program (lock or barrier).

Reported only where the wait can deadlock: a program waits for one that may not be resident yet.
Not reported, because the waited-for program is running or has already run:
- decoupled look-back: the polled address is indexed by a counter that starts below the program's
  own id and only counts down (`bk = pid - 1` ... `bk -= 1`): earlier programs were dispatched first;
- a mutex: the lock the loop takes is released again in the same function (`atomic_xchg(lock, 0)`),
  so its holder is a running program inside a short critical section;
- a bounded poll: the test also counts attempts (`while flag == 0 and tries < max_tries`);
- a flag nobody in this launch writes: the kernel (and, for a helper, every kernel that calls it)
  never stores to the polled buffer, so the writer is an earlier kernel or another GPU;
- a persistent grid: every launch of the kernel in the file is sized by the SM count
  (`grid = (num_sms,)`, `min(NUM_SMS, tiles)`), so all its programs are resident at once.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Finding, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._atomic_calls import (
    ATOMIC_OPS,
    SpinLoop,
    atomic_op,
    pointer_arg,
    spin_loops,
    value_arg,
)
from tritonify.diagnostics.rules.triton._kernel_flow import bindings, names_in
from tritonify.diagnostics.rules.triton._launch_sites import launches
from tritonify.diagnostics.triton_ast import Kernel, tl_name, walk_nodes

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


def _expand_names(kernel: Kernel, expr: ast.AST) -> set[str]:
    """Names an expression reads, followed through the kernel's local bindings."""
    binds = bindings(kernel)
    out: set[str] = set()
    todo = list(names_in(expr))
    while todo:
        name = todo.pop()
        if name in out:
            continue
        out.add(name)
        for b in binds.get(name, []):
            if not isinstance(b.stmt, ast.For):
                todo.extend(names_in(b.value))
    return out


def _is_const(node: ast.AST, below: int = 1) -> bool:
    """An integer literal under `below` (`-1`, `0`), also written `tl.full([], -1, dtype)`."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        return isinstance(node.operand.value, int)
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int) and not isinstance(node.value, bool) and node.value < below
    if isinstance(node, ast.Call) and len(node.args) >= 2 and getattr(node.func, "attr", "") == "full":
        return _is_const(node.args[1])
    return False


def _positive(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, int) and node.value > 0


def _counts_down(kernel: Kernel, name: str) -> bool:
    """Every binding of `name` starts it below another index (`pid - 1`), steps it down
    (`name -= 1`, `name = name - 1`) or ends it (`name = -1`): a look-back counter."""
    below_other = False
    for b in bindings(kernel).get(name, []):
        stmt, value = b.stmt, b.value
        if isinstance(stmt, ast.AugAssign):
            if not (isinstance(stmt.op, ast.Sub) and _positive(value)):
                return False
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Sub) and _positive(value.right):
                if not (isinstance(value.left, ast.Name) and value.left.id == name):
                    below_other = True
            elif not _is_const(value):
                return False
        else:
            return False
    return below_other


def _looks_back(kernel: Kernel, spin: SpinLoop) -> bool:
    """The polled address is indexed by a look-back counter (waits only on earlier programs)."""
    ptr = pointer_arg(spin.poll)
    return ptr is not None and any(_counts_down(kernel, n) for n in _expand_names(kernel, ptr))


def _is_mutex(ctx: PythonContext, kernel: Kernel, spin: SpinLoop) -> bool:
    """`while atomic_cas(lock, 0, 1) == 1` (or `atomic_xchg(lock, 1)`) whose lock the same function
    releases (`atomic_xchg(lock, 0)`, `atomic_cas(lock, 1, 0)`, `tl.store(lock, 0)`)."""
    op = atomic_op(ctx, spin.poll)
    ptr = pointer_arg(spin.poll)
    if op not in ("atomic_cas", "atomic_xchg") or ptr is None:
        return False
    taken = value_arg(spin.poll, op)
    expected = spin.poll.args[1] if op == "atomic_cas" and len(spin.poll.args) > 1 else None
    if not (isinstance(taken, ast.Constant) and taken.value == 1):
        return False   # `atomic_cas(flag, 1, 1)` only reads a flag another program sets
    if op == "atomic_cas" and not (isinstance(expected, ast.Constant) and expected.value == 0):
        return False
    text = ast.unparse(ptr)
    for call in kernel.calls():
        if call is spin.poll:
            continue
        name = tl_name(ctx.imports, call.func)
        if name in ("atomic_xchg", "atomic_cas", "store"):
            target = pointer_arg(call)
            value = value_arg(call, name) if name != "store" else (call.args[1] if len(call.args) > 1 else None)
            if target is not None and ast.unparse(target) == text and isinstance(value, ast.Constant) \
                    and value.value == 0:
                return True
    return False


def _bounded(spin: SpinLoop) -> bool:
    """`while flag == 0 and tries < max_tries:` with `tries += 1` in the body."""
    test = spin.loop.test
    if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)):
        return False
    stepped = {n.target.id for s in spin.loop.body for n in walk_nodes(s)
               if isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Add) and isinstance(n.target, ast.Name)}
    return any(isinstance(v, ast.Compare) and isinstance(v.ops[0], (ast.Lt, ast.LtE))
               and isinstance(v.left, ast.Name) and v.left.id in stepped for v in test.values)


_WRITES = ATOMIC_OPS | {"store"}


def _peer_pointer(kernel: Kernel, expr: ast.AST) -> bool:
    """A pointer read from a table (`tl.load(peers + rank).to(tl.pointer_type(tl.uint32))`): the
    memory of another GPU (symmetric memory), written by that GPU's kernel, not by this grid."""
    binds = bindings(kernel)
    nodes = list(walk_nodes(expr))
    for name in _expand_names(kernel, expr):
        for b in binds.get(name, []):
            nodes.extend(walk_nodes(b.value))
    return any(isinstance(n, ast.Attribute) and n.attr == "pointer_type" for n in nodes)


def _param_roots(kernel: Kernel, expr: ast.AST) -> set[str]:
    params = set(kernel.param_names)
    return _expand_names(kernel, expr) & params


def _poll_writes(ctx: PythonContext, poll: ast.Call) -> bool:
    """A lock attempt writes what it polls (`atomic_xchg`, `atomic_cas(p, 0, 1)`); a read does not
    (a volatile load, `atomic_add(p, 0)`, `atomic_cas(p, 1, 1)`)."""
    op = atomic_op(ctx, poll)
    if op == "atomic_xchg":
        return True
    if op == "atomic_cas" and len(poll.args) > 2:
        return ast.dump(poll.args[1]) != ast.dump(poll.args[2])
    return False


def _written_in_launch(ctx: PythonContext, kernel: Kernel, spin: SpinLoop) -> bool:
    """Whether the kernel itself, or a kernel of this file that calls it (for a helper), writes the
    buffer the loop polls. When none does, the flag is set by an earlier kernel or another GPU
    (peer memory), not by another program of this grid."""
    ptr = pointer_arg(spin.poll)
    if ptr is None:
        return True
    if _peer_pointer(kernel, ptr):
        return False
    roots = _param_roots(kernel, ptr)
    if not roots:
        return True

    def writes(k: Kernel, names: set[str]) -> bool:
        for call in k.calls():
            if (call is spin.poll and not _poll_writes(ctx, spin.poll)) or tl_name(ctx.imports, call.func) not in _WRITES:
                continue
            target = pointer_arg(call)
            if target is not None and _expand_names(k, target) & names:
                return True
        return False

    if writes(kernel, roots):
        return True
    if not kernel.is_helper:
        return False
    callers = [k for k in ctx.kernels if k is not kernel
               and any(isinstance(c.func, ast.Name) and c.func.id == kernel.name for c in k.calls())]
    if not callers:
        return True   # called from elsewhere: unknown
    index = {n: i for i, n in enumerate(kernel.param_names)}
    for caller in callers:
        for call in caller.calls():
            if not (isinstance(call.func, ast.Name) and call.func.id == kernel.name):
                continue
            args = [a for r in roots for a in ([call.args[index[r]]] if index[r] < len(call.args) else [])
                    + [k.value for k in call.keywords if k.arg == r]]
            if any(_peer_pointer(caller, a) for a in args):
                continue
            names = set().union(*(_param_roots(caller, a) for a in args)) if args else set()
            if not names or writes(caller, names) or _helper_writes(ctx, caller, names, kernel):
                return True
    return False


def _helper_writes(ctx: PythonContext, caller: Kernel, names: set[str], polling: Kernel) -> bool:
    """A caller hands the buffer to another helper of the file: assume that helper may write it."""
    helpers = {k.name for k in ctx.kernels if k.is_helper and k is not polling}
    return any(isinstance(c.func, ast.Name) and c.func.id in helpers
               and any(names_in(a) & names for a in c.args) for c in caller.calls())


# A grid sized by the number of SMs (or AMD CUs): one resident program per SM.
_SM_COUNT = re.compile(r"sm_?count|num_?sms?\b|n_?sms\b|sm_num|multi_processor_count|num_?cus?\b|cu_count",
                       re.IGNORECASE)


def _persistent_grid(ctx: PythonContext, kernel: Kernel) -> bool:
    """Every launch of the kernel in this file (of the kernels calling it, for a helper) has a grid
    that mentions the SM count, directly or through the launcher's and the module's assignments."""
    targets = [kernel]
    if kernel.is_helper:
        targets = [k for k in ctx.kernels if k is not kernel
                   and any(isinstance(c.func, ast.Name) and c.func.id == kernel.name for c in k.calls())]
    found = [launch for k in targets for launch in launches(ctx, k)]
    if not found:
        return False
    module_values = {t.id: stmt.value for stmt in ctx.tree.body if isinstance(stmt, ast.Assign)
                     for t in stmt.targets if isinstance(t, ast.Name)}
    for launch in found:
        grid = launch.call.func.slice if isinstance(launch.call.func, ast.Subscript) else None
        if grid is None or not _mentions_sm_count(ctx, grid, launch.host, module_values):
            return False
    return True


def _mentions_sm_count(ctx: PythonContext, expr: ast.AST, host, module_values: dict[str, ast.expr]) -> bool:
    seen: set[str] = set()
    todo = [expr]
    while todo:
        node = todo.pop()
        if _SM_COUNT.search(ast.unparse(node)):
            return True
        for name in names_in(node) - seen:
            seen.add(name)
            if host is not None:
                for n in ctx.walk(host):
                    if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets):
                        todo.append(n.value)
            if name in module_values:
                todo.append(module_values[name])
    return False


def _cannot_deadlock(ctx: PythonContext, kernel: Kernel, spin: SpinLoop) -> bool:
    return (_looks_back(kernel, spin) or _is_mutex(ctx, kernel, spin) or _bounded(spin)
            or not _written_in_launch(ctx, kernel, spin) or _persistent_grid(ctx, kernel))


def check(ctx: PythonContext) -> Iterator[Finding]:
    for kernel in ctx.kernels:
        for spin in spin_loops(ctx, kernel):
            if _cannot_deadlock(ctx, kernel, spin):
                continue
            message = (
                f"this loop {_what(ctx, spin.poll)}: a cross-program lock/barrier hangs unless every program it "
                "waits for is resident at once, and its memory ordering differs between backends; prefer a "
                "two-stage reduction (per-program partials, then a second kernel) or plain `tl.atomic_add` "
                "accumulation without a lock"
            )
            yield ctx.finding(spin.loop.test, message)
