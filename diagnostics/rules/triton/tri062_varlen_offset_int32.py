"""TRI062 varlen-offset-int32: a sequence's start offset loaded from `cu_seqlens` is narrowed to
int32 and then scales an address.

Variable-length ("varlen") kernels pack a batch of sequences into one `[total_tokens, ...]` tensor
and find a sequence's first token in the cumulative offsets: `bos = tl.load(cu_seqlens + i_n)`.
Written `tl.load(cu_seqlens + i_n).to(tl.int32)`, the offset is int32 by the kernel's own hand,
whatever the caller passed, and `(bos * H + i_h) * K` (or `bos * stride`) is then an int32 product
that wraps once the packed tensor holds 2**31 elements: 524,288 tokens of 32 heads x 128. The
upstream project these kernels come from changed exactly these loads to `.to(tl.int64)` across its
kernels after long-sequence faults (fla-org/flash-linear-attention#769, #818, #964, #965, #1216);
the int32 ones left are copies from before that fix or kernels it did not reach.

Split out of TRI006's territory (TRI006 follows bare loads times a stride and is opt-in): here the
width is certain from the source (the explicit int32 narrowing), and the offset is a token position
in the whole packed batch, so the reported product spans the packed tensor.

Reported once per assignment of the narrowed offset(s), at the cast, when the local reaches a
multiplication inside the address of a load, store, atomic or `make_block_ptr`/tensor-descriptor
base, with no 64-bit value in that product. Not reported: block-pointer or descriptor *offsets*
(Triton requires int32 there), a narrowed offset used only in masks, lengths or comparisons, and
indices loaded from other tables (chunk indices, expert ids: TRI006's business).
"""
from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Applicability, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._memory_flow import KernelFlow, kernel_flow
from tritonify.diagnostics.rules.triton.tri006_int32_offset_overflow import _casts_to_int64, _int32_only, _pointer_nodes
from tritonify.diagnostics.triton_ast import Kernel

RULE = Rule(
    code="TRI062",
    name="varlen-offset-int32",
    summary="sequence offset loaded from cu_seqlens narrowed to int32, then multiplied into an address",
    severity=Severity.WARNING,
    fixable=True, safe_fix=False,
    # Default: the int32 width is the kernel's own cast, the offset indexes the whole packed batch,
    # and upstream fixed this exact form (fla #769/#818/#964/#965/#1216).
)

# Cumulative sequence offsets of a packed varlen batch: FlashAttention's and fla's `cu_seqlens`
# (`cu_seqlens_q`, `cu_seqlens_k`, `cu_seq_lens`), fla's older `offsets`, vLLM's `query_start_loc`.
_OFFSETS = re.compile(r"^(cu_seq_?lens\w*|cu_seqlen\w*|seq_offsets|offsets|chunk_offsets|query_start_loc\w*|cu_q\w*|cu_k\w*)$",
                      re.IGNORECASE)


def _narrowed_load(flow: KernelFlow, node: ast.AST) -> ast.expr | None:
    """For `tl.load(cu_seqlens + i).to(tl.int32)` or `tl.cast(tl.load(...), tl.int32)`: the dtype
    argument (where the fix goes). None for anything else."""
    if not isinstance(node, ast.Call):
        return None
    if isinstance(node.func, ast.Attribute) and node.func.attr == "to" and node.args:
        inner, dtype = node.func.value, node.args[0]
    elif flow.tl_call(node, "cast") and len(node.args) >= 2:
        inner, dtype = node.args[0], node.args[1]
    else:
        return None
    is_int32 = (isinstance(dtype, ast.Attribute) and dtype.attr == "int32") or (
        isinstance(dtype, ast.Constant) and dtype.value == "int32")
    if not is_int32 or not flow.tl_call(inner, "load") or not inner.args:  # type: ignore[union-attr]
        return None
    roots = flow.pointer_roots(inner.args[0])  # type: ignore[union-attr]
    return dtype if any(_OFFSETS.match(r) for r in roots) else None


_PASS_THROUGH = ("multiple_of", "max_contiguous")


def _scale(ctx: PythonContext, flow: KernelFlow, expr: ast.AST, names: set[str], seen: frozenset[str] = frozenset()) -> int | None:
    """How many multiplications scale one of the narrowed offsets inside `expr`, when `expr` holds
    it as a position (not a length, not widened): 0 for the offset itself or a sum with it
    (`bos + i_t * BT`), 1 for `bos * H`, 2 for `(bos * H + i_h) * K`; followed through locals and
    tiles. None when `expr` does not carry it: `eos - bos` (a length), a cast (`.to(tl.int64)`),
    a division."""
    if isinstance(expr, ast.Name):
        if expr.id in names:
            return 0
        if expr.id in seen or not flow.is_local(expr.id):
            return None
        found = [_scale(ctx, flow, b.value, names, seen | {expr.id}) for b in flow.bindings.get(expr.id, ()) if b.value is not None]
        found = [f for f in found if f is not None]
        return max(found) if found else None
    if isinstance(expr, ast.BinOp):
        if _wide(ctx, flow, expr.left) or _wide(ctx, flow, expr.right):
            return None  # Triton promotes the whole operation to int64: `(bos + T_range) * stride`
        left, right = _scale(ctx, flow, expr.left, names, seen), _scale(ctx, flow, expr.right, names, seen)
        if isinstance(expr.op, ast.Mult):
            carried = [x for x in (left, right) if x is not None]
            return max(carried) + 1 if carried else None
        if isinstance(expr.op, ast.Add):
            carried = [x for x in (left, right) if x is not None]
            return max(carried) if carried else None
        if isinstance(expr.op, ast.Sub):
            return left if right is None else None
        return None
    if isinstance(expr, ast.UnaryOp):
        return _scale(ctx, flow, expr.operand, names, seen)
    if isinstance(expr, ast.Subscript):
        return _scale(ctx, flow, expr.value, names, seen)
    if isinstance(expr, ast.Call) and flow.tl_call(expr, *_PASS_THROUGH) and expr.args:
        return _scale(ctx, flow, expr.args[0], names, seen)
    return None



def _wide(ctx: PythonContext, flow: KernelFlow, expr: ast.AST, seen: frozenset[str] = frozenset()) -> bool:
    """The value is 64-bit by the kernel's own hand: a `.to(tl.int64)` / `tl.cast(x, tl.int64)`,
    or a local, sum, product, quotient or remainder built from one (`i_bh = tl.program_id(2).to(tl.int64)`
    then `i_h = i_bh % H`; `chunk_id = tl.load(...).to(tl.int64)` then `T_range = chunk_id * C +
    tl.arange(0, C)`). An operation with a 64-bit operand is computed in 64 bits, so a narrowed
    offset that meets it there is widened before it can wrap."""
    if isinstance(expr, ast.Call):
        if _casts_to_int64(ctx, expr) is not None:
            return True
        if flow.tl_call(expr, *_PASS_THROUGH) and expr.args:
            return _wide(ctx, flow, expr.args[0], seen)
        if flow.tl_call(expr, "minimum", "maximum", "where") or (
                isinstance(expr.func, ast.Name) and expr.func.id in ("min", "max")):
            return any(_wide(ctx, flow, arg, seen) for arg in expr.args)
        return False
    if isinstance(expr, ast.Name):
        if expr.id in seen or not flow.is_local(expr.id):
            return False
        return any(b.value is not None and _wide(ctx, flow, b.value, seen | {expr.id})
                   for b in flow.bindings.get(expr.id, ()))
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)):
        return _wide(ctx, flow, expr.left, seen) or _wide(ctx, flow, expr.right, seen)
    if isinstance(expr, ast.UnaryOp):
        return _wide(ctx, flow, expr.operand, seen)
    if isinstance(expr, ast.Subscript):
        return _wide(ctx, flow, expr.value, seen)
    return False


# A per-token row stride of an attention operand (`q_row_stride`, `k_stride_t`): one
# multiplication by it already spans a row of heads x head size.
_ROW_STRIDE = re.compile(r"^(q|k|v|o|out|dq|dk|dv|do)_(row_|token_|seq_|t_)?stride(_(row|token|seq|t|0))?$"
                         r"|^stride_(q|k|v|o)(_?(row|token|seq|t|0))?$", re.IGNORECASE)


# The head size of a packed [tokens, heads, head size] tensor, as varlen kernels name it.
_HEAD_SIZE = re.compile(r"^(K|V|D|S|DK|DV|HEAD_DIM|HEAD_SIZE|head_dim|head_size|D_HEAD|BLOCK_DMODEL)$")


def _spans_rows(ctx: PythonContext, flow: KernelFlow, prod: ast.BinOp, names: set[str]) -> bool:
    """The product scales the offset by heads and head size (`(bos * H + i_h) * K`, `bos * H * K`:
    a row of heads x head size per token), or by an operand's per-token row stride
    (`q_bos * q_row_stride`). `bos * H` alone addresses per-head scalars (`[tokens, H]`), and a
    chunk-local matrix (`(bos * H + i_h) * BT`, `[tokens, H, 64]`) is 2 to 4 times smaller than
    the operands: both stay below 2**31 where the operands do."""
    depth = _scale(ctx, flow, prod, names)
    if depth is None:
        return False
    sides = [side.id for side in (prod.left, prod.right) if isinstance(side, ast.Name)]
    if any(_ROW_STRIDE.match(side) for side in sides):
        return True
    return depth >= 2 and any(_HEAD_SIZE.match(side) for side in sides)


def _check_kernel(ctx: PythonContext, kernel: Kernel) -> Iterator[Finding]:
    if not any(_OFFSETS.match(p.name) for p in kernel.params):
        return  # the offsets table is a parameter (an address is built on a parameter)
    flow = kernel_flow(ctx, kernel)
    # statement -> [(name, dtype node)] for each local bound to a narrowed offset load
    narrowed: dict[int, list[tuple[str, ast.expr]]] = {}
    for name, bindings in flow.bindings.items():
        for b in bindings:
            dtype = _narrowed_load(flow, b.value) if b.value is not None else None
            if dtype is not None:
                narrowed.setdefault(id(b.stmt), []).append((name, dtype))
    if not narrowed:
        return
    mults = [n for n in kernel.walk() if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult)]
    in_address: set[int] | None = None
    found: list[tuple[str, ast.expr]] = []   # the narrowed offsets that scale an address
    products: list[ast.BinOp] = []
    for pairs in narrowed.values():
        names = {name for name, _ in pairs}
        spanning = [prod for prod in mults if _spans_rows(ctx, flow, prod, names)]
        if spanning:
            if in_address is None:  # only now: following every address is the costly part
                in_address = _pointer_nodes(ctx, flow) - _int32_only(flow)[1]
            spanning = [prod for prod in spanning if id(prod) in in_address]
        if spanning:
            found.extend(pairs)   # the whole statement: `bos, eos = ...` is fixed together
            products.extend(spanning)
    if not found:
        return
    every = {name for name, _ in found}
    # shown: the product scaled most (`(boh * H + i_h) * K * V` over `(bos * H + i_h) * K`)
    widest = max(products, key=lambda prod: (_scale(ctx, flow, prod, every) or 0, len(ctx.segment(prod))))
    product = ctx.segment(widest)
    # three factors (`(boh * H + i_h) * K * V`): a per-chunk state [chunks, H, K, V], which wraps 32x sooner
    # per offset than a [tokens, H, K] operand: at 4,096 chunks of 64 tokens
    where = ("4,096 chunks, 262,144 tokens at 64 per chunk, of a 32 heads x 128 x 128 state"
             if (_scale(ctx, flow, widest, every) or 0) >= 3 else "524,288 tokens of 32 heads x 128")
    shown = product if len(product) <= 60 else product[:57] + "..."
    found.sort(key=lambda p: (p[1].lineno, p[1].col_offset))
    edits = tuple(ctx.replace(dtype, _int64(ctx, dtype)) for _, dtype in found)
    fix = Fix(title="Load the offsets as int64", edits=edits, applicability=Applicability.UNSAFE)
    loaded = ", ".join(f"`{n}`" for n, _ in found)
    yield ctx.finding(
        found[0][1],
        f"{loaded} {'is an offset' if len(found) == 1 else 'are offsets'} into the packed varlen batch, "
        f"loaded from its cumulative lengths and narrowed to int32, so `{shown}` is an int32 address "
        f"product: it wraps once the packed tensor holds 2**31 elements ({where}) "
        f"and the access goes out of bounds; load the offsets with `.to(tl.int64)` and keep "
        f"only lengths int32 (`T = (eos - bos).to(tl.int32)`)",
        [fix],
    )


def _int64(ctx: PythonContext, dtype: ast.expr) -> str:
    text = ctx.segment(dtype)
    return text[: -len("int32")] + "int64" if text.endswith("int32") else text.replace("int32", "int64")


def check(ctx: PythonContext) -> Iterator[Finding]:
    if "int32" not in ctx.source.text:
        return  # the narrowing is written out: a file that never says int32 has none
    for kernel in ctx.kernels:
        yield from _check_kernel(ctx, kernel)
