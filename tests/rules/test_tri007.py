import ast

from tritonify.diagnostics.model import Applicability, Severity

from tests.lintutil import fixed, lint, lint_fixture, marked_lines


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI007.py", "TRI007")
    assert [f.line for f in findings] == marked_lines("TRI007.py", "TRI007")
    assert all(f.severity is Severity.WARNING for f in findings)


ROW = """
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + cols, x * 2)
"""


def test_same_offsets_masked_elsewhere_gives_a_safe_fix():
    (f,) = lint(ROW, "TRI007")
    assert f.fixes[0].applicability is Applicability.SAFE
    out = fixed(ROW, f)
    assert "tl.store(y_ptr + cols, x * 2, mask=mask)" in out
    ast.parse(out)
    assert lint(out, "TRI007") == []


def test_mask_defined_after_the_access_is_not_reused():
    code = ROW.replace("    mask = cols < n_cols\n    x = tl.load(x_ptr + cols, mask=mask, other=0.0)\n    tl.store(y_ptr + cols, x * 2)\n",
                       "    tl.store(y_ptr + cols, 1.0)\n    mask = cols < n_cols\n    x = tl.load(x_ptr + cols, mask=mask, other=0.0)\n")
    (f,) = lint(code, "TRI007")
    assert f.fixes == []


def test_unused_size_gives_an_unsafe_fix():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def add(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs) + 1)
    """
    store, _load = sorted(lint(code, "TRI007"), key=lambda f: f.column)
    assert "n_elements" in store.message
    assert store.fixes[0].applicability is Applicability.UNSAFE
    out = fixed(code, store)
    assert "tl.store(out_ptr + offs, tl.load(x_ptr + offs) + 1, mask=offs < n_elements)" in out


def test_head_dim_tiles_and_divisibility_flags_stay_quiet():
    code = """
    import triton
    import triton.language as tl

    @triton.heuristics({"EVEN_N": lambda a: a["n"] % a["BLOCK"] == 0})
    @triton.jit
    def k(x_ptr, w_ptr, n, BLOCK: tl.constexpr, D: tl.constexpr, EVEN_N: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        d = tl.arange(0, D)
        w = tl.load(w_ptr + d)
        if EVEN_N:
            x = tl.load(x_ptr + offs[:, None] * D + d[None, :])
        else:
            x = tl.load(x_ptr + offs[:, None] * D + d[None, :], mask=offs[:, None] < n, other=0.0)
        tl.store(x_ptr + offs[:, None] * D + d[None, :], x * w[None, :], mask=offs[:, None] < n)
    """
    assert lint(code, "TRI007") == []


def test_clamped_offsets_stay_quiet():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        safe = tl.minimum(offs, n - 1)
        x = tl.load(x_ptr + safe)
        tl.store(x_ptr + offs, x, mask=offs < n)
    """
    assert lint(code, "TRI007") == []


def test_positional_mask_counts_as_a_mask():
    code = ROW.replace("tl.store(y_ptr + cols, x * 2)", "tl.store(y_ptr + cols, x * 2, mask)")
    assert lint(code, "TRI007") == []


def test_loop_over_full_blocks_then_masked_tail_stays_quiet():
    """Liger's Ascend cross-entropy shape: unmasked loads over `n_cols // BLOCK * BLOCK`, then one
    masked tail block. `cols < n_cols` does not bound `i + cols`."""
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
        row_ptr = x_ptr + tl.program_id(0).to(tl.int64) * n_cols
        cols = tl.arange(0, BLOCK)
        w = tl.load(out_ptr + cols, mask=cols < n_cols, other=0.0)
        n_full = (n_cols // BLOCK) * BLOCK
        acc = 0.0
        for i in tl.range(0, n_full, BLOCK):
            acc += tl.sum(tl.load(row_ptr + i + cols))
        offs = n_full + cols
        acc += tl.sum(tl.load(row_ptr + offs, mask=offs < n_cols, other=0.0))
        tl.store(out_ptr + tl.program_id(0), acc + tl.sum(w))
    """
    assert lint(code, "TRI007") == []


def test_two_dimensional_store_bounded_on_rows_fires():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(q_ptr, o_ptr, seqlen, stride, BLOCK_M: tl.constexpr, D: tl.constexpr):
        offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_d = tl.arange(0, D)
        row_mask = offs_m[:, None] < seqlen
        q = tl.load(q_ptr + offs_m[:, None] * stride + offs_d[None, :], mask=row_mask, other=0.0)
        o_ptrs = o_ptr + offs_m[:, None] * stride + offs_d[None, :]
        tl.store(o_ptrs, q * 2)
    """
    (f,) = lint(code, "TRI007")
    assert "row_mask" in f.message
    assert "tl.store(o_ptrs, q * 2, mask=row_mask)" in fixed(code, f)


def test_pointer_advanced_in_place_keeps_its_base():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, y_ptr, stride, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        x_ptr += row * stride
        y_ptr += row * stride
        x = tl.load(x_ptr + cols, mask=cols < n_cols, other=0.0)
        tl.store(y_ptr + cols, x)
    """
    (f,) = lint(code, "TRI007")
    assert f.fixes[0].applicability is Applicability.SAFE
    assert "tl.store(y_ptr + cols, x, mask=cols < n_cols)" in fixed(code, f)


def test_a_mask_with_data_in_it_is_copied_only_as_an_unsafe_fix():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, flag_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
        cols = tl.arange(0, BLOCK)
        keep = tl.load(flag_ptr + tl.program_id(0)) != 0
        x = tl.load(x_ptr + cols)
        tl.store(y_ptr + cols, x, mask=(cols < n_cols) & keep)
    """
    (f,) = lint(code, "TRI007")
    assert f.line == 9
    assert f.fixes[0].applicability is Applicability.UNSAFE
    pure = code.replace("mask=(cols < n_cols) & keep", "mask=(cols < n_cols) & (cols >= 0)")
    (g,) = lint(pure, "TRI007")
    assert g.fixes[0].applicability is Applicability.SAFE


# ---- real-world false-positive classes (round 1 of the corpus study) ---------------------------
HEAD = """
import triton
import triton.language as tl
"""


def test_a_loop_over_all_but_the_last_tile_with_a_masked_tail_is_quiet():
    code = HEAD + """
@triton.jit
def rms(x_ptr, out_ptr, n_cols, TILE: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((TILE,), dtype=tl.float32)
    steps = tl.cdiv(n_cols, TILE)
    for step in range(0, steps - 1):
        offs = step * TILE + tl.arange(0, TILE)
        acc += tl.load(x_ptr + row * n_cols + offs)
    offs = (steps - 1) * TILE + tl.arange(0, TILE)
    acc += tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc))
"""
    assert lint(code, "TRI007") == []
    # a loop over every tile (the partial one included) whose bound is computed but not applied
    every = code.replace("range(0, steps - 1)", "range(0, steps)").replace(
        "        acc += tl.load(x_ptr + row * n_cols + offs)\n",
        "        m = offs < n_cols\n        acc += tl.load(x_ptr + row * n_cols + offs)\n")
    assert len(lint(every, "TRI007")) == 1
    assert lint(every.replace("range(0, steps)", "range(0, steps - 1)"), "TRI007") == []


def test_whole_blocks_by_floor_division_are_quiet_but_a_ceiling_division_is_not():
    code = HEAD + """
@triton.jit
def attn(k_ptr, o_ptr, kv_start, kv_len, BLOCK: tl.constexpr):
    d = tl.arange(0, BLOCK)
    full_end = kv_start + (kv_len // BLOCK) * BLOCK
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(kv_start, full_end, BLOCK):
        acc += tl.load(k_ptr + start + d)
    tail = full_end + d
    acc += tl.load(k_ptr + tail, mask=tail < kv_start + kv_len, other=0.0)
    tl.store(o_ptr + d, acc)
"""
    assert lint(code, "TRI007") == []
    ceil = code.replace("(kv_len // BLOCK) * BLOCK", "((kv_len + BLOCK - 1) // BLOCK) * BLOCK")
    ceil = ceil.replace("acc += tl.load(k_ptr + start + d)", "acc += tl.load(k_ptr + start + d)\n        m = start + d < kv_start + kv_len")
    assert any("k_ptr + start + d" in f.message for f in lint(ceil, "TRI007"))


def test_an_equality_test_is_not_a_bound():
    code = HEAD + """
@triton.jit
def nll(tgt_ptr, w_ptr, out_ptr, ignore_index, D: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, D)
    tgt = tl.load(tgt_ptr + pid * D + offs)
    keep = tgt == ignore_index
    w = tl.load(w_ptr + tgt)
    tl.store(out_ptr + pid * D + offs, w, mask=keep)
"""
    assert lint(code, "TRI007") == []
    bounded = code.replace("ignore_index, D", "ignore_index, n_valid, D").replace("mask=keep", "mask=offs < n_valid")
    assert [f.line for f in lint(bounded, "TRI007")] == [9]  # the tgt load


def test_offsets_rebound_for_a_later_loop_are_other_lanes():
    # the masked partial tile comes first, then full tiles walk back from it: `n_offsets` is rebound
    code = HEAD + """
@triton.jit
def norm(in_ptr, out_ptr, n, TILE: tl.constexpr):
    pid = tl.program_id(0)
    last = (n // TILE) * TILE
    n_offsets = last + tl.arange(0, TILE)
    mask = n_offsets < n
    x = tl.load(in_ptr + pid * n + n_offsets, mask=mask, other=0.0)
    tl.store(out_ptr + pid * n + n_offsets, x * 2, mask=mask)
    for start in range(TILE, n, TILE):
        n_offsets = (last - start) + tl.arange(0, TILE)
        x = tl.load(in_ptr + pid * n + n_offsets)
        tl.store(out_ptr + pid * n + n_offsets, x * 2)
"""
    assert lint(code, "TRI007") == []
    # without the rebinding the loop reuses the masked lanes unmasked
    same = code.replace("        n_offsets = (last - start) + tl.arange(0, TILE)\n", "")
    assert len(lint(same, "TRI007")) == 2


def test_a_data_mask_or_a_compile_time_bound_is_no_evidence():
    code = HEAD + """
@triton.jit
def page(topk_ptr, table_ptr, out_ptr, TOPK: tl.constexpr):
    req = tl.program_id(0)
    offs = tl.arange(0, TOPK)
    idx = tl.load(topk_ptr + req * TOPK + offs)
    valid = idx >= 0
    tl.store(out_ptr + req * TOPK + offs, tl.load(table_ptr + idx, mask=valid, other=0), mask=valid)
"""
    assert lint(code, "TRI007") == []
    scratch = HEAD + """
@triton.jit
def bins(scratch_ptr, counts_ptr, n_experts: tl.constexpr, E_P2: tl.constexpr):
    b = tl.arange(0, E_P2)
    counts = tl.load(counts_ptr + b, mask=b < n_experts, other=0)
    tl.store(scratch_ptr + b, tl.cumsum(counts, axis=0) - counts)
"""
    assert lint(scratch, "TRI007") == []
    runtime = scratch.replace("n_experts: tl.constexpr, E_P2", "n_experts, E_P2")
    assert len(lint(runtime, "TRI007")) == 1


def test_a_short_literal_field_and_a_guarding_if_are_quiet():
    code = HEAD + """
@triton.jit
def pack(buf_ptr, out_ptr, head_dim, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_D)
    tl.store(out_ptr + row * (head_dim + 4) + offs, tl.load(buf_ptr + row * head_dim + offs, mask=offs < head_dim),
             mask=offs < head_dim)
    s = tl.arange(0, 4)
    tl.store(out_ptr + row * 4 + head_dim + s, tl.load(buf_ptr + row * 4 + s))
"""
    assert lint(code, "TRI007") == []
    guarded = HEAD + """
@triton.jit
def bank(bank_ptr, out_ptr, NVB, stride_b, BLOCK_H: tl.constexpr):
    offs = tl.arange(0, BLOCK_H)
    acc = tl.zeros((BLOCK_H,), dtype=tl.float32)
    for j in range(0, NVB + 1):
        if j < NVB:
            acc += tl.load(bank_ptr + j * stride_b + offs)
    tl.store(out_ptr + offs, acc)
"""
    assert lint(guarded, "TRI007") == []
