"""TRI031 python-function-in-kernel: a kernel calls a plain Python function of the same file.

Inside `@triton.jit` code a call is compiled, not run: the callee must itself be a jit function
(or a `triton.language` builtin). Calling a module-level `def f(...)` without `@triton.jit` stops the
compile with "Did you forget to add @triton.jit ? (`_semantic` argument must be provided outside
of JIT functions.)". Only functions defined in the same file, without any decorator and not
shadowed inside the kernel, are reported.

Fix (offered for review): decorate the function with `@triton.jit`.
"""
from __future__ import annotations

import ast
from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Applicability, Edit, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._types import vendor_fork

RULE = Rule(
    code="TRI031",
    name="python-function-in-kernel",
    summary="kernel calls a function of the same file that is not @triton.jit",
    severity=Severity.ERROR,
    fixable=True, safe_fix=False,
    compile_break=True,
    scope="statement",   # one call or construct, the imports, the kernel's names and the module's bindings
)


def _local_names(fn: ast.FunctionDef) -> set[str]:
    names = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def _triton_alias(ctx: PythonContext) -> str | None:
    for node in ctx.tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "triton":
                    return alias.asname or "triton"
    return None


def check(ctx: PythonContext) -> Iterator[Finding]:
    if vendor_fork(ctx.source.path):
        return
    if ctx.tree is None:
        return
    kernels = {k.name for k in ctx.kernels}
    plain = {}
    for node in ctx.tree.body:
        if isinstance(node, ast.FunctionDef) and node.name not in kernels:
            plain[node.name] = node
    rebound = {n.id for stmt in ctx.tree.body if isinstance(stmt, (ast.Assign, ast.AnnAssign))
               for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
               for n in ast.walk(t) if isinstance(n, ast.Name)}
    alias = _triton_alias(ctx)
    if not plain:
        return
    for kernel in ctx.kernels:
        local: set[str] | None = None
        for call in kernel.calls():
            if not isinstance(call.func, ast.Name):
                continue
            fn = plain.get(call.func.id)
            if fn is None or fn.decorator_list or call.func.id in rebound:
                continue
            if local is None:
                local = _local_names(kernel.node)
            if call.func.id in local:
                continue
            fixes = []
            if alias:
                indent = " " * fn.col_offset
                fixes.append(Fix(title=f"Decorate `{fn.name}` with `@{alias}.jit`",
                                 edits=(Edit.insert(fn.lineno, 0, f"{indent}@{alias}.jit\n"),),
                                 applicability=Applicability.UNSAFE))
            yield ctx.finding(call.func, f"`{fn.name}` (line {fn.lineno}) is a plain Python function: a kernel can "
                                         "call only `@triton.jit` functions (\"Did you forget to add "
                                         f"@triton.jit ?\"); decorate `{fn.name}` with `@triton.jit`", fixes)
