"""TRI060 moe-padding-tiles: a grouped GEMM (or any loop over an expert's rows) whose tiles run over
the padded extent while the real count is in the kernel's hands and never bounds them.

Two shapes, both decided by the kernel's own source:

1. **The sorted (token, expert) list** (vLLM's ``fused_moe_kernel`` family, SGLang's, flag-gems'):
   the launcher sizes the grid from the worst-case padded length (``sorted_token_ids.size(0)``, every
   expert padded by BLOCK_M - 1), and the alignment writes the real padded total to
   ``num_tokens_post_padded``. Every real kernel returns early once ``pid_m * BLOCK_SIZE_M`` reaches it.
   Reported when a kernel takes a ``*post_padded*`` parameter, loads a per-tile table at a
   program-dependent index (``tl.load(expert_ids_ptr + pid_m)``), and no comparison anywhere relates a
   program-dependent value to the padded total: programs past it read ``expert_ids`` entries the
   alignment never wrote (``torch.empty``: any value, an expert index out of range) and stream a
   weight tile for rows that are all padding.
2. **A loop over an expert's rows bounded by the capacity** (the masked layout ``[E, capacity, H]`` of
   DeepEP-style dispatch, or a CSR ``offsets`` layout): ``for start in range(0, CAPACITY, BLOCK)``
   whose rows are masked by a count the kernel loaded for this program (``cnt = tl.load(masked_m_ptr +
   e)`` or ``tl.load(offs + e + 1) - tl.load(offs + e)``), where the bound reads nothing of that count
   and every store in the loop is masked by it: the iterations past ``cnt`` do only masked work.
   Not reported: ``tl.static_range`` and constexpr bounds (a compile-time trip count), loops whose body
   tests the row against the count in an ``if`` (the iteration is skipped), loops with an unmasked
   store (writing the padding, e.g. zeros, is the point).
"""
from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Finding, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._kernel_flow import (
    bindings,
    depends_on,
    is_tl_call,
    names_in,
    program_dependent,
    taint,
)
from tritonify.diagnostics.triton_ast import Kernel, keyword

RULE = Rule(
    code="TRI060",
    name="moe-padding-tiles",
    summary="tiles over an expert's padded extent while the real count is loaded and never bounds them",
    severity=Severity.WARNING,
    # Opt-in: precision on the real-world corpus in references/rules/TRI060.md
    default=False,
)

_PADDED_TOTAL = re.compile(r"post_?pad", re.IGNORECASE)
_TABLE = re.compile(r"expert|sorted|tile", re.IGNORECASE)
_ORDERS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_PER_EXPERT = re.compile(r"expert|moe|masked_m|m_sizes|m_indptr|seg_indptr", re.IGNORECASE)


def _never(_: ast.AST) -> bool:
    return False


def _loads_from(ctx: PythonContext, call: ast.AST) -> bool:
    """``tl.load(...)``, through casts: ``tl.load(p + e).to(tl.int64)``."""
    while isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in ("to", "cast") \
            and not is_tl_call(ctx, call, "cast"):
        call = call.func.value
    if is_tl_call(ctx, call, "cast") and call.args:
        return _loads_from(ctx, call.args[0])
    return is_tl_call(ctx, call, "load")


def _ancestors(names: set[str], binds, depth: int = 0) -> set[str]:
    """`names` and every local their values are computed from."""
    out, todo = set(names), list(names)
    while todo:
        for b in binds.get(todo.pop(), []):
            for read in b.reads - out:
                out.add(read)
                todo.append(read)
    return out


def _orders(compare: ast.Compare) -> bool:
    return all(isinstance(op, _ORDERS) for op in compare.ops)


# ---- shape 1: the sorted list without the padded-total exit ---------------------------------------------
def _unguarded_table_load(ctx: PythonContext, kernel: Kernel) -> tuple[ast.Call, str, str] | None:
    padded = [p for p in kernel.param_names if _PADDED_TOTAL.search(p)]
    if not padded:
        return None
    binds = bindings(kernel)
    # the program's own index, not data loaded with it (`off_experts == -1` bounds no program)
    index_binds = {k: [b for b in v if not any(is_tl_call(ctx, n, "load") for n in b.value_nodes)]
                   for k, v in binds.items()}
    seed = lambda n: is_tl_call(ctx, n, "program_id")  # noqa: E731
    index = taint(kernel, index_binds, seed)
    pointers = [p for p in kernel.param_names if p not in padded and _TABLE.search(p)]
    found = []
    for call in kernel.calls():
        if not (is_tl_call(ctx, call, "load") and call.args):
            continue
        address = call.args[0]
        tables = [p for p in pointers if p in names_in(address)]
        if tables and depends_on(address, index, seed):
            found.append((call, tables[0], padded[0]))
    if not found:
        return None
    # the names the tables are indexed with, back to the program id (pid_m <- pid <- tl.program_id(0));
    # a bound on another axis (`if lora_id >= max_loras: return`) does not bound these tiles
    tile = _ancestors({n for call, _, _ in found for n in names_in(call.args[0]) & index}, index_binds) & index
    from_padded = taint(kernel, binds, _never, padded)

    def moves(e: ast.AST) -> bool:
        return bool(names_in(e) & tile) or any(seed(n) for n in ast.walk(e))

    for node in kernel.walk():
        if not (isinstance(node, ast.Compare) and _orders(node)):
            continue
        sides = [node.left, *node.comparators]
        for i, a in enumerate(sides):
            for b in sides[i + 1:]:
                if (moves(a) and not moves(b) and names_in(b) & from_padded) or (
                        moves(b) and not moves(a) and names_in(a) & from_padded):
                    return None   # `if pid_m * BLOCK_SIZE_M >= num_tokens_post_padded: return`, or a mask of it
                if (moves(a) != moves(b)) and _in_early_exit(ctx, node):
                    return None   # `if pid >= num_valid_tokens: return`: the tiles are bounded by another real count
    # the per-tile expert id first: that is the read that goes past what the alignment wrote
    found.sort(key=lambda hit: "expert" not in hit[1].lower())
    return found[0]


def _in_early_exit(ctx: PythonContext, compare: ast.Compare) -> bool:
    """The compare is (part of) the test of an ``if`` whose body returns."""
    node: ast.AST | None = compare
    while node is not None and not isinstance(node, ast.stmt):
        parent = ctx.parents.get(node)
        if isinstance(parent, ast.If) and node is parent.test:
            return any(isinstance(s, ast.Return) for s in parent.body)
        node = parent
    return False


# ---- shape 2: a loop over rows bounded by the capacity, masked by the loaded count --------------------------
def _count_names(ctx: PythonContext, kernel: Kernel, binds, prog, seed) -> set[str]:
    """Names bound only to a count read from memory for this program: ``tl.load(cnt_ptr + e)`` (a cast of
    it), or the difference of two such loads (a CSR segment's length)."""

    def is_count(value: ast.AST) -> bool:
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Sub):
            return _loads_from(ctx, value.left) and _loads_from(ctx, value.right)
        return _loads_from(ctx, value)

    lanes = taint(kernel, binds, lambda n: is_tl_call(ctx, n, "arange"))
    moe_kernel = bool(_PER_EXPERT.search(kernel.name))
    out = set()
    for name, blist in binds.items():
        if name in kernel.param_names or not blist:
            continue
        if all(isinstance(b.stmt, ast.Assign) and is_count(b.value) for b in blist):
            loads = [n for b in blist for n in ast.walk(b.value) if is_tl_call(ctx, n, "load") and n.args]
            # a scalar per program: the address moves with the program, not with a lane
            if not loads or not all(depends_on(n.args[0], prog, seed) and not depends_on(
                    n.args[0], lanes, lambda m: is_tl_call(ctx, m, "arange")) for n in loads):
                continue
            # an expert's count: the kernel, the pointer or the index says so (masked_m, tokens_per_expert ...)
            if moe_kernel or _PER_EXPERT.search(name) or any(
                    _PER_EXPERT.search(" ".join(sorted(names_in(n.args[0])))) for n in loads):
                out.add(name)
    return out


def _loop_bound(ctx: PythonContext, loop: ast.For) -> ast.expr | None:
    it = loop.iter
    if not isinstance(it, ast.Call) or not isinstance(loop.target, ast.Name):
        return None
    plain = isinstance(it.func, ast.Name) and it.func.id == "range"
    if not (plain or is_tl_call(ctx, it, "range")) or not it.args:
        return None   # tl.static_range: a compile-time trip count
    return it.args[1] if len(it.args) >= 2 else it.args[0]


def _row_compares(loop: ast.For, from_var: set[str], counts: set[str], from_count: set[str]) -> list[ast.Compare]:
    """``rows < cnt`` (either order) in the loop, rows read from the loop variable."""
    found = []
    for node in ast.walk(loop):
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], _ORDERS)):
            continue
        left, right = node.left, node.comparators[0]
        for rows, bound in ((left, right), (right, left)):
            if names_in(rows) & from_var and names_in(bound) & counts and not names_in(bound) & from_var:
                found.append(node)
                break
    return found


def _stores_masked(ctx: PythonContext, loop: ast.For, from_count: set[str], compares: list[ast.Compare]) -> bool:
    compare_ids = {id(c) for c in compares}
    for node in ast.walk(loop):
        if is_tl_call(ctx, node, "store") or (isinstance(node, ast.Call) and is_tl_call(
                ctx, node, "atomic_add", "atomic_max", "atomic_min", "atomic_xchg", "atomic_cas", "atomic_or",
                "atomic_and")):
            mask = keyword(node, "mask")
            mask_expr = mask.value if mask is not None else (node.args[2] if len(node.args) > 2 else None)
            if mask_expr is None:
                return False
            if not (names_in(mask_expr) & from_count or any(id(n) in compare_ids for n in ast.walk(mask_expr))):
                return False
    return True


def _skips_in_if(loop: ast.For, compares: list[ast.Compare], binds) -> bool:
    """An ``if`` in the loop tests the row against the count, directly or through a name
    (``should_compute = n_start < topk_len`` then ``if should_compute:``): the iteration is skipped."""
    ids = {id(c) for c in compares}
    holders = {name for name, blist in binds.items()
               if any(id(m) in ids for b in blist for m in ast.walk(b.value))}
    return any(isinstance(n, ast.If) and (any(id(m) in ids for m in ast.walk(n.test)) or names_in(n.test) & holders)
               for n in ast.walk(loop))


def _static(bound: ast.expr, kernel: Kernel, binds, depth: int = 0) -> bool:
    """The bound is known at compile time: constants, constexprs, locals computed only from them
    (``TS = tl.cdiv(S, BS)`` with S and BS constexpr)."""
    if depth > 6:
        return False
    for name in names_in(bound):
        if name in kernel.constexpr_names or name == "tl" or name == "triton":
            continue
        blist = binds.get(name, [])
        if name in kernel.param_names or not blist or not all(
                isinstance(b.stmt, (ast.Assign, ast.AnnAssign)) and _static(b.value, kernel, binds, depth + 1)
                for b in blist):
            return False
    return True


def _padded_loops(ctx: PythonContext, kernel: Kernel) -> Iterator[tuple[ast.For, ast.expr, str]]:
    loops = [n for n in kernel.walk() if isinstance(n, ast.For) and _loop_bound(ctx, n) is not None]
    if not loops or not any(is_tl_call(ctx, c, "load") for c in kernel.calls()):
        return
    binds = bindings(kernel)
    prog, seed = program_dependent(ctx, kernel, binds)
    counts = _count_names(ctx, kernel, binds, prog, seed)
    if not counts:
        return
    from_count = taint(kernel, binds, _never, counts)
    for loop in loops:
        bound = _loop_bound(ctx, loop)
        assert bound is not None
        bound_names = names_in(bound)
        if bound_names & from_count or any(is_tl_call(ctx, n, "load") for n in ast.walk(bound)):
            continue
        if _static(bound, kernel, binds):
            continue
        var = loop.target.id  # type: ignore[union-attr]
        from_var = taint(kernel, binds, _never, [var])
        compares = _row_compares(loop, from_var, counts, from_count)
        if not compares or _skips_in_if(loop, compares, binds) or not _stores_masked(ctx, loop, from_count, compares):
            continue
        count = sorted(names_in(compares[0]) & counts)[0]
        yield loop, bound, count


def check(ctx: PythonContext) -> Iterator[Finding]:
    text = ctx.source.text
    sorted_list = "post_pad" in text or "postpad" in text.lower()
    per_expert = _PER_EXPERT.search(text) is not None   # shape 2 needs an expert's count, named as one
    if not (sorted_list or per_expert):
        return
    for kernel in ctx.kernels:
        if sorted_list:
            hit = _unguarded_table_load(ctx, kernel)
            if hit is not None:
                call, table, padded = hit
                yield ctx.finding(
                    call,
                    f"`{table}` is read at this program's tile but nothing compares the tile with `{padded}`: "
                    f"the programs past the real padded total (the grid covers the worst case) read entries "
                    f"the alignment did not write for them and stream an expert's weights for rows that are all "
                    f"padding; return early: `if pid_m * BLOCK_SIZE_M >= tl.load({padded}): return`")
        for loop, bound, count in (_padded_loops(ctx, kernel) if per_expert else ()):
            yield ctx.finding(
                bound,
                f"the loop runs to `{ctx.segment(bound)}` but its rows are masked by `{count}`, the count loaded "
                f"for this program: the iterations past `{count}` do only masked work; bound the loop by "
                f"`{count}` instead")
