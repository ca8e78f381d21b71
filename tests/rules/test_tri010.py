import ast
from collections import Counter

from tritonify.diagnostics.model import Applicability, Severity

from tests.lintutil import FIXTURES, fixed, lint, lint_fixture


def _expected(name: str, code: str) -> Counter:
    lines = (FIXTURES / name).read_text().splitlines()
    # a line may carry the marker more than once (`# TRI010 TRI010`): one finding per mention
    return Counter({i: line.split("#", 1)[1].count(code) for i, line in enumerate(lines, 1) if f"# {code}" in line})


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI010.py", "TRI010")
    assert Counter(f.line for f in findings) == _expected("TRI010.py", "TRI010")
    assert all(f.severity is Severity.INFO for f in findings)


ATTN = """
import triton
import triton.language as tl

@triton.jit
def k(q_ptr, k_ptr, sm_scale, n, B: tl.constexpr):
    q = tl.load(q_ptr + tl.arange(0, B)[:, None] * B + tl.arange(0, B)[None, :])
    m = tl.full([B], float("-inf"), tl.float32)
    for s in range(0, n, B):
        qk = tl.dot(q, tl.load(k_ptr + s + tl.arange(0, B)[:, None] * B + tl.arange(0, B)[None, :])) * sm_scale
        m_new = tl.maximum(m, tl.max(qk, 1))
        p = tl.exp(qk - m_new[:, None])
        m = m_new
"""


def test_fix_rewrites_to_exp2_with_parentheses():
    (f,) = lint(ATTN, "TRI010")
    assert "qk_scale = sm_scale * 1.44269504" in f.message
    fix = f.fixes[0]
    assert fix.applicability is Applicability.UNSAFE
    out = fixed(ATTN, f)
    assert "p = tl.exp2((qk - m_new[:, None]) * 1.44269504)" in out
    ast.parse(out)
    assert lint(out, "TRI010") == []


def test_fix_keeps_a_product_unparenthesised_and_keeps_the_module_path():
    code = ATTN.replace("tl.exp(qk - m_new[:, None])", "tl.math.exp(qk * 0.5)")
    (f,) = lint(code, "TRI010")
    assert "tl.math.exp2(qk * 0.5 * 1.44269504)" in fixed(code, f)


def test_bare_exp_imported_from_triton_language():
    code = ATTN.replace("import triton.language as tl\n", "import triton.language as tl\nfrom triton.language import exp\n")
    code = code.replace("tl.exp(qk", "exp(qk")
    (f,) = lint(code, "TRI010")
    assert "tl.exp2((qk - m_new[:, None]) * 1.44269504)" in fixed(code, f)


def test_exp_in_loop_without_dot_or_running_max_is_quiet():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, n, B: tl.constexpr):
        m = 0.0
        for s in range(0, n, B):
            x = tl.load(x_ptr + s + tl.arange(0, B))
            m = tl.maximum(m, x)
            tl.store(x_ptr + s + tl.arange(0, B), tl.exp(x * 2.0))
    """
    assert lint(code, "TRI010") == []


def test_online_softmax_without_dot_is_memory_bound_and_quiet():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, old_ptr, out_ptr, n_tokens, vocab, B: tl.constexpr):
        for t in range(n_tokens):
            m = float("-inf")
            d = 0.0
            for s in range(0, vocab, B):
                x = tl.load(x_ptr + t * vocab + s + tl.arange(0, B))
                m_new = tl.maximum(m, tl.max(x, 0))
                d = d * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), 0)
                m = m_new
            logp = tl.load(x_ptr + t) - m - tl.log(d)
            ratio = tl.exp(logp - tl.load(old_ptr + t))
            tl.store(out_ptr + t, ratio)
    """
    assert lint(code, "TRI010") == []


def test_per_row_and_gate_exps_in_an_attention_loop_are_quiet():
    # flash-attention's rescale, a decay gate from loads, a scalar: none is per score element
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(q_ptr, k_ptr, g_ptr, o_ptr, sm_scale, n, B: tl.constexpr):
        q = tl.load(q_ptr + tl.arange(0, B)[:, None] * B + tl.arange(0, B)[None, :])
        m = tl.full([B], float("-inf"), tl.float32)
        acc = tl.zeros([B, B], tl.float32)
        for s in range(0, n, B):
            kk = tl.load(k_ptr + s + tl.arange(0, B)[:, None] * B + tl.arange(0, B)[None, :])
            g = tl.load(g_ptr + s + tl.arange(0, B))
            decay = tl.exp(g[:, None] - g[None, :])
            last = tl.exp(tl.load(g_ptr + s))
            qk = tl.dot(q, kk) * sm_scale
            m_new = tl.maximum(m, tl.max(qk, 1))
            alpha = tl.exp(m - m_new)
            acc = acc * alpha[:, None] * last + tl.dot(qk * decay, kk)
            m = m_new
        tl.store(o_ptr + tl.arange(0, B)[:, None] * B + tl.arange(0, B)[None, :], acc)
    """
    assert lint(code, "TRI010") == []
    scores = code.replace("acc = acc * alpha", "p = tl.exp(qk - m_new[:, None])\n            acc = p * acc * alpha")
    assert [f.line for f in lint(scores, "TRI010")] == [18]


def test_other_targets_are_quiet():
    assert len(lint(ATTN, "TRI010", path="ops/attention.py")) == 1
    assert lint(ATTN, "TRI010", path="flag_gems/runtime/backend/_cambricon/ops/attention.py") == []
    guarded = ATTN.replace("        p = tl.exp(qk - m_new[:, None])",
                           "        if IS_HIP:\n            p = tl.exp(qk - m_new[:, None])")
    assert lint(guarded, "TRI010") == []


def test_merging_per_row_statistics_across_splits_is_quiet():
    # the running max takes loaded per-row values elementwise: its exps are one per row
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def merge(lse_ptr, o_ptr, out_ptr, n_splits, L: tl.constexpr):
        rows = tl.arange(0, L)
        m = tl.full([L], float("-inf"), tl.float32)
        acc = tl.zeros([L], tl.float32)
        l = tl.zeros([L], tl.float32)
        for s in range(n_splits):
            lse_s = tl.load(lse_ptr + s * L + rows)
            o_s = tl.load(o_ptr + s * L + rows)
            new_m = tl.maximum(m, lse_s)
            alpha = tl.exp(m - new_m)
            beta = tl.exp(lse_s - new_m)
            acc = acc * alpha + o_s * beta
            l = l * alpha + beta
            m = new_m
        tl.store(out_ptr + rows, acc / l)
    """
    assert lint(code, "TRI010") == []


def test_an_exp_beside_an_exp2_branch_is_a_choice():
    code = ATTN.replace("        p = tl.exp(qk - m_new[:, None])",
                        "        if USE_EXP2:\n            p = tl.exp2(qk - m_new[:, None])\n"
                        "        else:\n            p = tl.exp(qk - m_new[:, None])")
    assert lint(code, "TRI010") == []
