"""TRI063 exp-in-dense-attention-tile: `tl.exp(qk - m[:, None])` on the score tile of a dense
prefill/extend flash-attention loop, where `tl.exp2` with log2(e) folded into the scale already
applied to the scores was measured 4-8% faster on an H200 (two runs, head dim 64-128).

The precise part of TRI010 (which stays opt-in for the rest), split out to be in the default set.
It starts from TRI010's findings (`_score_exps.py`: an exp in a `tl.dot` loop carrying the scores
elementwise, not a decode/split-KV kernel, NVIDIA or unknown target) and reports one only where
every condition of the compute-bound tile is read from the source:
- the exp is the online-softmax shift of the scores, `tl.exp(S - m[:, None])`, and the loop
  multiplies the scores by a scale (`qk *= sm_scale`, `scale * tl.dot(q, k)`): there is a scale
  to fold log2(e) into;
- the score tile's rows are a block of query rows: the dot's query operand is indexed by
  `tl.arange(0, BLOCK_M)` for a constexpr parameter named as a query-row block (`BLOCK_M`,
  `BLOCK_Q`, `BLOCK_SIZE_M`), not heads or a GQA group (`BLOCK_H`, `num_queries_per_kv`: one token
  per program, memory-bound), and no launch site or autotune config gives it 1;
- the head dim is under 512 wherever the launch sites, defaults or autotune configs give it (at
  D >= 512, MLA, the fold measured <= 3.7%);
- K and V reach the dots as loaded values (cast or scaled at most): not bit-unpacked or computed
  by a helper (a dequantising tile: the multiply is noise beside the unpacking), and K not
  gathered through a loaded top-k selection (sparse attention: gather-bound);
- no docstring of the kernel or its module promises bit-exact results (the rewrite changes the
  last bits).
"""
from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Finding, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._kernel_flow import is_tl_call, names_in, taint
from tritonify.diagnostics.rules.triton._launch_sites import launches
from tritonify.diagnostics.rules.triton._score_exps import LOG2E, ScoreExp, exp2_fixes, is_dot, on_scores, score_exps
from tritonify.diagnostics.rules.triton._static_sizes import kernel_sizes
from tritonify.diagnostics.rules.triton._tile_values import tile_values
from tritonify.diagnostics.triton_ast import Kernel, tl_name, walk_nodes

RULE = Rule(
    code="TRI063",
    name="exp-in-dense-attention-tile",
    summary="tl.exp on the score tile of a dense prefill flash-attention loop (tl.exp2 with log2(e) folded into the scale: 4-8% on H200)",
    severity=Severity.INFO,
    fixable=True, safe_fix=False,
)

# A constexpr block of query rows (not heads, not a GQA group).
_QUERY_ROWS = re.compile(r"^BLOCK(_SIZE)?_(M|Q)$", re.IGNORECASE)
# A loaded selection of KV positions per query (sparse / top-k attention), not a page table.
_SELECTION = re.compile(r"topk|top_k|sparse|selected", re.IGNORECASE)
_BIT_EXACT = re.compile(r"bit[- ]?(exact|identical|wise|for[- ]bit)", re.IGNORECASE)
_BIT_OPS = (ast.LShift, ast.RShift, ast.BitAnd, ast.BitOr, ast.BitXor, ast.Invert)
# tl calls that pass a loaded value through (their tensor arguments are followed)
_PASS = {"trans", "permute", "reshape", "view", "where", "cast", "broadcast_to", "expand_dims", "maximum", "minimum",
         "multiple_of", "max_contiguous", "zeros", "full", "zeros_like", "full_like"}
_MIN_HEAD_DIM_NOT_REPORTED = 512


def _binds(ctx: PythonContext, kernel: Kernel):
    return tile_values(ctx, kernel).binds  # the kernel's bindings, built once per file


def _shift_form(arg: ast.expr) -> bool:
    """`S - m[:, None]` as written (no data flow asked)."""
    if not (isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Sub) and isinstance(arg.right, ast.Subscript)):
        return False
    sl = arg.right.slice
    return (isinstance(sl, ast.Tuple) and len(sl.elts) == 2 and isinstance(sl.elts[0], ast.Slice)
            and isinstance(sl.elts[1], ast.Constant) and sl.elts[1].value is None)


def _has_query_block(kernel: Kernel) -> bool:
    return any(p.constexpr and _QUERY_ROWS.match(p.name) for p in kernel.params)


def _online_shift(ctx: PythonContext, kernel: Kernel, arg: ast.expr) -> bool:
    """`S - m[:, None]`: the scores minus the broadcast running (or block) row max."""
    return _shift_form(arg) and on_scores(ctx, kernel, arg.left) and not on_scores(ctx, kernel, arg.right)


def _scaled(ctx: PythonContext, kernel: Kernel, shifted: ast.expr) -> bool:
    """The scores that reach the exp were multiplied (or divided) by something that is not a score
    tile on the way from `tl.dot` (`qk *= sm_scale`, `scale * tl.dot(q, k)`): a scale to fold into."""
    binds = _binds(ctx, kernel)
    todo, upstream = list(names_in(shifted)), set()
    while todo:
        name = todo.pop()
        if name in upstream or not on_scores(ctx, kernel, ast.Name(name, ast.Load())):
            continue
        upstream.add(name)
        for b in binds.get(name, ()):
            todo.extend(names_in(b.value))
    values = [shifted] + [b.value for name in upstream for b in binds.get(name, ())]
    for b in (b for name in upstream for b in binds.get(name, ())):
        n = b.stmt
        if isinstance(n, ast.AugAssign) and isinstance(n.op, (ast.Mult, ast.Div)) and not on_scores(ctx, kernel, n.value):
            return True
    for value in values:
        for n in walk_nodes(value):
            if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Mult, ast.Div)):
                left, right = on_scores(ctx, kernel, n.left), on_scores(ctx, kernel, n.right)
                if left != right and (left or not isinstance(n.op, ast.Div)):
                    return True
    return False


def _dots(ctx: PythonContext, kernel: Kernel, loop: ast.stmt) -> tuple[list[ast.Call], list[ast.Call]]:
    """The loop's score dots (`tl.dot(q, k)`) and value dots (`tl.dot(p, v)`, p from the scores)."""
    qk, pv = [], []
    for n in walk_nodes(loop):
        if is_dot(ctx, n) and len(n.args) >= 2:
            (pv if on_scores(ctx, kernel, n.args[0]) else qk).append(n)
    return qk, pv


def _arange_taint(ctx: PythonContext, kernel: Kernel, size_names: set[str]) -> set[str]:
    """Names whose value depends on a `tl.arange` sized by one of `size_names`."""
    def seed(n: ast.AST) -> bool:
        return is_tl_call(ctx, n, "arange") and any(names_in(a) & size_names for a in n.args)
    key = ("tri063-arange", kernel.node, frozenset(size_names))
    return ctx.per_file(key, lambda: taint(kernel, _binds(ctx, kernel), seed))


def _values(ctx: PythonContext, kernel: Kernel, name: str) -> set[int]:
    """Known values of a constexpr parameter: defaults, autotune configs, literal launch arguments."""
    return ctx.per_file(("tri063-values", kernel.node, name), lambda: _read_values(ctx, kernel, name))


def _read_values(ctx: PythonContext, kernel: Kernel, name: str) -> set[int]:
    sizes = kernel_sizes(ctx, kernel)
    out = {v for sc in sizes.scenarios if (v := sizes.value(ast.Name(name, ast.Load()), sc)) is not None}
    for launch in launches(ctx, kernel):
        arg = launch.args.get(name)
        if isinstance(arg, ast.Constant) and isinstance(arg.value, int) and not isinstance(arg.value, bool):
            out.add(arg.value)
    return out


def _query_rows(ctx: PythonContext, kernel: Kernel, q: ast.expr) -> str | None:
    """The query-row block parameter that indexes the dot's query operand, if it is > 1 where known."""
    for p in kernel.params:
        if not (p.constexpr and _QUERY_ROWS.match(p.name)):
            continue
        tainted = _arange_taint(ctx, kernel, {p.name})
        if not (names_in(q) & tainted):
            continue
        if any(v <= 1 for v in _values(ctx, kernel, p.name)):
            return None
        return p.name
    return None


def _arange_sizes(ctx: PythonContext, kernel: Kernel) -> set[str]:
    """Constexpr parameters some `tl.arange` of the kernel reads (the tile sizes)."""
    def build() -> set[str]:
        constexprs = {p.name for p in kernel.params if p.constexpr}
        return {n for c in kernel.calls() if is_tl_call(ctx, c, "arange") for a in c.args for n in names_in(a)} & constexprs
    return ctx.per_file(("tri063-arange-sizes", kernel.node), build)


def _head_dim_large(ctx: PythonContext, kernel: Kernel, q: ast.expr, rows: str) -> bool:
    """A size the query operand is indexed by (other than its rows) is >= 512 where known."""
    read = names_in(q)
    for name in sorted(_arange_sizes(ctx, kernel) - {rows}):
        large = [v for v in _values(ctx, kernel, name) if v >= _MIN_HEAD_DIM_NOT_REPORTED]
        if large and read & _arange_taint(ctx, kernel, {name}):
            return True
    sizes = kernel_sizes(ctx, kernel)
    for sc in sizes.scenarios:
        shape = sizes.shape(q, sc)
        if shape and len(shape) == 2 and shape[-1] >= _MIN_HEAD_DIM_NOT_REPORTED:
            return True
    return False


def _plain(ctx: PythonContext, kernel: Kernel, expr: ast.AST, seen: set[str]) -> bool:
    """The value is a load, cast or scaled at most: not bit-unpacked, not computed by a helper."""
    binds = _binds(ctx, kernel)
    if isinstance(expr, ast.Name):
        if expr.id in seen:
            return True
        seen.add(expr.id)
        blist = binds.get(expr.id)
        if not blist:
            return expr.id in kernel.param_names or expr.id not in binds
        return all(not isinstance(b.stmt, ast.For) and _plain(ctx, kernel, b.value, seen) for b in blist)
    if isinstance(expr, ast.Constant):
        return True
    if isinstance(expr, ast.Call):
        name = tl_name(ctx.imports, expr.func)
        if name == "load" or (isinstance(expr.func, ast.Attribute) and expr.func.attr == "load"):
            return not _through_unpacked(ctx, kernel, expr)
        if isinstance(expr.func, ast.Attribute) and name is None and expr.func.attr in ("to", "trans", "permute", "reshape"):
            return _plain(ctx, kernel, expr.func.value, seen)
        if name in _PASS:
            args = expr.args[1:] if name == "where" else expr.args[:1]
            return all(_plain(ctx, kernel, a, seen) for a in args)
        return False
    if isinstance(expr, ast.BinOp):
        return not isinstance(expr.op, _BIT_OPS) and _plain(ctx, kernel, expr.left, seen) and _plain(ctx, kernel, expr.right, seen)
    if isinstance(expr, ast.UnaryOp):
        return not isinstance(expr.op, _BIT_OPS) and _plain(ctx, kernel, expr.operand, seen)
    if isinstance(expr, ast.Attribute):
        return _plain(ctx, kernel, expr.value, seen)
    if isinstance(expr, ast.Subscript):
        return _plain(ctx, kernel, expr.value, seen)
    if isinstance(expr, ast.IfExp):
        return _plain(ctx, kernel, expr.body, seen) and _plain(ctx, kernel, expr.orelse, seen)
    return False


def _unpacked(ctx: PythonContext, kernel: Kernel) -> tuple[set[str], object]:
    """Names computed by bit operations on loaded values (codes unpacked from packed words)."""
    def build():
        binds = _binds(ctx, kernel)
        loaded = taint(kernel, binds, lambda n: is_tl_call(ctx, n, "load"))

        def seed(n: ast.AST) -> bool:
            return (isinstance(n, ast.BinOp) and isinstance(n.op, _BIT_OPS)
                    and (bool(names_in(n) & loaded) or any(is_tl_call(ctx, c, "load") for c in walk_nodes(n))))
        return taint(kernel, binds, seed), seed
    return ctx.per_file(("tri063-unpacked", kernel.node), build)


def _through_unpacked(ctx: PythonContext, kernel: Kernel, load: ast.Call) -> bool:
    """A load whose address is an unpacked code (a lookup table: `tl.load(lut + (packed >> 4) & 0xF)`)."""
    if not load.args:
        return False
    names, seed = _unpacked(ctx, kernel)
    return bool(names_in(load.args[0]) & names) or any(seed(n) for n in walk_nodes(load.args[0]))


def _gathered_by_selection(ctx: PythonContext, kernel: Kernel, k: ast.expr) -> bool:
    """K is loaded through a loaded top-k / sparse selection of positions."""
    chosen = {p.name for p in kernel.params if _SELECTION.search(p.name)}
    if not chosen:
        return False

    def seed(n: ast.AST) -> bool:
        return is_tl_call(ctx, n, "load") and bool(n.args) and bool(names_in(n.args[0]) & chosen)
    tainted = taint(kernel, _binds(ctx, kernel), seed)
    return bool(names_in(k) & tainted) or any(seed(n) for n in walk_nodes(k))


def _bit_exact(ctx: PythonContext, kernel: Kernel) -> bool:
    docs = (ast.get_docstring(kernel.node) or "", ast.get_docstring(ctx.tree) or "")
    return any(_BIT_EXACT.search(d) for d in docs)


def dense_tile(ctx: PythonContext, found: ScoreExp) -> str | None:
    """`[ROWS, ...]` when the exp is on a dense prefill flash-attention tile (TRI063's finding), else None."""
    return ctx.per_file(("tri063", found.call), lambda: _dense_tile(ctx, found))


def _dense_tile(ctx: PythonContext, found: ScoreExp) -> str | None:
    kernel, call, loop = found.kernel, found.call, found.loop
    if not _online_shift(ctx, kernel, call.args[0]) or not _scaled(ctx, kernel, call.args[0].left):
        return None
    qk, pv = _dots(ctx, kernel, loop)
    if not qk or not pv:
        return None
    rows = {dot: _query_rows(ctx, kernel, dot.args[0]) for dot in qk}
    if None in rows.values():
        return None
    if not all(_plain(ctx, kernel, dot.args[1], set()) and not _gathered_by_selection(ctx, kernel, dot.args[1])
               for dot in qk):
        return None
    if not all(_plain(ctx, kernel, dot.args[1], set()) for dot in pv) or _bit_exact(ctx, kernel):
        return None
    if any(_head_dim_large(ctx, kernel, dot.args[0], r) for dot, r in rows.items()):
        return None  # last: the shape inference costs the most
    return rows[qk[0]]


def check(ctx: PythonContext) -> Iterator[Finding]:
    for found in score_exps(ctx, _has_query_block, _shift_form):
        rows = dense_tile(ctx, found)
        if rows is None:
            continue
        message = (
            f"`tl.exp` on the score tile of a dense attention loop ({rows} query rows per program) is a multiply by "
            f"log2(e) plus `ex2` per score; use `tl.exp2` and fold {LOG2E} into the scale applied after `tl.dot` "
            f"(`qk_scale = sm_scale * {LOG2E}`, running max and rescale in base 2): 4-8% faster on an H200 "
            f"(flash-attention forward, head dim 64-128)"
        )
        yield ctx.finding(found.call, message, exp2_fixes(ctx, found.call))

