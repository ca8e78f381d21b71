from collections import Counter

from tritonify.diagnostics.model import Applicability, Severity
from tritonify.diagnostics.registry import get_rule

from tests.lintutil import fixed, lint, lint_fixture, marked_lines

PREFILL = """
import triton
import triton.language as tl

@triton.jit
def attn(Q, K, V, O, sm_scale, n, D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, D)
    q = tl.load(Q + offs_m[:, None] * D + offs_d[None, :])
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, D], tl.float32)
    for s in range(0, n, BLOCK_N):
        offs_n = s + tl.arange(0, BLOCK_N)
        qk = tl.dot(q, tl.load(K + offs_n[None, :] * D + offs_d[:, None])) * sm_scale
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(qk - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.bfloat16), tl.load(V + offs_n[:, None] * D + offs_d[None, :]))
        m_i = m_new
    tl.store(O + offs_m[:, None] * D + offs_d[None, :], acc / l_i[:, None])
"""


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI063.py", "TRI063")
    assert [f.line for f in findings] == marked_lines("TRI063.py", "TRI063")
    assert all(f.severity is Severity.INFO for f in findings)


def test_the_noise_classes_are_left_to_opt_in_tri010_and_no_line_gets_both():
    both = lint_fixture("TRI063.py")
    by_line = Counter((f.line, f.code) for f in both if f.code in ("TRI010", "TRI063"))
    lines = {line for line, _ in by_line}
    assert all(by_line[(line, "TRI010")] + by_line[(line, "TRI063")] == 1 for line in lines)
    # every quiet score exp of the fixture (heads, GQA group, top-k gather, D=576, dequant,
    # preconditioner, bit-exact, BLOCK_Q=1) is still TRI010's
    assert {line for line, code in by_line if code == "TRI010"} == set(marked_lines("TRI063.py", "ok: ")) - set(marked_lines("TRI063.py", "ok: one per row"))


def test_in_the_default_set_tri010_not():
    assert get_rule("TRI063").rule.default is True
    assert get_rule("TRI010").rule.default is False
    (f,) = [x for x in lint(PREFILL) if x.code == "TRI063"]
    assert "4-8% faster on an H200" in f.message and "BLOCK_M query rows" in f.message
    assert "qk_scale = sm_scale * 1.44269504" in f.message


def test_fix_is_tri010s_mechanical_exp2_rewrite():
    (f,) = lint(PREFILL, "TRI063")
    assert f.fixes[0].applicability is Applicability.UNSAFE
    out = fixed(PREFILL, f)
    assert "p = tl.exp2((qk - m_new[:, None]) * 1.44269504)" in out
    assert lint(out, "TRI063") == [] and lint(out, "TRI010") == []


def test_scores_without_a_scale_or_without_a_value_dot_are_not_the_tile():
    assert lint(PREFILL.replace(") * sm_scale", ")"), "TRI063") == []
    no_pv = PREFILL.replace("tl.dot(p.to(tl.bfloat16), tl.load(V + offs_n[:, None] * D + offs_d[None, :]))",
                            "tl.sum(p, 1)[:, None]")
    assert lint(no_pv, "TRI063") == []


def test_row_block_known_from_autotune_configs():
    tuned = PREFILL.replace("@triton.jit", '@triton.autotune(configs=[triton.Config({"BLOCK_M": 1}), '
                            'triton.Config({"BLOCK_M": 64})], key=["n"])\n@triton.jit')
    assert lint(tuned, "TRI063") == []   # one config runs a single query row
    tuned = tuned.replace('{"BLOCK_M": 1}', '{"BLOCK_M": 128}')
    assert len(lint(tuned, "TRI063")) == 1


def test_head_dim_from_a_launch_site_or_default():
    launched = PREFILL + "\n\ndef run(q, k, v, o):\n    attn[(4,)](q, k, v, o, 0.1, 256, D={d}, BLOCK_M=64, BLOCK_N=64)\n"
    assert len(lint(launched.format(d=128), "TRI063")) == 1
    assert lint(launched.format(d=512), "TRI063") == []
    assert lint(PREFILL.replace("D: tl.constexpr,", "D: tl.constexpr = 576,"), "TRI063") == []


def test_non_nvidia_targets_and_decode_names_are_quiet():
    assert lint(PREFILL, "TRI063", path="ops/amd/attn.py") == []
    assert lint(PREFILL.replace("def attn(", "def attn_decode("), "TRI063") == []
    assert lint("import torch_npu\n" + PREFILL, "TRI063") == []
