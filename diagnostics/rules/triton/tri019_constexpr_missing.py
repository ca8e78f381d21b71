"""TRI019 constexpr-missing: a kernel parameter used as a shape is not `tl.constexpr`.

Shapes in Triton are compile-time values. A plain parameter is a run-time scalar, so
`tl.arange(0, BLOCK)`, `tl.zeros((BLOCK_M, BLOCK_N), ...)`, `tl.reshape(x, (R, C))` or
`tl.static_range(N)` with a non-constexpr `BLOCK`/`R`/`N` fails to compile ("arange's arguments
must be of type tl.constexpr"). Helpers called from other kernels are skipped: a `@triton.jit`
function called from a kernel receives its caller's constexpr values, so plain parameters are
fine there. Names supplied by `@triton.autotune` configs or `@triton.heuristics` are constexpr.
"""
from __future__ import annotations

import ast
from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Applicability, Edit, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._memory_flow import kernel_flow, tl_alias
from tritonify.diagnostics.rules.triton._types import kernel_types
from tritonify.diagnostics.triton_ast import Kernel, Param, tl_name

RULE = Rule(
    code="TRI019",
    name="constexpr-missing",
    summary="kernel parameter used as a shape but not annotated tl.constexpr",
    severity=Severity.ERROR,
    fixable=True,
    compile_break=True,
)

_SHAPE_KEYWORDS = ("shape", "block_shape")


def _shape_expressions(ctx: PythonContext, call: ast.Call) -> tuple[str, list[ast.expr]] | None:
    """(what, the expressions that must be compile-time) for a shape-taking call."""
    name = tl_name(ctx.imports, call.func)
    kw = {k.arg: k.value for k in call.keywords if k.arg}
    if name == "arange":
        return "a `tl.arange` bound", list(call.args)
    if name == "static_range":
        return "a `tl.static_range` bound", list(call.args)
    if name in ("zeros", "full"):
        shape = call.args[0] if call.args else kw.get("shape")
        return f"a `tl.{name}` shape", [shape] if shape is not None else []
    if name in ("reshape", "view", "broadcast_to"):
        return f"a `tl.{name}` shape", [*call.args[1:], *(kw[k] for k in _SHAPE_KEYWORDS if k in kw)]
    if name in ("make_block_ptr", "make_tensor_descriptor"):
        shape = kw.get("block_shape")
        if shape is None and name == "make_block_ptr" and len(call.args) > 4:
            shape = call.args[4]
        return "a block shape", [shape] if shape is not None else []
    if name is None and isinstance(call.func, ast.Attribute) and call.func.attr in ("reshape", "view", "broadcast_to"):
        return f"a `.{call.func.attr}` shape", [*call.args, *(kw[k] for k in _SHAPE_KEYWORDS if k in kw)]
    return None


def _names(expr: ast.expr) -> Iterator[ast.Name]:
    """Names an expression uses arithmetically (not inside calls or subscripts)."""
    if isinstance(expr, ast.Name):
        yield expr
    elif isinstance(expr, ast.BinOp):
        yield from _names(expr.left)
        yield from _names(expr.right)
    elif isinstance(expr, ast.UnaryOp):
        yield from _names(expr.operand)
    elif isinstance(expr, (ast.Tuple, ast.List)):
        for elt in expr.elts:
            yield from _names(elt)


def _is_device_function(kernel: Kernel) -> bool:
    """A jit function that returns a value is called from another kernel (possibly in another file)."""
    return kernel.returns_value


def _fix(ctx: PythonContext, param: Param) -> Fix | None:
    tl = tl_alias(ctx.imports)
    if tl is None:
        return None
    annotation = f"{tl}.constexpr"
    arg = param.node
    if arg.annotation is not None:
        edit = ctx.replace(arg.annotation, annotation)
    else:
        line, col, _, _ = ctx.source.node_range(arg)
        end = col + len(arg.arg)
        if param.default is not None:
            d_line, d_col, _, _ = ctx.source.node_range(param.default)
            edit = Edit(line, end, d_line, d_col, f": {annotation} = ")
        else:
            edit = Edit.insert(line, end, f": {annotation}")
    return Fix(title=f"Annotate `{param.name}: {annotation}`", edits=(edit,), applicability=Applicability.SAFE)


def _plain_local(kernel: Kernel, name: str) -> ast.Assign | None:
    """The one `name = <number expression>` of a kernel local bound nowhere else (no annotation,
    no loop, no tuple unpacking): Triton makes such a local a run-time tensor."""
    if kernel.param(name) is not None:
        return None
    found: list[ast.Assign] = []
    for node in kernel.walk():
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id == name and len(node.targets) == 1:
                    found.append(node)
                elif name in {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}:
                    return None
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.comprehension, ast.With, ast.NamedExpr)):
            target = getattr(node, "target", None)
            targets = [target] if target is not None else [i.optional_vars for i in getattr(node, "items", [])]
            if any(t is not None and name in {n.id for n in ast.walk(t) if isinstance(n, ast.Name)} for t in targets):
                return None
    if len(found) != 1:
        return None
    value = found[0].value
    numeric = isinstance(value, ast.Constant) and isinstance(value.value, int) and not isinstance(value.value, bool)
    numeric = numeric or isinstance(value, ast.BinOp) and all(
        isinstance(n, (ast.Constant, ast.Name, ast.BinOp, ast.operator, ast.Load)) for n in ast.walk(value))
    return found[0] if numeric else None


_RUNTIME_CALLS = frozenset({"program_id", "num_programs"})


def _runtime_local(ctx: PythonContext, kernel: Kernel, name: str, types) -> tuple[ast.stmt, str] | None:
    """(the binding, what it is) of a kernel local bound once, with no annotation, to a value that is
    never a compile-time constant: `tl.program_id(0)` / `tl.num_programs(0)`, or an element of a
    tuple parameter the launches pass as a host tuple (`C, H, W = shape` after `k[grid](x.shape)`),
    whose ints are run-time arguments."""
    if kernel.param(name) is not None:
        return None
    found: list[ast.stmt] = []
    for node in kernel.walk():
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if name in {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}:
                    found.append(node)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.comprehension, ast.With, ast.NamedExpr)):
            target = getattr(node, "target", None)
            targets = [target] if target is not None else [i.optional_vars for i in getattr(node, "items", [])]
            if any(t is not None and name in {n.id for n in ast.walk(t) if isinstance(n, ast.Name)} for t in targets):
                return None
    if len(found) != 1 or len(found[0].targets) != 1:  # type: ignore[attr-defined]
        return None
    assign = found[0]
    target, value = assign.targets[0], assign.value  # type: ignore[attr-defined]
    if isinstance(target, ast.Name) and isinstance(value, ast.Call) and tl_name(ctx.imports, value.func) in _RUNTIME_CALLS:
        return assign, f"`{ast.unparse(value)}`, a run-time value"
    source = value.value if isinstance(value, ast.Subscript) and isinstance(target, ast.Name) else (
        value if isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts) else None)
    if isinstance(source, ast.Name) and types is not None:
        param = kernel.param(source.id)
        t = types.of(source)
        if param is not None and not param.constexpr and t.kind == "tuple" and t.origin and t.origin.startswith("the launch"):
            return assign, f"an element of the tuple parameter `{source.id}` ({t.origin}), a run-time int"
    return None


def _local_fix(ctx: PythonContext, assign: ast.Assign, name: str) -> Fix | None:
    tl = tl_alias(ctx.imports)
    if tl is None:
        return None
    target = assign.targets[0]
    line, col, end_line, end_col = ctx.source.node_range(target)
    edit = Edit(line, col, end_line, end_col, f"{name}: {tl}.constexpr")
    return Fix(title=f"Annotate `{name}: {tl}.constexpr = ...`", edits=(edit,), applicability=Applicability.SAFE)


def check(ctx: PythonContext) -> Iterator[Finding]:
    for kernel in ctx.kernels:
        if kernel.is_helper or _is_device_function(kernel):
            continue
        flow = kernel_flow(ctx, kernel)
        reported: set[str] = set()
        for call in kernel.calls():
            found = _shape_expressions(ctx, call)
            if found is None:
                continue
            what, exprs = found
            for expr in exprs:
                for name in _names(expr):
                    param = kernel.param(name.id)
                    if param is None and name.id not in reported:
                        assign = _plain_local(kernel, name.id)
                        runtime = None if assign is not None or flow.is_constexpr(name.id) else _runtime_local(
                            ctx, kernel, name.id, kernel_types(ctx).get(kernel.node))
                        if runtime is not None:
                            reported.add(name.id)
                            yield ctx.finding(name, f"`{name.id}` is {what} but holds {runtime[1]} (line "
                                                    f"{runtime[0].lineno}): a shape must be known when the kernel "
                                                    "compiles (\"arange's arguments must be of type tl.constexpr\"); "
                                                    "pass it as a `tl.constexpr` parameter")
                            continue
                        if assign is not None:
                            reported.add(name.id)
                            fix = _local_fix(ctx, assign, name.id)
                            yield ctx.finding(name, f"`{name.id}` is {what} but a plain local (line {assign.lineno}): "
                                                    "Triton makes an unannotated local a run-time tensor and "
                                                    f"rejects it as a shape; write `{name.id}: tl.constexpr = "
                                                    f"{ast.unparse(assign.value)}`", [fix] if fix else [])
                        continue
                    if param is None or name.id in reported or flow.is_constexpr(name.id) or flow.is_local(name.id):
                        continue
                    reported.add(name.id)
                    message = (
                        f"`{name.id}` is {what} but a run-time parameter of `{kernel.name}`: Triton rejects it at "
                        f"compile time (it must be known when the kernel compiles); annotate `{name.id}: tl.constexpr`"
                    )
                    fix = _fix(ctx, param)
                    yield ctx.finding(name, message, [fix] if fix else [])
