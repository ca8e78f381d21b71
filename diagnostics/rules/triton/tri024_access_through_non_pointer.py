"""TRI024 access-through-non-pointer: `tl.load`/`tl.store` through an int, a float or None.

`tl.load(p)` needs `p` to be a pointer (or a block of pointers). A kernel parameter is a pointer
only when the launch passes a tensor: passing `x.data_ptr()`, `x.stride(0)`, a Python int or a
float makes it an integer (or float) scalar, and `p + offs` an integer block. Triton then stops
compiling with "Unsupported ptr type triton.language.int64 in `tl.load`" (or `<['1024'], int64>`
for the block). The value's kind comes from the type inference (`_types.py`): the launch in the
same file, arithmetic on it, or an integer block such as `tl.arange`. Unknown stays quiet.
Also a pointer the launches pass as a tensor used as a number (`x > 0`, `p * 2`, `p + 1.5`).
"""
from __future__ import annotations

import ast
from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Finding, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._access_calls import accesses
from tritonify.diagnostics.triton_ast import tl_name
from tritonify.diagnostics.rules.triton._types import KernelTypes, typed_kernels

RULE = Rule(
    code="TRI024",
    name="access-through-non-pointer",
    summary="tl.load / tl.store through a value that is not a pointer (an int, a float, None)",
    severity=Severity.ERROR,
    fixable=False,
    compile_break=True,
)

_FLOAT_TARGETS = {"float16", "bfloat16", "float32", "float64"}
_ARTICLE = {"int": "an int", "float": "a float", "bool": "a bool", "none": "None"}


def origin(types: KernelTypes, expr: ast.expr) -> str | None:
    """What the launch passes for a parameter the expression uses (for the message)."""
    for node in ast.walk(expr):
        if isinstance(node, ast.Name) and node.id in types.kernel.param_names:
            t = types.env.get(node.id)
            if t is not None and t.origin and t.kind not in ("pointer",):
                return f"`{node.id}`: {t.origin}"
    return None


def _guarded(ctx: PythonContext, node: ast.AST, expr: ast.expr, params: list[str]) -> bool:
    """Under an `if`/conditional expression whose test names a parameter of the pointer expression
    (`if x_ptr is not None:`, `if isinstance(n, tl.tensor) and n.dtype.is_ptr():`)."""
    names = {n.id for n in ast.walk(expr) if isinstance(n, ast.Name) and n.id in params}
    for anc in ctx.ancestors(node):
        if isinstance(anc, (ast.If, ast.IfExp, ast.While)):
            if names & {n.id for n in ast.walk(anc.test) if isinstance(n, ast.Name)}:
                return True
        if isinstance(anc, ast.FunctionDef):
            break
    return False


def check(ctx: PythonContext) -> Iterator[Finding]:
    for kernel, types in typed_kernels(ctx):
        for access in accesses(ctx, kernel):
            pointer = access.args["pointer"]
            t = types.of(pointer)
            if t.kind not in _ARTICLE or _guarded(ctx, access.call, pointer, kernel.param_names):
                continue
            shape = "block" if t.block else "scalar" if t.block is False else "value"
            why = origin(types, pointer)
            text = ast.unparse(pointer)
            message = (f"`{text}` is {_ARTICLE[t.kind]} {shape}, not a pointer"
                       f"{' (' + why + ')' if why else ''}: Triton rejects `tl.{access.what}` through it "
                       "(\"Unsupported ptr type\"); pass the tensor itself to the kernel (not `.data_ptr()` "
                       "or a size) and add the offsets to that pointer")
            yield ctx.finding(pointer, message)
        yield from _pointer_operands(ctx, kernel, types)
        for call in kernel.calls():
            # `x_ptr.to(tl.float32)`: the pointer itself converted to a number ("cannot cast pointer<fp32>
            # to fp32"); the value it points to was meant.
            func = call.func
            if not (isinstance(func, ast.Attribute) and func.attr == "to" and call.args):
                continue
            base = types.of(func.value)
            target = tl_name(ctx.imports, call.args[0])
            if base.kind == "pointer" and base.origin not in (None, "named as a pointer") \
                    and target in _FLOAT_TARGETS:
                text = ast.unparse(func.value)
                yield ctx.finding(call, f"`{text}` is a pointer ({base.origin}): `.to({ast.unparse(call.args[0])})` "
                                        f"converts the address, which Triton rejects (\"cannot cast pointer\"); "
                                        f"load the value first: `tl.load({text} + offsets).to(...)`")


_NO_POINTER_OPS = (ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.BitAnd, ast.BitOr, ast.BitXor,
                   ast.LShift, ast.RShift)
_COMPARISONS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)


def _launched_pointer(types: KernelTypes, node: ast.expr) -> str | None:
    """The launch's words for a kernel parameter the launches pass as a tensor (a pointer for
    certain, not only by its name), or None."""
    if isinstance(node, ast.Name) and node.id in types.kernel.param_names:
        t = types.of(node)
        if t.kind == "pointer" and t.block is False and t.origin and t.origin.startswith("the launch"):
            return t.origin
    return None


def _pointer_operands(ctx: PythonContext, kernel, types: KernelTypes) -> Iterator[Finding]:
    """A pointer parameter used as a number: compared (`x > 0`, `p != 0`), multiplied or divided, or
    added to a float or another pointer. Triton's operand checks reject each ("invalid operands of
    type pointer<fp32> and triton.language.int32"); the value the pointer points to was meant."""
    for node in kernel.nodes:
        if isinstance(node, ast.BinOp):
            pairs = [(node.left, node.right), (node.right, node.left)]
            op = node.op
            for ptr, other in pairs:
                why = _launched_pointer(types, ptr)
                if why is None:
                    continue
                o = types.of(other)
                bad = isinstance(op, _NO_POINTER_OPS) or (
                    isinstance(op, (ast.Add, ast.Sub)) and o.kind == "float") or (
                    isinstance(op, ast.Add) and o.kind == "pointer")
                if bad and (o.kind in ("int", "float", "bool", "pointer") or isinstance(other, ast.Constant)):
                    yield _operand_finding(ctx, node, ptr, why)
                    break
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], _COMPARISONS):
            for ptr, other in ((node.left, node.comparators[0]), (node.comparators[0], node.left)):
                why = _launched_pointer(types, ptr)
                if why is None:
                    continue
                o = types.of(other)
                if isinstance(other, ast.Constant) and isinstance(other.value, (int, float)) and not isinstance(
                        other.value, bool) or o.kind in ("int", "float") and o.is_runtime:
                    yield _operand_finding(ctx, node, ptr, why)
                    break


def _operand_finding(ctx: PythonContext, node: ast.expr, ptr: ast.expr, why: str) -> Finding:
    text = ast.unparse(ptr)
    return ctx.finding(node, f"`{text}` is a pointer ({why}): `{ast.unparse(node)}` uses the address as a "
                             "number, which Triton rejects (\"invalid operands of type pointer\"); load the value "
                             f"first (`tl.load({text} + offsets)`), or pass the number as its own argument")

