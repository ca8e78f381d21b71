"""The pointer, mask, value and `other` of each `tl.load`/`tl.store`/`tl.atomic_*` call.

Shared by TRI024 (access through a non-pointer) and TRI025 (a block mask or value on a single
pointer). The leading underscore keeps the registry from loading it as a rule.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.triton_ast import Kernel, tl_name

_POSITIONS = {
    "load": ("pointer", "mask", "other"),
    "store": ("pointer", "value", "mask"),
}
_ATOMICS = {"atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor", "atomic_xchg"}


@dataclass(frozen=True)
class Access:
    call: ast.Call
    what: str                       # "load", "store", "atomic_add", ...
    args: dict[str, ast.expr]       # "pointer", "mask", "value", "other" -> expression


def accesses(ctx: PythonContext, kernel: Kernel) -> list[Access]:
    found = []
    for call in kernel.calls():
        name = tl_name(ctx.imports, call.func)
        if name in _POSITIONS:
            positions = _POSITIONS[name]
        elif name in _ATOMICS:
            positions = ("pointer", "value", "mask")
        else:
            continue
        args = dict(zip(positions, call.args))
        args.update({k.arg: k.value for k in call.keywords if k.arg in ("pointer", "mask", "value", "other", "val")})
        if "val" in args:
            args["value"] = args.pop("val")
        if "pointer" in args:
            found.append(Access(call, name, args))
    return found
