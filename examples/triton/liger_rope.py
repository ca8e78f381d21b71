"""Rotary position embedding applied to q and k in place (rotate-half layout, HF cos/sin).

TRI003 fires on `rope_kernel`: x1*cos - x2*sin / x2*cos + x1*sin is Liger-Kernel's RoPE
(`liger_rotary_pos_emb(q, k, cos, sin)`).
"""
import triton
import triton.language as tl


@triton.jit
def rope_kernel(q_ptr, k_ptr, cos_ptr, sin_ptr, q_stride, k_stride, cs_stride, seq_len,
                N_Q_HEADS: tl.constexpr, N_K_HEADS: tl.constexpr, HALF: tl.constexpr):
    tok = tl.program_id(0)
    pos = tok % seq_len
    d = tl.arange(0, HALF)
    cos = tl.load(cos_ptr + pos * cs_stride + d).to(tl.float32)
    sin = tl.load(sin_ptr + pos * cs_stride + d).to(tl.float32)
    for h in tl.static_range(N_Q_HEADS):
        base = q_ptr + tok * q_stride + h * 2 * HALF
        q1 = tl.load(base + d).to(tl.float32)
        q2 = tl.load(base + HALF + d).to(tl.float32)
        tl.store(base + d, q1 * cos - q2 * sin)
        tl.store(base + HALF + d, q2 * cos + q1 * sin)
    for h in tl.static_range(N_K_HEADS):
        base = k_ptr + tok * k_stride + h * 2 * HALF
        k1 = tl.load(base + d).to(tl.float32)
        k2 = tl.load(base + HALF + d).to(tl.float32)
        tl.store(base + d, k1 * cos - k2 * sin)
        tl.store(base + HALF + d, k2 * cos + k1 * sin)
