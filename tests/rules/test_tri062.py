from tritonify.diagnostics.engine import lint_text
from tritonify.diagnostics.model import Applicability
from tritonify.diagnostics.registry import get_rule
from tritonify.diagnostics.settings import Settings

from tests.lintutil import FIXTURES, fixed, lint, lint_fixture, marked_lines

GDN = """
import triton
import triton.language as tl

@triton.jit
def wy_like(k, w, cu_seqlens, chunk_indices, T, H: tl.constexpr, K: tl.constexpr, BT: tl.constexpr):
    i_t, i_h = tl.program_id(0), tl.program_id(1)
    i_n, i_t = tl.load(chunk_indices + i_t * 2).to(tl.int32), tl.load(chunk_indices + i_t * 2 + 1).to(tl.int32)
    bos, eos = tl.load(cu_seqlens + i_n).to(tl.int32), tl.load(cu_seqlens + i_n + 1).to(tl.int32)
    T = eos - bos
    p_k = tl.make_block_ptr(k + (bos * H + i_h) * K, (T, K), (H * K, 1), (i_t * BT, 0), (BT, K), (1, 0))
    p_w = tl.make_block_ptr(w + (bos * H + i_h) * K, (T, K), (H * K, 1), (i_t * BT, 0), (BT, K), (1, 0))
    tl.store(p_w, tl.load(p_k, boundary_check=(0, 1)), boundary_check=(0, 1))
"""


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI062.py", "TRI062")
    assert [f.line for f in findings] == marked_lines("TRI062.py", "TRI062")
    tuple_form, separate = findings
    assert tuple_form.message.startswith("`bos`, `eos` are offsets into the packed varlen batch, loaded from its cumulative lengths")
    assert "`(bos * H + i_h) * K` is an int32 address product" in tuple_form.message
    assert "`q_bos * q_row_stride`" in separate.message


def test_in_the_default_set():
    assert get_rule("TRI062").rule.default
    path = FIXTURES / "TRI062.py"
    codes = [f.code for f in lint_text(path.read_text(), str(path), Settings()).findings]
    assert codes.count("TRI062") == 2


def test_fix_loads_every_offset_of_the_statement_as_int64_and_is_unsafe():
    (f,) = lint(GDN, "TRI062")
    assert f.fixes[0].applicability is Applicability.UNSAFE   # T = eos - bos becomes int64 too
    out = fixed(GDN, f, 0)
    assert "tl.load(cu_seqlens + i_n).to(tl.int64), tl.load(cu_seqlens + i_n + 1).to(tl.int64)" in out
    assert "tl.load(chunk_indices + i_t * 2).to(tl.int32)" in out   # the chunk table is left alone
    assert lint(out, "TRI062") == []


def test_other_spellings_of_the_narrowing_and_of_the_offsets():
    code = GDN.replace("tl.load(cu_seqlens + i_n).to(tl.int32)", "tl.cast(tl.load(cu_seqlens + i_n), tl.int32)")
    assert len(lint(code, "TRI062")) == 1
    code = GDN.replace("cu_seqlens", "offsets")   # fla's older name for the same table
    assert len(lint(code, "TRI062")) == 1


def test_quiet_when_widened_in_the_product_or_the_offset_only_reaches_a_length():
    widened = GDN.replace("(bos * H + i_h) * K", "(bos.to(tl.int64) * H + i_h) * K")
    assert lint(widened, "TRI062") == []
    length_only = GDN.replace("k + (bos * H + i_h) * K", "k + i_h * K").replace("w + (bos * H + i_h) * K", "w + i_h * K")
    assert lint(length_only, "TRI062") == []   # `T = eos - bos` is a length, not a position


def test_quiet_on_a_loaded_int32_that_is_not_a_sequence_offset():
    code = GDN.replace("tl.load(cu_seqlens + i_n).to(tl.int32)", "tl.load(chunk_indices + i_n).to(tl.int32)")
    assert lint(code, "TRI062") == []


def test_quiet_on_per_head_scalars():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def gate(g, o, cu_seqlens, H: tl.constexpr):
        i_n, i_h = tl.program_id(0), tl.program_id(1)
        bos = tl.load(cu_seqlens + i_n).to(tl.int32)
        tl.store(o + bos * H + i_h, tl.load(g + bos * H + i_h))
    """
    assert lint(code, "TRI062") == []


def test_chunk_offsets_join_the_kernels_one_finding_and_its_fix():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def state_pass(k, h, cu_seqlens, chunk_offsets, H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr):
        i_n, i_h = tl.program_id(0), tl.program_id(1)
        bos, eos = tl.load(cu_seqlens + i_n).to(tl.int32), tl.load(cu_seqlens + i_n + 1).to(tl.int32)
        boh = tl.load(chunk_offsets + i_n).to(tl.int32)
        T = eos - bos
        o_k = tl.arange(0, K)
        b_k = tl.load(k + (bos * H + i_h) * K + o_k)
        tl.store(h + (boh * H + i_h) * K * V + o_k, b_k)
    """
    (f,) = lint(code, "TRI062")
    assert f.message.startswith("`bos`, `eos`, `boh` are offsets into the packed varlen batch")
    assert "`(boh * H + i_h) * K * V`" in f.message   # the product scaled most is the one shown
    assert "(4,096 chunks, 262,144 tokens at 64 per chunk, of a 32 heads x 128 x 128 state)" in f.message
    out = fixed(code, f, 0)
    assert out.count(".to(tl.int64)") == 3 and ".to(tl.int32)" not in out
    assert lint(out, "TRI062") == []


# Reduced from the two families the round-9 blind labels called false: a head index taken from a
# program id cast to int64 (vLLM's fla copies), and a token range built on an int64 chunk id
# (fla's ATK kernels). Triton computes an operation with a 64-bit operand in 64 bits.
HEAD_INDEX_INT64 = GDN.replace(
    "i_t, i_h = tl.program_id(0), tl.program_id(1)",
    "i_t, i_bh = tl.program_id(0), tl.program_id(1).to(tl.int64)\n    i_h = i_bh % H")

TOKEN_RANGE_INT64 = """
import triton
import triton.language as tl

@triton.jit
def chunk_like(k, out, cu_seqlens, chunk_indices, k_stride_t, T, C: tl.constexpr):
    i_t = tl.program_id(0)
    i_n = tl.load(chunk_indices + i_t * 2).to(tl.int32)
    chunk = tl.load(chunk_indices + i_t * 2 + 1).to(tl.int64)
    bos, eos = tl.load(cu_seqlens + i_n).to(tl.int32), tl.load(cu_seqlens + i_n + 1).to(tl.int32)
    rows = chunk * C + tl.arange(0, C)
    x = tl.load(k + (bos + rows)[:, None] * k_stride_t, mask=(rows < eos - bos)[:, None])
    tl.store(out + (bos + rows)[:, None] * k_stride_t, x, mask=(rows < eos - bos)[:, None])
"""


def test_quiet_where_another_operand_makes_the_product_int64():
    assert lint(HEAD_INDEX_INT64, "TRI062") == []
    assert len(lint(TOKEN_RANGE_INT64.replace(".to(tl.int64)", ".to(tl.int32)"), "TRI062")) == 1
    assert lint(TOKEN_RANGE_INT64, "TRI062") == []


def test_the_message_quotes_a_product_that_is_int32():
    # `(bos + last) * H` is int64 (last comes from the int64 chunk id through min); `(bos * H + i_h) * K` is not
    code = GDN.replace(
        "T = eos - bos\n",
        "T = eos - bos\n    i_c = tl.load(chunk_indices + i_t * 2 + 1).to(tl.int64)\n"
        "    last = min(i_c * BT + BT, T) - 1\n"
        "    tl.store(w + ((bos + last) * H + i_h) * K * 2, 0.0)\n")
    (f,) = lint(code, "TRI062")
    assert "`(bos * H + i_h) * K` is an int32 address product" in f.message
