"""TRI025 block-on-scalar-pointer: a block mask or value with a single pointer.

`tl.load(x_ptr, mask=offs < n)` forgets the offsets: `x_ptr` is one pointer (a scalar), the mask
is a block, and Triton stops compiling with "Mask argument cannot be block type if pointer
argument is not a block". The same for `tl.store(out_ptr, block_value)` ("Value argument cannot
be block type ...") and a block `other=`. A kernel parameter is always a scalar, so the pointer
side is certain whenever it is a parameter (or a parameter plus scalars); the block side comes from
the type inference (`tl.arange`, loads through blocks, arithmetic on them).

Fix (offered for review): when the mask compares an offsets block (`offs < n`), load through
`x_ptr + offs`.
"""
from __future__ import annotations

import ast
from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Applicability, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._access_calls import accesses
from tritonify.diagnostics.rules.triton._types import KernelTypes, typed_kernels

RULE = Rule(
    code="TRI025",
    name="block-on-scalar-pointer",
    summary="tl.load / tl.store with a block mask or value but a single (scalar) pointer",
    severity=Severity.ERROR,
    fixable=True, safe_fix=False,
    compile_break=True,
)


def _offsets_of(types: KernelTypes, mask: ast.expr) -> ast.Name | None:
    """`offs` in a mask `offs < n` (or `(offs < n) & ...`, or a name bound once to one) when `offs`
    is an int block."""
    if isinstance(mask, ast.Name):
        bound = [n.value for n in types.kernel.nodes if isinstance(n, ast.Assign) and len(n.targets) == 1
                 and isinstance(n.targets[0], ast.Name) and n.targets[0].id == mask.id]
        if len(bound) != 1:
            return None
        mask = bound[0]
    for node in ast.walk(mask):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name):
            t = types.of(node.left)
            if t.block and t.kind == "int":
                return node.left
    return None


def check(ctx: PythonContext) -> Iterator[Finding]:
    for kernel, types in typed_kernels(ctx):
        for access in accesses(ctx, kernel):
            pointer = access.args["pointer"]
            p = types.of(pointer)
            if p.block is not False or p.kind in ("block_pointer", "tuple"):
                continue
            for role in ("mask", "value", "other"):
                arg = access.args.get(role)
                if arg is None or types.of(arg).block is not True:
                    continue
                text = ast.unparse(pointer)
                fixes = []
                offs = _offsets_of(types, access.args["mask"]) if "mask" in access.args else None
                if offs is not None:
                    fixes.append(Fix(title=f"Access `{text} + {offs.id}`",
                                     edits=(ctx.replace_expr(pointer, f"{text} + {offs.id}"),),
                                     applicability=Applicability.UNSAFE))
                hint = f"`{text} + {offs.id}`" if offs is not None else f"`{text} + offsets`"
                message = (f"`{text}` is a single pointer but the {role} `{ast.unparse(arg)}` is a block: "
                           f"Triton rejects this `tl.{access.what}` (\"{role.capitalize()} argument cannot be "
                           f"block type if pointer argument is not a block\"); access {hint}")
                yield ctx.finding(pointer, message, fixes)
                break
