"""TRI003 and Liger's `llama4_rope` (issue 26, session 12): q and k read as interleaved complex pairs
(x[2i] real, x[2i+1] imaginary) and multiplied by freqs_cis read through its real view (cos at
[..., 0], sin at [..., 1] of one tensor) is what `liger_kernel.ops.llama4_rope` computes. The
reported kernel is reduced from sglang's vision-tower RoPE (`_fused_qk_complex_rope_kernel`), written
here in our own words; each near miss is a form Liger's op does not take."""
from __future__ import annotations

import textwrap

from tests.lintutil import lint

HEAD = """
import triton
import triton.language as tl
"""

# One program per block of (token, head, pair); q and k read through strides, written contiguous.
QK_COMPLEX = """
@triton.jit
def qk_complex_rope_kernel(q_ptr, k_ptr, f_ptr, qo_ptr, ko_ptr, n_pairs,
                           n_heads: tl.constexpr, head_dim: tl.constexpr,
                           sq_tok, sq_head, sq_dim, sk_tok, sk_head, sk_dim,
                           sf_tok, sf_pair, sf_part, BLOCK: tl.constexpr):
    idx = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = idx < n_pairs
    half = head_dim // 2
    row = idx // half
    pair = idx - row * half
    tok = row // n_heads
    head = row - tok * n_heads
    qa = tok * sq_tok + head * sq_head + pair * 2 * sq_dim
    ka = tok * sk_tok + head * sk_head + pair * 2 * sk_dim
    fa = {freq_row} * sf_tok + pair * sf_pair
    c = tl.load(f_ptr + fa{cos_part}, mask=live).to(tl.float32)
    s = tl.load(f_ptr + fa{sin_part}, mask=live).to(tl.float32)
    qr = tl.load(q_ptr + qa, mask=live).to(tl.float32)
    qi = tl.load(q_ptr + qa + sq_dim, mask=live).to(tl.float32)
    kr = tl.load(k_ptr + ka, mask=live).to(tl.float32)
    ki = tl.load(k_ptr + ka + sk_dim, mask=live).to(tl.float32)
    out = row * head_dim + pair * 2
    tl.store(qo_ptr + out, {q_real}, mask=live)
    tl.store(qo_ptr + out + 1, {q_imag}, mask=live)
    tl.store(ko_ptr + out, {k_real}, mask=live)
    tl.store(ko_ptr + out + 1, {k_imag}, mask=live)
"""

FORWARD = dict(
    freq_row="tok", cos_part="", sin_part=" + sf_part",
    q_real="tl.fma(-qi, s, qr * c)", q_imag="tl.fma(qr, s, qi * c)",
    k_real="tl.fma(-ki, s, kr * c)", k_imag="tl.fma(kr, s, ki * c)",
)


def tri003(body: str, path: str = "my_project/ops/vision_rope.py"):
    return lint(HEAD + textwrap.dedent(body), "TRI003", path=path)


def kernel(**change) -> str:
    return QK_COMPLEX.format(**{**FORWARD, **change})


def test_q_and_k_times_complex_frequencies_is_llama4_rope():
    (f,) = tri003(kernel())
    assert "re-implements Llama-4 complex-frequency RoPE " in f.message
    assert "liger_kernel.transformers.liger_llama4_text_rotary_pos_emb(xq, xk, freqs_cis)" in f.message
    assert "liger_kernel.transformers.llama4_rope.liger_llama4_vision_rotary_pos_emb(query, key, freqs_ci)" in f.message
    assert "in place" in f.message and "whole head_dim" in f.message   # the op's traps
    assert "interleaved pairs (x[2i], x[2i+1], GPT-J style) where Liger's RoPE" not in f.message


def test_the_fix_imports_from_the_llama4_module():
    (f,) = tri003(kernel())
    (fix,) = f.fixes
    text = "".join(e.new_text for e in fix.edits)
    assert "from liger_kernel.transformers.llama4_rope import liger_llama4_vision_rotary_pos_emb" in text
    assert "return liger_llama4_vision_rotary_pos_emb(q, k, freqs_cis)" in text


def test_plain_products_spelled_without_fma_are_read_too():
    body = kernel(q_real="qr * c - qi * s", q_imag="qr * s + qi * c",
                  k_real="kr * c - ki * s", k_imag="kr * s + ki * c")
    (f,) = tri003(body)
    assert "Llama-4 complex-frequency RoPE" in f.message


def test_the_inverse_rotation_is_not_it():
    # conj(freqs): x[2i] * cos + x[2i+1] * sin at the real slot (DeepSeek's IS_INVERSE branch)
    body = kernel(q_real="qr * c + qi * s", q_imag="qi * c - qr * s",
                  k_real="kr * c + ki * s", k_imag="ki * c - kr * s")
    assert tri003(body) == []


def test_sin_before_cos_in_the_table_is_not_freqs_cis():
    assert tri003(kernel(cos_part=" + sf_part", sin_part="")) == []


def test_frequencies_at_loaded_positions_are_not_it():
    # Liger's op takes no position ids: it indexes freqs_cis by the sequence position
    body = kernel(freq_row="tl.load(pos_ptr + tok, mask=live)").replace("f_ptr, qo_ptr", "f_ptr, pos_ptr, qo_ptr")
    assert tri003(body) == []


def test_one_tensor_rotated_is_not_it():
    # Liger's op rotates q and k together; one tensor (a diffusion RoPE on x) is not its signature
    body = """
    @triton.jit
    def x_complex_rope_kernel(x_ptr, f_ptr, o_ptr, n_pairs, half: tl.constexpr, BLOCK: tl.constexpr):
        idx = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        live = idx < n_pairs
        tok = idx // half
        pair = idx % half
        c = tl.load(f_ptr + tok * 2 * half + 2 * pair, mask=live)
        s = tl.load(f_ptr + tok * 2 * half + 2 * pair + 1, mask=live)
        xr = tl.load(x_ptr + 2 * idx, mask=live)
        xi = tl.load(x_ptr + 2 * idx + 1, mask=live)
        tl.store(o_ptr + 2 * idx, xr * c - xi * s, mask=live)
        tl.store(o_ptr + 2 * idx + 1, xr * s + xi * c, mask=live)
    """
    assert tri003(body) == []


def test_cos_and_sin_in_separate_tables_are_not_freqs_cis():
    body = """
    @triton.jit
    def qk_pairs_kernel(q_ptr, k_ptr, cos_ptr, sin_ptr, half: tl.constexpr):
        tok = tl.program_id(0)
        p = tl.arange(0, half)
        c = tl.load(cos_ptr + tok * half + p)
        s = tl.load(sin_ptr + tok * half + p)
        qr = tl.load(q_ptr + tok * 2 * half + 2 * p)
        qi = tl.load(q_ptr + tok * 2 * half + 2 * p + 1)
        kr = tl.load(k_ptr + tok * 2 * half + 2 * p)
        ki = tl.load(k_ptr + tok * 2 * half + 2 * p + 1)
        tl.store(q_ptr + tok * 2 * half + 2 * p, qr * c - qi * s)
        tl.store(q_ptr + tok * 2 * half + 2 * p + 1, qi * c + qr * s)
        tl.store(k_ptr + tok * 2 * half + 2 * p, kr * c - ki * s)
        tl.store(k_ptr + tok * 2 * half + 2 * p + 1, ki * c + kr * s)
    """
    assert tri003(body) == []   # GPT-J pairs with a cos and a sin table: neither Liger RoPE's layout


def test_liger_own_llama4_module_stays_quiet():
    assert tri003(kernel(), path="liger_kernel/ops/llama4_rope.py") == []
