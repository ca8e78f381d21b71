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


def test_only_the_softmax_exps_of_an_outer_loop_around_an_online_softmax():
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
    findings = lint(code, "TRI010")
    assert [f.line for f in findings] == [13, 13]
