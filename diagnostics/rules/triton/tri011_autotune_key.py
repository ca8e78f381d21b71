"""TRI011 autotune-key: `key=` leaves out a size that the tuned block sizes tile. (`key=[]` on
several configs is TRI048's; an entry that names no parameter is TRI053's, in the default set.)"""
from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Applicability, Edit, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._autotune_call import (
    autotune_arg,
    read_configs,
    resolve_list,
)
from tritonify.diagnostics.rules.triton._kernel_flow import bindings, names_in, taint
from tritonify.diagnostics.rules.triton._memory_flow import kernel_flow
from tritonify.diagnostics.compile.signature import kernel_do_not_specialize
from tritonify.diagnostics.rules.triton._launch_sites import launches
from tritonify.diagnostics.triton_ast import Kernel, tl_name, walk_nodes

RULE = Rule(
    code="TRI011",
    name="autotune-key",
    summary="autotune key omits a size that tuned block sizes tile",
    severity=Severity.WARNING,
    fixable=True, safe_fix=False,
    # Opt-in: 4 of 19 findings were true positives in round 2 of the real-world study
    # (benchmarks/realworld/labels/round2_*.csv), under the 90% the default set requires.
    default=False,
)

_ORDER = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def key_entries(ctx: PythonContext, autotune: ast.Call, index: int = 1,
                name: str = "key") -> tuple[ast.expr | None, list[ast.Constant] | None]:
    """The key expression as written and its string entries; entries None when not a literal list.
    `index`/`name`: another list-of-names argument of `triton.autotune` (`reset_to_zero`: 3, `restore_value`: 4)."""
    written = autotune_arg(autotune, index, name)
    literal = resolve_list(ctx, written)
    if not isinstance(literal, (ast.List, ast.Tuple)):
        return written, None
    if not all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in literal.elts):
        return written, None
    return literal, list(literal.elts)  # type: ignore[arg-type]


def _is_cdiv(ctx: PythonContext, call: ast.Call) -> bool:
    if tl_name(ctx.imports, call.func) == "cdiv":
        return True
    path = ctx.imports.resolve(call.func) or ""
    return path in ("triton.cdiv", "cdiv")


def _is_range(ctx: PythonContext, call: ast.Call) -> bool:
    if isinstance(call.func, ast.Name) and call.func.id == "range":
        return True
    return tl_name(ctx.imports, call.func) in ("range", "static_range")


_READS = {"load", "atomic_add", "atomic_cas", "atomic_xchg", "atomic_max", "atomic_min", "atomic_and",
          "atomic_or", "atomic_xor"}


def _size_names(ctx: PythonContext, expr: ast.AST) -> set[str]:
    """Names a size expression is computed from, not looking into a `tl.load`: a length read from
    memory (`tl.load(seq_lens + pid // s_q)`) is data, and the parameters that only locate it
    (`s_q` turning a program id into a batch index) are no size the blocks tile. A program id
    divided by, or taken modulo, a parameter only makes an index: that divisor is left out too."""
    out: set[str] = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Call) and tl_name(ctx.imports, node.func) in _READS:
            continue
        if (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.FloorDiv, ast.Mod))
                and _is_program_id(ctx, node.left)):
            stack.append(node.left)
            continue
        if isinstance(node, ast.Name):
            out.add(node.id)
        stack.extend(ast.iter_child_nodes(node))
    return out


def _is_program_id(ctx: PythonContext, node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and tl_name(ctx.imports, node.func) == "program_id" or (
        isinstance(node, ast.Name) and node.id in _PID_NAMES)


_PID_NAMES = {"pid", "pid_m", "pid_n", "pid_t", "pid_b", "pid_h", "pid_bh", "program_id", "bid", "i_bh", "i_b"}


def _bit_test(node: ast.AST) -> bool:
    """`(i_t & (1 << ell)) > 0`: a bit test, not a bound on a tile."""
    return isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.LShift, ast.RShift))


def _whole_unit_index(ctx: PythonContext, binds: dict, node: ast.AST) -> bool:
    """`batch_id` with `batch_id = pid // blocks_per_batch`: the program id divided by a count of
    blocks indexes a whole batch (`batch_id < batch_size` is a grid-tail guard, not a tile bound)."""
    values = [node]
    if isinstance(node, ast.Name):
        values = [b.value for b in binds.get(node.id, [])]
    return bool(values) and all(
        isinstance(v, ast.BinOp) and isinstance(v.op, ast.FloorDiv) and _is_program_id(ctx, v.left) for v in values)


def driving_sizes(ctx: PythonContext, kernel: Kernel, blocks: set[str], meta: set[str],
                  companions: dict[str, set[str]] | None = None) -> dict[str, ast.AST]:
    """Parameters that a tuned block size tiles, with the first place that shows it:
    `tl.cdiv(n, BLOCK)`, `(n + BLOCK - 1) // BLOCK`, `range(0, n, BLOCK)`, or a mask
    `offs < n` where offs is built from BLOCK. Sizes reached through locals count
    (`hi = N_CTX; range(0, hi, BLOCK_N)`). `companions`, when given, receives for each size the
    other parameters behind the same bound (`chunk_elements = chunk_size * D`)."""
    if not blocks:
        return {}
    binds = bindings(kernel)
    by_block = taint(kernel, binds, lambda n: False, seed_names=blocks)
    # runtime sizes only: a constexpr parameter is a launcher constant more often than a shape
    candidates = {p.name for p in kernel.params if not p.constexpr} - meta - blocks

    def params_behind(expr: ast.AST) -> set[str]:
        out, todo, seen = set(), list(_size_names(ctx, expr)), set()
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            if name in candidates:
                out.add(name)
            elif name not in by_block:
                for b in binds.get(name, []):
                    if not isinstance(b.stmt, ast.For) and b.value is not None:
                        todo.extend(_size_names(ctx, b.value))
        return out

    def tiled(expr: ast.AST) -> bool:
        return bool(names_in(expr) & by_block)

    found: dict[str, ast.AST] = {}

    def note(size_expr: ast.AST, where: ast.AST) -> None:
        behind = params_behind(size_expr)
        for name in sorted(behind):
            found.setdefault(name, where)
            if companions is not None:
                companions.setdefault(name, set()).update(behind - {name})

    for node in kernel.walk():
        if isinstance(node, ast.Call) and _is_cdiv(ctx, node) and len(node.args) == 2 and tiled(node.args[1]):
            note(node.args[0], node)
        elif isinstance(node, ast.Call) and _is_range(ctx, node) and len(node.args) >= 3 and tiled(node.args[2]):
            note(node.args[1], node)
        elif (
            isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv) and tiled(node.right)
            and isinstance(node.left, ast.BinOp) and tiled(node.left)
        ):
            note(node.left, node)
        elif (
            isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], _ORDER)
            and (tiled(node.left) or tiled(node.comparators[0]))
            and not any(_bit_test(side) or _whole_unit_index(ctx, binds, side)
                        for side in (node.left, node.comparators[0]))
        ):
            # offs < n, offs_k < K - k * BLOCK_K: a side built from the block bounds a size
            note(node, node)
    return found


# A sequence length changes with every call (`T`, `seq_len`, `num_tokens`): keying on it would
# re-tune on every new length, so libraries leave it out on purpose and key on the model sizes.
_SEQUENCE = re.compile(r"^(T|L|S|N_CTX|n_ctx)$|^T_(q|k|kv|v|in|out)$|seq_?len|token|^max_seq", re.IGNORECASE)
# A value compared with data (`b_g > threshold`) is not a size at all.
_VALUE = re.compile(r"thresh|eps|scale|alpha|beta|temperature|softcap|value|limit", re.IGNORECASE)
# An offset into a dimension (`T_OFFSET`, `start`) moves the tile; it is not a size to tune for.
_OFFSET = re.compile(r"offset|^start$|_start$|^begin", re.IGNORECASE)
# A key on the total element count (`num_elements`, `n_elements`, `numel`) already changes with every
# factor of it: the rows and columns it is the product of need no entry of their own.
_TOTAL = re.compile(r"^(n|num|total)_?(el|elem|elems|elements)$|numel", re.IGNORECASE)
# Words that mark a key entry as a bucketed stand-in for a size (`_M_NPO2`, `M_CLOSEST`, `BUCKET_M`).
_BUCKET_WORDS = {"npo2", "np2", "pow2", "p2", "closest", "bucket", "bucketed", "rounded", "log2", "padded", "next"}


def _bucketed(size: str, keyed: set[str | None]) -> bool:
    """The key holds a bucketed stand-in for the size (`M_CLOSEST`, `_M_NPO2`, `M_bucket`, `bucket_M`
    for `M`): the launcher rounds it so that the config is chosen per bucket, not per exact size."""
    for k in keyed:
        if not k:
            continue
        bare = k.lstrip("_")
        if bare != size and (bare.startswith(size + "_") or bare.endswith("_" + size)):
            return True
    return False


# `in_h`/`out_h`, `IH`/`OH`, `input_w`/`output_w`: the input and output extents of a pool, resize or
# convolution, one a function of the other and of the op's kernel, stride or scale.
_EXTENT = re.compile(r"^(in|out|input|output|i|o)_?(h|w|d|t|l|height|width|depth|len)$", re.IGNORECASE)
_SWAP = {"in": "out", "out": "in", "input": "output", "output": "input", "i": "o", "o": "i"}


def _other_extent_keyed(size: str, keyed: set[str | None]) -> bool:
    """The size is one side of an input/output extent pair whose other side is keyed (`out_h` with
    `in_h` in the key): the output of a pool or resize follows from its input."""
    m = _EXTENT.match(size)
    if not m:
        return False
    side, axis = m.group(1), m.group(2)
    other = _SWAP[side.lower()]
    other = other.upper() if side.isupper() else other
    sep = size[len(side):len(size) - len(axis)]
    return f"{other}{sep}{axis}" in keyed


def _derived_from_keyed(ctx: PythonContext, kernel: Kernel, size: str, keyed: set[str | None]) -> bool:
    """At every launch of the kernel in this file, the argument for `size` and the argument for a
    keyed parameter come from the same host scalar (`M_padded=M + pad` next to
    `M_CLOSEST=get_closest_m(M)`, `in_h` computed from the keyed `out_h`): the key already follows it."""
    found = launches(ctx, kernel)
    if not found:
        return False
    for launch in found:
        arg = launch.args.get(size)
        if arg is None:
            return False
        mine = _host_scalars(ctx, arg, launch.host)
        if not mine or not any(k in launch.args and mine & _host_scalars(ctx, launch.args[k], launch.host)
                               for k in keyed if k and k != size):
            return False
    return True


def _host_scalars(ctx: PythonContext, expr: ast.expr, host: ast.FunctionDef | None, depth: int = 0) -> set[str]:
    """The host names an argument is computed from, through the launcher's assignments (three
    levels); tensors (the base of `.shape`, `.size()`, an index or a call) are not scalars."""
    tensors = {n.value.id for n in walk_nodes(expr)
               if isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.value, ast.Name)}
    names = {n.id for n in walk_nodes(expr) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - tensors
    names -= {n.func.id for n in walk_nodes(expr) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    out = set(names)
    if depth < 3 and host is not None:
        for node in ctx.walk(host):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and node.targets[0].id in names:
                out |= _host_scalars(ctx, node.value, host, depth + 1)
    return out


def _meta_names(ctx: PythonContext, kernel: Kernel, config_names: set[str]) -> set[str]:
    """Names the autotuner or `@triton.heuristics` supply: they are not sizes the caller passes."""
    names = set(config_names)
    if kernel.heuristics is not None:
        table = autotune_arg(kernel.heuristics, 0, "values")
        if isinstance(table, ast.Dict):
            names |= {k.value for k in table.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    return names


def _append_edit(ctx: PythonContext, key_list: ast.expr, names: list[str]) -> Edit:
    text = ", ".join(f'"{n}"' for n in names)
    elts = getattr(key_list, "elts", [])
    if elts:
        _, _, line, col = ctx.source.node_range(elts[-1])
        return Edit.insert(line, col, f", {text}")
    return ctx.replace(key_list, f"[{text}]")


def closest_parameter(name: str, params: list[str]) -> str | None:
    """The parameter a misspelt key entry most likely means (`k` -> `K`, `n_element` -> `n_elements`)."""
    same_case = [p for p in params if p.lower() == name.lower()]
    if same_case:
        return same_case[0]
    close = difflib.get_close_matches(name, params, n=1, cutoff=0.6)
    return close[0] if close else None


def missing_sizes(ctx: PythonContext, kernel: Kernel, entries: list[ast.Constant], configs) -> tuple[list[str], dict]:
    """(sizes the tuned block sizes tile that the key leaves out, where each is tiled): shared with
    TRI048, which reports `key=[]` on several configs and names the sizes its fix adds."""
    keyed = {e.value for e in entries} | {
        closest_parameter(e.value, kernel.param_names) for e in entries if e.value not in kernel.param_names
    }
    meta = _meta_names(ctx, kernel, configs.meta_names)
    companions: dict[str, set[str]] = {}
    sizes = driving_sizes(ctx, kernel, configs.varied or set(), meta, companions)
    flow = kernel_flow(ctx, kernel)  # bases of memory accesses (`cu_seqlens_ptr`): pointers, not sizes
    pointers = {r for a in flow.accesses if a.pointer is not None for r in flow.pointer_roots(a.pointer)}
    unspecialized = kernel_do_not_specialize(ctx.imports, kernel)  # values that change every call, by design
    totals = any(k and _TOTAL.search(k) for k in keyed)
    missing = [n for n in sizes if n not in keyed and n not in pointers and not _SEQUENCE.match(n)
               and not _VALUE.search(n) and not _OFFSET.search(n) and n not in unspecialized
               and not totals and not _bucketed(n, keyed) and not companions.get(n, set()) & keyed
               and not _other_extent_keyed(n, keyed)
               and not _derived_from_keyed(ctx, kernel, n, keyed)]
    return missing, sizes


def add_to_key(ctx: PythonContext, kernel: Kernel, key_list: ast.expr, missing: list[str]) -> list[Fix]:
    """The fix that appends `missing` to the key, where the key list is written in the decorator."""
    written_here = key_list is autotune_arg(kernel.autotune, 1, "key")
    return (
        [Fix(
            title=f"Add {', '.join(missing)} to the autotune key",
            edits=(_append_edit(ctx, key_list, missing),),
            applicability=Applicability.UNSAFE,
        )]
        if missing and written_here else []
    )


def check(ctx: PythonContext) -> Iterator[Finding]:
    for kernel in ctx.kernels:
        if kernel.autotune is None:
            continue
        key_list, entries = key_entries(ctx, kernel.autotune)
        if entries is None or key_list is None:
            continue
        if not entries:
            continue  # `key=[]`: TRI048 reports it where several configs are tuned
        configs = read_configs(ctx, kernel.autotune)
        if not configs.many:
            continue  # one config: nothing is tuned, the key is never consulted
        # an entry that is no parameter is TRI053's (with the correction as its fix)
        missing, sizes = missing_sizes(ctx, kernel, entries, configs)
        if missing:
            pronoun = "it" if len(missing) == 1 else "them"
            where = ", ".join(f"`{n}` ({ctx.segment(sizes[n]) or 'tiled'})" for n in missing)
            yield ctx.finding(
                key_list,
                f"the configs vary block sizes that tile {where}, but the key leaves {pronoun} out: the config "
                f"tuned for the first shape is reused for every other; add {pronoun} to `key` (bucket a size that "
                "changes every call, e.g. with `triton.next_power_of_2`, in the launcher)",
                add_to_key(ctx, kernel, key_list, missing),
            )
