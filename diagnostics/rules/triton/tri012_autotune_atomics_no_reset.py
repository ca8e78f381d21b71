"""TRI012 autotune-atomics-no-reset: an autotuned kernel accumulates with atomics into its output,
and nothing resets that output between the autotuner's benchmark runs."""
from __future__ import annotations

import ast
from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Applicability, Edit, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._atomic_calls import (
    NON_IDEMPOTENT_OPS,
    atomic_calls,
    is_read_only_atomic,
    lock_pointers,
    pointer_arg,
    spin_loops,
    value_arg,
)
from tritonify.diagnostics.rules.triton._autotune_call import has_hook, read_configs
from tritonify.diagnostics.rules.triton._kernel_flow import (
    bindings,
    pointer_like_params,
    pointer_root,
)
from tritonify.diagnostics.triton_ast import Kernel

RULE = Rule(
    code="TRI012",
    name="autotune-atomics-no-reset",
    summary="autotuned kernel accumulates with atomics but the autotuner never resets its output",
    severity=Severity.ERROR,
    fixable=True,
)

_ZEROS = {"zeros", "zeros_like", "new_zeros"}


def _argument_for(call: ast.Call, callee: Kernel, param: str) -> ast.expr | None:
    """The expression a call passes for `param` of `callee` (keyword or position)."""
    for kw in call.keywords:
        if kw.arg == param:
            return kw.value
    index = callee.param_names.index(param)
    if index < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
        return call.args[index]
    return None


def _undoes(value: ast.expr | None, op: str) -> bool:
    """An atomic or store value that takes a counter back: `atomic_xchg(p, 0)`, `atomic_and(p, 0)`,
    `tl.store(p, 0)`, or an `atomic_add` of a negated amount (`-n`, `tl.where(last, -n, 0)`)."""
    if value is None:
        return False
    if op in ("atomic_xchg", "atomic_and", "store"):
        return isinstance(value, ast.Constant) and value.value == 0 and not isinstance(value.value, bool)
    if op == "atomic_add":
        return any(isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub) or
                   isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) and not isinstance(n.value, bool)
                   and n.value < 0 for n in ast.walk(value))
    return False


def _self_reset_pointers(ctx: PythonContext, kernel: Kernel) -> set[str]:
    """Addresses the kernel itself takes back to where they started: an arrival counter that the last
    program to arrive resets (`arrived = tl.atomic_add(c + tile, 1)`, then `tl.atomic_add(c + tile,
    tl.where(arrived == n - 1, -n, 0))` or `tl.atomic_xchg(c + tile, 0)`). Each launch leaves such a
    counter as it found it, so the autotuner's repeated runs do not accumulate in it."""
    reset = set()
    for call, op in atomic_calls(ctx, kernel):
        ptr = pointer_arg(call)
        if ptr is not None and _undoes(value_arg(call, op), op):
            reset.add(ast.unparse(ptr))
    for call in kernel.calls():
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "store" and len(call.args) >= 2:
            if _undoes(call.args[1], "store"):
                reset.add(ast.unparse(call.args[0]))
    return reset


def _accumulated_params(
    ctx: PythonContext, kernel: Kernel, follow_helpers: bool = True
) -> tuple[list[ast.Call], list[str | None]]:
    """The non-idempotent atomics of a kernel and, for each, the pointer parameter it updates.

    Atomics inside a `@jit` helper called from the kernel count too (one level), reported at the
    call and traced back through the argument the kernel passes (`_accumulate(c_ptrs, acc)`)."""
    binds = bindings(kernel)
    pointers = pointer_like_params(kernel)
    locks = lock_pointers(ctx, spin_loops(ctx, kernel))
    resets = _self_reset_pointers(ctx, kernel)
    calls, roots = [], []
    for call, op in atomic_calls(ctx, kernel):
        if op not in NON_IDEMPOTENT_OPS or is_read_only_atomic(call, op):
            continue
        ptr = pointer_arg(call)
        if ptr is not None and ast.unparse(ptr) in locks:
            continue  # releasing a lock leaves it released however often it runs
        if ptr is not None and ast.unparse(ptr) in resets:
            continue  # a counter the kernel resets itself: each launch leaves it as it found it
        calls.append(call)
        roots.append(pointer_root(kernel, ptr, binds, pointers) if ptr is not None else None)
    if follow_helpers:
        helpers = {k.name: k for k in ctx.kernels if k is not kernel}
        for call in kernel.calls():
            helper = helpers.get(call.func.id) if isinstance(call.func, ast.Name) else None
            if helper is None:
                continue
            for _, helper_root in zip(*_accumulated_params(ctx, helper, follow_helpers=False)):
                arg = _argument_for(call, helper, helper_root) if helper_root else None
                calls.append(call)
                roots.append(pointer_root(kernel, arg, binds, pointers) if arg is not None else None)
    calls_and_roots = sorted(zip(calls, roots), key=lambda cr: (cr[0].lineno, cr[0].col_offset))
    return [c for c, _ in calls_and_roots], [r for _, r in calls_and_roots]


def _launch_args(ctx: PythonContext, kernel: Kernel, param: str) -> list[tuple[ast.expr, ast.AST]]:
    """(argument, enclosing function or module) for each `kernel[grid](...)` launch in this file."""
    index = kernel.param_names.index(param)
    found = []
    for node in ctx.module_nodes:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)):
            continue
        if not (isinstance(node.func.value, ast.Name) and node.func.value.id == kernel.name):
            continue
        arg = next((kw.value for kw in node.keywords if kw.arg == param), None)
        if arg is None and index < len(node.args) and not any(isinstance(a, ast.Starred) for a in node.args[: index + 1]):
            arg = node.args[index]
        if arg is None:
            return []  # a launch we cannot read: assume nothing
        scope = next((a for a in ctx.ancestors(node) if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef))), ctx.tree)
        found.append((arg, scope))
    return found


def _is_zeros(ctx: PythonContext, expr: ast.expr) -> bool:
    if not isinstance(expr, ast.Call):
        return False
    func = expr.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return name in _ZEROS


def _zero_filled(ctx: PythonContext, arg: ast.expr, scope: ast.AST) -> bool:
    """The launch passes a buffer made by torch.zeros/zeros_like/new_zeros (or zeroed with .zero_())."""
    if _is_zeros(ctx, arg):
        return True
    if not isinstance(arg, ast.Name):
        return False
    values = [
        n.value for n in ctx.walk(scope)
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == arg.id for t in n.targets)
    ]
    zeroed = any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "zero_"
        and isinstance(n.func.value, ast.Name) and n.func.value.id == arg.id
        for n in ctx.walk(scope)
    )
    return zeroed or (len(values) == 1 and _is_zeros(ctx, values[0]))


def _callers_zero(ctx: PythonContext, kernel: Kernel, params: list[str]) -> bool:
    for p in params:
        launches = _launch_args(ctx, kernel, p)
        if not launches or not all(_zero_filled(ctx, a, s) for a, s in launches):
            return False
    return True


def _insert_keyword(ctx: PythonContext, autotune: ast.Call, text: str) -> Edit:
    """`, name=[...]` right after the decorator's last argument (keeps a trailing comma valid)."""
    items: list[ast.AST] = [*autotune.args, *(kw.value for kw in autotune.keywords)]
    last = max(items, key=lambda n: (n.end_lineno or 0, n.end_col_offset or 0))
    _, _, line, col = ctx.source.node_range(last)
    return Edit.insert(line, col, f", {text}")


def _fixes(ctx: PythonContext, kernel: Kernel, params: list[str]) -> list[Fix]:
    names = ", ".join(f'"{p}"' for p in params)
    restore = Fix(
        title=f"Add restore_value=[{names}] (any initial contents; one copy per benchmark run)",
        edits=(_insert_keyword(ctx, kernel.autotune, f"restore_value=[{names}]"),),
        applicability=Applicability.SAFE,
    )
    zero_safe = _callers_zero(ctx, kernel, params)
    reset = Fix(
        title=f"Add reset_to_zero=[{names}]" + ("" if zero_safe else " (correct only if callers pass zero-filled buffers)"),
        edits=(_insert_keyword(ctx, kernel.autotune, f"reset_to_zero=[{names}]"),),
        applicability=Applicability.SAFE if zero_safe else Applicability.UNSAFE,
    )
    return [reset, restore] if zero_safe else [restore, reset]


def _module_config_hooks(ctx: PythonContext) -> bool:
    """Some `triton.Config(..., pre_hook=...)` in this file: configs built by a helper or by a
    `prune_configs_by` pruner (`pre_hook=init_to_zero("c_ptr") if split_k > 1 else None`) reset
    the output themselves, even when the decorator's config list cannot be read."""
    def hooked(call: ast.Call) -> bool:
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name != "Config":
            return False
        kw = next((k for k in call.keywords if k.arg == "pre_hook"), None)
        return kw is not None and not (isinstance(kw.value, ast.Constant) and kw.value.value is None)

    return ctx.per_file(("config-pre-hooks",), lambda: any(hooked(c) for c in ctx.module_calls))


def check(ctx: PythonContext) -> Iterator[Finding]:
    for kernel in ctx.kernels:
        if kernel.autotune is None or has_hook(kernel.autotune):
            continue
        configs = read_configs(ctx, kernel.autotune)
        if not configs.many or configs.has_pre_hook or _module_config_hooks(ctx):
            continue
        calls, roots = _accumulated_params(ctx, kernel)
        if not calls:
            continue
        params = list(dict.fromkeys(r for r in roots if r is not None))
        known = all(r is not None for r in roots) and params
        target = f"`{'`, `'.join(params)}`" if known else "the atomically updated output"
        quoted = ", ".join(f'"{p}"' for p in params)
        message = (
            f"autotuning runs this kernel once per config on the real arguments, so {target} accumulates every "
            "benchmark run and the first call for each new key returns garbage; add "
            + (f"`restore_value=[{quoted}]` (or `reset_to_zero=` when callers pass zeros)"
               if known else "`restore_value=[...]` or `reset_to_zero=[...]` naming it")
            + " to `@triton.autotune`"
        )
        fixes = _fixes(ctx, kernel, params) if known else []
        yield ctx.finding(calls[0], message, fixes)
