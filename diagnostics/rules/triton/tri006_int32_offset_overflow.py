"""TRI006 int32-offset-overflow: `row * stride` is computed in 32 bits and wraps on large tensors.

`tl.program_id` is an int32, and so is an integer kernel argument below 2**31 (Triton promotes an
argument to int64 only when its own value needs it). Their product, used as a pointer offset,
wraps negative once it reaches 2**31: a tensor of more than 2**31 elements (a 1M-token sequence
times a 4096 hidden size) reads or writes the wrong place, or faults. Casting the program id once
makes the whole offset 64-bit.

The same product is followed for two other int32 row indices (`_int32_indices`): the variable of
a range loop that grows with the input (`for row in range(pid, n_rows, tl.num_programs(0))`),
and an index loaded from memory times a stride (`idx = tl.load(index_ptr + i)`, `idx * stride`).
Those are cast in the product only, so the index keeps its type everywhere else.

Not reported: a head/group/channel/expert/batch/request index times its stride, a product with the
stride of a per-request metadata table (block tables, cu_seqlens), and a program or loop index whose
every access touches one element (`_only_scalar_accesses`: a per-row vector).
"""
from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Applicability, Edit, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._int32_indices import (
    LoadedIndex,
    LoopIndex,
    index_name,
    is_load,
    is_stride_like,
    loaded_indices,
    loop_indices,
)
from tritonify.diagnostics.rules.triton._memory_flow import (
    KernelFlow,
    kernel_flow,
    position,
    tl_alias,
)
from tritonify.diagnostics.rules.triton._tile_values import tile_values
from tritonify.diagnostics.triton_ast import Kernel, dotted, tl_name

RULE = Rule(
    code="TRI006",
    name="int32-offset-overflow",
    summary="an int32 index (program id, loop variable, loaded index) times a runtime stride used as a pointer offset",
    severity=Severity.WARNING,
    fixable=True,
    # Opt-in: on the real-world corpus (round 1) 5 of 63 findings were real. Whether `row * stride`
    # can pass 2**31 depends on tensor sizes the linter cannot see (a KV pool, logits over a
    # vocabulary: yes; a norm's rows times its hidden size: no), so the rule stays off by default.
    default=False,
)

_WIDE = ("int64", "uint64")
# Index names of a small dimension (heads, groups, channels, experts, batch entries): an index of
# one of them times its stride stays inside one sample of the tensor, far below 2**31.
_SMALL_INDEX = frozenset({"h", "hq", "hk", "hv", "hid", "head", "heads", "kv_head", "kvh", "g", "group", "feat",
                          "c", "channel", "e", "expert", "b", "bid", "batch", "bz", "bs",
                          "req", "request", "sequence"})
_INDEX_AFFIXES = re.compile(r"^(pid|i|cur|off|idx|q|kv)_|_(id|idx|pid|index)$")
# Strides of such a dimension (`stride_h`, `stride_qh`, `x_stride_h`, `input_feat_stride`).
# Also the strides of per-request metadata tables (`block_table_stride`, `stride_block_table_r`,
# `cu_seqlens_q_stride_0`): requests times blocks per request, far below 2**31.
_SMALL_STRIDE = re.compile(r"head|feat|chan|group|(^|_)stride_[a-z]?h$|_h_stride$|(^|_)h_?stride$"
                           r"|block_?tables?|page_?tables?|cu_seqlens|seq_?lens|indptr", re.IGNORECASE)
# Counts of small things: a program index times these stays far below 2**31.
_SMALL_COUNT = re.compile(r"(block|tile|group|expert|head|stage|split|chunk|warp|program|layer)s?$", re.IGNORECASE)


def _small_dimension(index: ast.expr, stride: ast.Name) -> bool:
    """`h * stride_h`, `head_id * x_stride_h`, `feat * feat_stride`: a head, group, channel, expert or
    batch index times its stride stays inside one sample of the tensor."""
    if _SMALL_STRIDE.search(stride.id):
        return True
    name = index_name(index)
    if name is None:
        return False
    base = name.id.lower()
    for _ in range(2):
        base = _INDEX_AFFIXES.sub("", base)
    return base in _SMALL_INDEX


def _is_wide_dtype(ctx: PythonContext, node: ast.AST) -> bool:
    path = ctx.imports.resolve(node) or dotted(node) or ""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        path = node.value
    return path.rsplit(".", 1)[-1] in _WIDE


def _casts_to_int64(ctx: PythonContext, node: ast.AST) -> ast.expr | None:
    """The casted expression of `x.to(tl.int64)`, `x.cast(tl.int64)` or `tl.cast(x, tl.int64)`."""
    if not isinstance(node, ast.Call):
        return None
    if isinstance(node.func, ast.Attribute) and node.func.attr in ("to", "cast") and node.args \
            and _is_wide_dtype(ctx, node.args[0]):
        return node.func.value
    if tl_name(ctx.imports, node.func) == "cast" and len(node.args) >= 2 and _is_wide_dtype(ctx, node.args[1]):
        return node.args[0]
    return None


def _program_ids(ctx: PythonContext, flow: KernelFlow) -> dict[str, list[ast.Call]]:
    """Names bound only to `tl.program_id(...)` (directly or through `row = pid`), with the
    program_id calls behind each."""
    out: dict[str, list[ast.Call]] = {}
    changed = True
    while changed:
        changed = False
        for name, found in flow.bindings.items():
            if name in out or flow.param(name):
                continue
            calls: list[ast.Call] = []
            for b in found:
                v = b.value
                if b.augmented or b.loop_target or v is None:
                    break
                if flow.tl_call(v, "program_id"):
                    calls.append(v)  # type: ignore[arg-type]
                elif isinstance(v, ast.Name) and v.id in out:
                    calls.extend(out[v.id])
                else:
                    break
            else:
                if calls:
                    out[name] = calls
                    changed = True
    return out


def _cast_positions(ctx: PythonContext, kernel: Kernel) -> dict[str, list[tuple[int, int]]]:
    """Where each name is cast to a 64-bit integer, except casts that are an operand of a product
    (`tl.cast(row, tl.int64) * stride`, what the fix writes): those widen that one product only."""
    out: dict[str, list[tuple[int, int]]] = {}
    for node in kernel.calls():
        inner = _casts_to_int64(ctx, node)
        if isinstance(inner, ast.Name) and not _is_factor(ctx, node):
            out.setdefault(inner.id, []).append(position(node))
    return out


def _is_factor(ctx: PythonContext, node: ast.AST) -> bool:
    parent = ctx.parents.get(node)
    if isinstance(parent, ast.Subscript) and parent.value is node:  # idx.to(tl.int64)[:, None] * stride
        node, parent = parent, ctx.parents.get(parent)
    return isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Mult)


def _wide_params(ctx: PythonContext, flow: KernelFlow, casts: dict[str, list]) -> set[str]:
    """Integer parameters that are already 64-bit, cast, or rebound in the kernel."""
    out = set()
    for p in flow.kernel.params:
        if p.annotation and any(w in p.annotation for w in _WIDE) or p.name in casts or flow.is_local(p.name):
            out.add(p.name)
    return out


def _pointer_nodes(ctx: PythonContext, flow: KernelFlow) -> set[int]:
    """ids of every node that may flow into the address of a memory access."""
    pointers: list[ast.expr] = [a.pointer for a in flow.accesses if a.pointer is not None]
    for call in flow.kernel.calls():
        name = tl_name(ctx.imports, call.func) or ""
        if (name.startswith("atomic_") or name == "make_block_ptr") and call.args:
            pointers.append(call.args[0])
    ids: set[int] = set()
    for ptr in pointers:
        ids.update(id(n) for n in flow.expand(ptr))
    return ids


def _persistent_ids(flow: KernelFlow, pids: dict[str, list[ast.Call]]) -> set[str]:
    """Program ids of a persistent kernel (`for row in range(pid * per_program, ...)`,
    `tl.num_programs`): the grid is about the SM count, so `pid * stride` indexes a small
    per-program buffer; the loop variable carries the large offsets and is followed instead
    (`loop_indices`)."""
    if any(flow.tl_call(c, "num_programs") for c in flow.kernel.calls()):
        return set(pids)
    out = set()
    for node in flow.kernel.walk():
        if isinstance(node, ast.For):
            used = flow.names_in(node.iter)
            out |= {p for p in pids if p in used}
    return out


_DESCRIPTOR_CALLS = ("make_block_ptr", "advance", "load_tensor_descriptor", "store_tensor_descriptor")
_DESCRIPTOR_METHODS = {"load", "store", "atomic_add", "atomic_min", "atomic_max", "atomic_and", "atomic_or",
                       "atomic_xor", "gather", "scatter"}


def _int32_only(flow: KernelFlow) -> tuple[set[str], set[int]]:
    """Names, and ids of the nodes, that reach block-pointer or tensor-descriptor offsets, which
    Triton requires to be int32 ("Expected a 32-bit integer"): a program id used there must stay
    int32, and a product there cannot be widened (casting it would not compile)."""
    names: set[str] = set()
    nodes: set[int] = set()
    for call in flow.kernel.calls():
        args: list[ast.AST] = []
        if flow.tl_call(call, *_DESCRIPTOR_CALLS):
            args = [*call.args[1:], *(k.value for k in call.keywords if k.arg != "base")]
        elif (isinstance(call.func, ast.Attribute) and call.func.attr in _DESCRIPTOR_METHODS
              and tl_name(flow.imports, call.func) is None and call.args
              and isinstance(call.args[0], (ast.List, ast.Tuple))):
            args = [call.args[0]]  # desc.load([pid * BLOCK, 0])
        for arg in args:
            for node in flow.expand(arg):
                nodes.add(id(node))
                if isinstance(node, ast.Name):
                    names.add(node.id)
    return names, nodes


def _fix_product(ctx: PythonContext, pid: ast.Name) -> Fix | None:
    tl = tl_alias(ctx.imports)
    if tl is None:
        return None
    return Fix(
        title="Cast the program id to 64 bits in this product (it also feeds int32-only descriptor offsets)",
        edits=(ctx.replace(pid, f"{pid.id}.to({tl}.int64)"),),
        applicability=Applicability.SAFE,
    )


def _fix(ctx: PythonContext, calls: list[ast.Call]) -> Fix | None:
    tl = tl_alias(ctx.imports)
    if tl is None:
        return None
    edits = []
    for call in calls:
        _, _, end_line, end_col = ctx.source.node_range(call)
        edits.append(Edit.insert(end_line, end_col, f".to({tl}.int64)"))
    return Fix(
        title="Make the program id 64-bit: tl.program_id(...).to(tl.int64)",
        edits=tuple(edits),
        applicability=Applicability.SAFE,
    )


def _fix_loop_variable(ctx: PythonContext, name: ast.Name) -> Fix | None:
    """`tl.cast(row, tl.int64) * stride`, in this product only. Not `row.to(tl.int64)`: under
    TRITON_INTERPRET=1 a loop variable is a plain Python int, which has no `.to`."""
    tl = tl_alias(ctx.imports)
    if tl is None:
        return None
    return Fix(
        title="Cast the loop variable to 64 bits in this product",
        edits=(ctx.replace(name, f"{tl}.cast({name.id}, {tl}.int64)"),),
        applicability=Applicability.SAFE,
    )


def _fix_loaded_index(ctx: PythonContext, operand: ast.expr) -> Fix | None:
    """`idx.to(tl.int64) * stride`, in this product only: the index keeps its type everywhere
    else (masks, comparisons, descriptor offsets), and the cast is a no-op for int64 indices."""
    tl = tl_alias(ctx.imports)
    if tl is None:
        return None
    _, _, end_line, end_col = ctx.source.node_range(operand)
    return Fix(
        title="Cast the loaded index to 64 bits in this product",
        edits=(Edit.insert(end_line, end_col, f".to({tl}.int64)"),),
        applicability=Applicability.SAFE,
    )


def _overflow_note(product: str) -> str:
    return f"`{product}` is an int32 product: it wraps past 2**31 (tensors over 2**31 elements) and the access goes out of bounds"


def _candidate_products(kernel: Kernel, runtime: set[str]) -> list[tuple[ast.BinOp, ast.expr, ast.Name]]:
    """Every `a * s` (either order) where `s` is a run-time integer parameter: (product, a, s)."""
    out = []
    for node in kernel.walk():
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            for side, other in ((node.left, node.right), (node.right, node.left)):
                if isinstance(other, ast.Name) and other.id in runtime:
                    out.append((node, side, other))
    return out


@dataclass(frozen=True)
class _Int32Indices:
    """The int32 row indices of one kernel that a product with a stride may overflow."""

    pids: dict[str, list[ast.Call]]  # locals bound only to tl.program_id(...)
    loops: dict[str, list[LoopIndex]]  # range-loop variables that grow with the input
    loaded: dict[str, LoadedIndex]  # locals bound once to a tl.load
    casts: dict[str, list[tuple[int, int]]]  # where each name is cast to 64 bits
    int32_only: set[str]  # names that feed block-pointer / descriptor offsets
    int32_only_nodes: set[int]  # ids of the nodes of those offsets


def check(ctx: PythonContext) -> Iterator[Finding]:
    for kernel in ctx.kernels:
        flow = kernel_flow(ctx, kernel)
        casts = _cast_positions(ctx, kernel)
        block_sizes = {a.id for c in kernel.calls() if flow.tl_call(c, "arange") for a in c.args if isinstance(a, ast.Name)}
        wide = _wide_params(ctx, flow, casts)
        runtime = {p.name for p in flow.runtime_int_params()
                   if not _SMALL_COUNT.search(p.name) and p.name not in block_sizes}  # blocks: TRI019's business
        runtime -= wide
        if not runtime:
            continue
        products = _candidate_products(kernel, runtime)
        if not products:
            continue
        pids = _program_ids(ctx, flow)
        for name in _persistent_ids(flow, pids):
            del pids[name]
        # Any run-time parameter that bounds a range is an integer, even one named like a pointer (`M`).
        sizes = {p.name for p in kernel.params if not flow.is_constexpr(p.name) and not _SMALL_COUNT.search(p.name)}
        operands = {name.id for _, side, _ in products if (name := index_name(side)) is not None}
        indices = _Int32Indices(pids, loop_indices(flow, operands, sizes, wide), loaded_indices(flow, operands), casts,
                                *_int32_only(flow))
        in_pointer: set[int] | None = None
        reported: set[int] = set()
        first: dict[str, list] = {}  # product text -> [node, message, fix]: a repeat is said once
        for node, side, stride in products:
            if id(node) in reported or id(node) in indices.int32_only_nodes or _small_dimension(side, stride):
                continue
            found = _classify(ctx, flow, indices, node, side, stride)
            if found is None:
                continue
            if in_pointer is None:
                in_pointer = _pointer_nodes(ctx, flow)
            if id(node) not in in_pointer:
                continue
            loaded = is_load(flow, side) or (index_name(side) is not None and index_name(side).id in indices.loaded)
            if not loaded and _only_scalar_accesses(ctx, kernel, flow, node):
                continue  # a program or loop index into a per-row vector (a loaded index may address a big table)
            reported.add(id(node))
            message, fix = found
            text = ctx.segment(node)
            seen = first.get(text)
            if seen is None:
                first[text] = [node, message, fix]
            elif seen[2] is not None and fix is not None and fix.title == seen[2].title:
                # the same product again (`alpha_ptr + t * s`, `beta_ptr + t * s`): one finding whose
                # fix edits every copy (a program-id cast already covers them all)
                edits = [e for e in fix.edits if e not in seen[2].edits]
                seen[2] = replace(seen[2], edits=seen[2].edits + tuple(edits))
        for node, message, fix in first.values():
            yield ctx.finding(node, message, [fix] if fix else [])


def _only_scalar_accesses(ctx: PythonContext, kernel: Kernel, flow: KernelFlow, node: ast.BinOp) -> bool:
    """(For a program or loop index.) Every load/store the product reaches reads or writes one element (`tl.load(ks_ptr + row *
    ks_stride)`, `tl.store(cu_seqlens + i * stride, n)`): a per-row vector of row-count length,
    whose offsets stay far below 2**31. A tile access (`x_ptr + row * stride + cols`) is a row of a
    large tensor and stays reported."""
    tiles = tile_values(ctx, kernel)
    reached = [a for a in flow.accesses if a.pointer is not None
               and any(n is node for n in flow.expand(a.pointer))]
    return bool(reached) and not any(tiles.is_tile(a.pointer) for a in reached)


def _cast_before(casts: dict[str, list[tuple[int, int]]], name: str, node: ast.AST) -> bool:
    """The author casts `name` to 64 bits somewhere before this product: they handle the width."""
    return any(pos < position(node) for pos in casts.get(name, []))


def _classify(ctx: PythonContext, flow: KernelFlow, indices: _Int32Indices, node: ast.BinOp, side: ast.expr,
              stride: ast.Name) -> tuple[str, Fix | None] | None:
    """The message and fix for `side * stride` when `side` is an int32 row index, else None."""
    product = ctx.segment(node)
    if flow.tl_call(side, "program_id"):
        return _pid_message(product), _fix(ctx, [side])  # type: ignore[list-item]
    name = index_name(side)
    if name is not None and _cast_before(indices.casts, name.id, node):
        return None
    if isinstance(side, ast.Name) and side.id in indices.pids:
        if side.id in indices.int32_only:
            return _pid_message(product), _fix_product(ctx, side)
        return _pid_message(product), _fix(ctx, indices.pids[side.id])
    if isinstance(side, ast.Name) and side.id in indices.loops:
        message = (f"{_overflow_note(product)}: the loop variable `{side.id}` is int32 like its range bounds; "
                   f"cast it in the product: `tl.cast({side.id}, tl.int64) * {stride.id}`")
        return message, _fix_loop_variable(ctx, side)
    if not is_stride_like(stride.id):
        return None  # a loaded index times a size: too often fed int64 indices to warn
    if name is not None and name.id in indices.loaded:
        message = (f"{_overflow_note(product)} when `{name.id}` is loaded from an int32 index tensor; "
                   f"cast the index: `{name.id}.to(tl.int64)` (a no-op for int64 indices)")
        return message, _fix_loaded_index(ctx, name)
    if is_load(flow, side):
        message = (f"{_overflow_note(product)} when the index is loaded from an int32 tensor; "
                   f"cast it: `tl.load(...).to(tl.int64)` (a no-op for int64 indices)")
        return message, _fix_loaded_index(ctx, side)
    return None


def _pid_message(product: str) -> str:
    return (
        f"`{product}` is an int32 product: it wraps past 2**31 (tensors over 2**31 elements, e.g. "
        f"long sequences) and the access goes out of bounds; make the program id 64-bit with "
        f"`tl.program_id(...).to(tl.int64)`"
    )
