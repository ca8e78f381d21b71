"""Causal flash-attention forward (online softmax in the loop over keys), one program per
(query block, batch*head). It shares pieces with softmax and cross-entropy (max, exp, sum,
logsumexp) but it is attention, which Liger-Kernel does not ship as a standalone op: TRI003
must stay quiet here.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def attn_fwd(Q, K, V, O, LSE, stride_bh, stride_t, T, sm_scale,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr):
    start_m = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + bh * stride_bh + offs_m[:, None] * stride_t + offs_d[None, :], mask=offs_m[:, None] < T, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale.to(tl.float32) * 1.44269504
    for start_n in range(0, (start_m + 1) * BLOCK_M, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + bh * stride_bh + offs_n[None, :] * stride_t + offs_d[:, None], mask=offs_n[None, :] < T, other=0.0)
        qk = tl.dot(q, k) * qk_scale
        qk = tl.where(offs_m[:, None] >= offs_n[None, :], qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + bh * stride_bh + offs_n[:, None] * stride_t + offs_d[None, :], mask=offs_n[:, None] < T, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(LSE + bh * T + offs_m, m_i + tl.math.log2(l_i), mask=offs_m < T)
    tl.store(O + bh * stride_bh + offs_m[:, None] * stride_t + offs_d[None, :], acc.to(O.dtype.element_ty), mask=offs_m[:, None] < T)


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    B, H, T, D = q.shape
    assert D in (16, 32, 64, 128), "head_dim must be a power of two from 16 to 128"
    o = torch.empty_like(q)
    lse = torch.empty(B * H, T, device=q.device, dtype=torch.float32)
    grid = (triton.cdiv(T, 64), B * H)
    attn_fwd[grid](q, k, v, o, lse, q.stride(1), q.stride(2), T, D ** -0.5, BLOCK_M=64, BLOCK_N=64, HEAD_DIM=triton.next_power_of_2(D))
    return o
