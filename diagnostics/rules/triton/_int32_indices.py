"""Local names of a Triton kernel that hold int32 row indices other than the program id, for TRI006.

Two kinds are followed, both common in real kernels and both int32 unless cast:

* loop variables of `range` / `tl.range` / `tl.static_range` whose bounds grow with the input
  (a program id or a run-time size such as `n_rows`): Triton types the induction variable as
  the promotion of start, stop and step, so `for row in range(pid, n_rows, tl.num_programs(0))` counts in int32;
* indices loaded from memory (`idx = tl.load(index_ptr + offs)`: gathers, embedding lookups,
  MoE routing, varlen `cu_seqlens`): their width is the index tensor's, which the linter cannot
  see, so the rule only reports them multiplied by a stride argument (see `STRIDE_LIKE`).

The leading underscore keeps the registry from loading this module as a rule.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from tritonify.diagnostics.rules.triton._memory_flow import KernelFlow

WIDE_DTYPES = ("int64", "uint64")
# Arguments that scale an index to a row of a large tensor. Only names that say "stride" count: a
# kernel written against strides is a general gather (serving code, MoE routing, sparse formats)
# where int32 index tensors are common; `idx * n_cols` or `idx * hidden` is just as often fed
# PyTorch's default int64 indices, and a warning there would mostly be noise.
STRIDE_LIKE = re.compile(r"stride", re.IGNORECASE)
_RANGES = ("range", "static_range")


@dataclass(frozen=True)
class LoopIndex:
    """A loop variable that counts over something that grows with the input."""

    name: str
    loop: ast.For


@dataclass(frozen=True)
class LoadedIndex:
    """A local bound only to a value loaded from memory (`idx = tl.load(idx_ptr + i)`)."""

    name: str
    load: ast.Call


def mentions_wide_dtype(flow: KernelFlow, expr: ast.AST) -> bool:
    """`expr` (or a local it reads) names a 64-bit integer type: `.to(tl.int64)`, `tl.cast(x, tl.int64)`."""
    for node in flow.expand(expr):
        if isinstance(node, ast.Attribute) and node.attr in WIDE_DTYPES:
            return True
        if isinstance(node, ast.Constant) and node.value in WIDE_DTYPES:
            return True
    return False


def _is_range(flow: KernelFlow, call: ast.AST) -> bool:
    if not isinstance(call, ast.Call):
        return False
    if isinstance(call.func, ast.Name) and call.func.id == "range" and flow.imports.resolve(call.func) == "range":
        return True
    return flow.tl_call(call, *_RANGES)


def _bounds(call: ast.Call) -> list[ast.expr]:
    """start and stop of a range call (the step does not make the variable large)."""
    args = [a for a in call.args if not isinstance(a, ast.Starred)]
    return args[:2]


def loop_indices(flow: KernelFlow, names: set[str], large_names: set[str],
                 wide_names: set[str]) -> dict[str, list[LoopIndex]]:
    """Loop variables bound only by range loops whose start or stop reads a program id or one of
    `large_names` (run-time sizes), with no 64-bit value among start, stop and step.

    `tl.static_range(4)` or `range(0, NUM_STAGES)` (constexpr bounds) stay out: the variable is
    small, and a product with it is bounded like `pid * BLOCK`. Only `names` are examined."""
    out: dict[str, list[LoopIndex]] = {}
    for name in names:
        found = flow.bindings.get(name, ())
        loops: list[LoopIndex] = []
        for b in found:
            loop = b.stmt
            if not (b.loop_target and isinstance(loop, ast.For) and isinstance(loop.target, ast.Name)
                    and _is_range(flow, loop.iter)):
                break
            bounds = _bounds(loop.iter)  # type: ignore[arg-type]
            read = set().union(*(flow.names_in(e) for e in bounds)) if bounds else set()
            grows = bool(read & large_names) or any(flow.mentions_tl(e, "program_id") for e in bounds)
            if not grows or _is_wide_loop(flow, loop.iter, wide_names):  # type: ignore[arg-type]
                break
            loops.append(LoopIndex(name, loop))
        else:
            if loops:
                out[name] = loops
    return out


def _is_wide_loop(flow: KernelFlow, call: ast.Call, wide_names: set[str]) -> bool:
    """Triton types the induction variable as the promotion of start, stop and step
    (`visit_For` in triton/compiler/code_generator.py): one 64-bit value among them makes it int64."""
    args = [*call.args, *(k.value for k in call.keywords if k.arg in ("arg1", "arg2", "step"))]
    return any(flow.names_in(a) & wide_names or mentions_wide_dtype(flow, a) for a in args)


def is_load(flow: KernelFlow, node: ast.AST) -> bool:
    return flow.tl_call(node, "load")


def loaded_indices(flow: KernelFlow, names: set[str]) -> dict[str, LoadedIndex]:
    """Those of `names` that are locals assigned exactly once, from a bare `tl.load` (no cast around it)."""
    out: dict[str, LoadedIndex] = {}
    for name in names:
        found = flow.bindings.get(name, ())
        if len(found) != 1 or flow.param(name):
            continue
        b = found[0]
        if not b.augmented and not b.loop_target and is_load(flow, b.value):
            out[name] = LoadedIndex(name, b.value)  # type: ignore[arg-type]
    return out


def index_name(node: ast.AST) -> ast.Name | None:
    """The name behind an index operand: `idx`, or `idx[:, None]` (a gathered tile of rows)."""
    if isinstance(node, ast.Name):
        return node
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        return node.value
    return None


def is_stride_like(name: str) -> bool:
    return bool(STRIDE_LIKE.search(name))

