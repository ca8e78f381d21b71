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
