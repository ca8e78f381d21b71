"""TRI022 debug-print: `tl.device_print`, `print(...)` or `tl.static_print` left in a kernel.

`tl.device_print` (and Python's `print`, which Triton maps to it) makes every thread format
its values through `printf` into a fixed device buffer that the host drains after the launch:
the kernel slows down by orders of magnitude and stdout floods. `tl.static_print` runs at every
compilation (each autotune config, each specialisation) and prints compile-time values only.

Quiet when the print sits behind a `tl.constexpr` flag (`if DEBUG:`): that branch is compiled
out unless asked for, which is the recommended way to keep a debugging aid.
`tl.device_assert` is not reported: it does nothing unless `TRITON_DEBUG=1` is set, and an
assertion is usually intentional. Quiet, too, in a private `@triton.jit` function (`_debug_dump`)
that nothing in its module calls, launches or names, or names only inside such functions
(`diagnostics.unlaunched`): dead code that never runs. A public one is still reported (another
module may launch it) unless its module's host code launches or calls the module's other jit
functions and never names it (`diagnostics.unlaunched.dead_functions`: the launchers are here).
"""
from __future__ import annotations

import ast
from typing import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Applicability, Edit, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._precision import in_constexpr_branch
from tritonify.diagnostics.triton_ast import TL, dotted

RULE = Rule(
    code="TRI022",
    name="debug-print",
    summary="device_print / print / static_print left in a Triton kernel",
    severity=Severity.WARNING,
    fixable=True, safe_fix=False,
    scope="statement",   # one call or construct, the imports, the kernel's names and the module's bindings
    # Default. Issue 26: four of five findings in an earlier reading sat in helpers nothing calls
    # (now quiet); round 4 of the real-world study had none (benchmarks/realworld/labels/round4_*.csv).
)


def _print_kind(ctx: PythonContext, call: ast.Call) -> str | None:
    path = ctx.imports.resolve(call.func) or ""
    if path in (f"{TL}.device_print", f"{TL}.static_print"):
        return path.rsplit(".", 1)[1]
    if dotted(call.func) == "print":
        return "print"
    return None


def _block_of(ctx: PythonContext, stmt: ast.stmt) -> list[ast.stmt] | None:
    parent = ctx.parents.get(stmt)
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and any(s is stmt for s in block):
            return block
    return None


def _delete_fix(ctx: PythonContext, stmt: ast.stmt) -> list[Fix]:
    block = _block_of(ctx, stmt)
    if block is None:
        return []
    source = ctx.source
    line, col, end_line, end_col = source.node_range(stmt)
    alone = source.line_text(line)[:col].strip() == "" and source.line_text(end_line)[end_col:].split("#")[0].strip() == ""
    if len(block) == 1 or not alone:
        edit = ctx.replace(stmt, "pass")
    else:
        edit = Edit(line, 0, end_line + 1, 0, "")
    return [Fix("Remove the debug print", (edit,), Applicability.UNSAFE)]


def check(ctx: PythonContext) -> Iterator[Finding]:
    for kernel in ctx.kernels:
        dead = None  # asked only once the kernel has a print (it scans the whole module)
        for call in kernel.calls():
            kind = _print_kind(ctx, call)
            if kind is None:
                continue
            if dead is None:
                # a private function nothing in its module launches or calls, or any such function of
                # a module whose host code launches its other kernels (diagnostics.unlaunched)
                dead = (kernel.name.startswith("_") and kernel.name in ctx.unlaunched) or kernel.name in ctx.dead
            if dead:
                break  # dead code: its prints never run
            if in_constexpr_branch(ctx, call, kernel):
                continue
            stmt = ctx.parents.get(call)
            fixes = _delete_fix(ctx, stmt) if isinstance(stmt, ast.Expr) else []
            if kind == "static_print":
                message = ("`tl.static_print` left in the kernel prints at every compilation (each autotune config "
                           "and specialisation); remove it or gate it behind a `DEBUG: tl.constexpr` flag")
                severity = Severity.INFO
            else:
                shown = "print" if kind == "print" else "tl.device_print"
                message = (f"`{shown}` left in the kernel makes every thread printf through a device buffer "
                           "(slow, floods stdout); remove it or gate it behind a `DEBUG: tl.constexpr` flag")
                severity = None
            yield ctx.finding(call, message, fixes, severity=severity)
