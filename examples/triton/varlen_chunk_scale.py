"""A varlen kernel in the shape of the linear-attention chunk kernels: a packed batch of sequences
`[total_tokens, H, K]` and the cumulative offsets `cu_seqlens` that say where each one starts.

`tritonify check examples/triton/varlen_chunk_scale.py` reports the offsets' load (TRI062): they are
narrowed to int32, so `(bos * H + i_h) * K` is an int32 product that wraps once the packed batch holds
2**31 elements (524,288 tokens at 32 heads x 128), and the loads then start gigabytes before `k`. Loading them `.to(tl.int64)` (and keeping the length `T` int32) is the fix.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def chunk_scale_kernel(k, out, gate, cu_seqlens, chunk_indices, H: tl.constexpr, K: tl.constexpr,
                       BT: tl.constexpr):
    i_t, i_h = tl.program_id(0), tl.program_id(1)
    i_n, i_t = tl.load(chunk_indices + i_t * 2).to(tl.int32), tl.load(chunk_indices + i_t * 2 + 1).to(tl.int32)
    bos, eos = tl.load(cu_seqlens + i_n).to(tl.int32), tl.load(cu_seqlens + i_n + 1).to(tl.int32)  # TRI062
    T = eos - bos
    o_t = i_t * BT + tl.arange(0, BT)
    o_k = tl.arange(0, K)
    m_t = o_t < T
    rows = o_t[:, None] * (H * K) + o_k[None, :]
    b_k = tl.load(k + (bos * H + i_h) * K + rows, mask=m_t[:, None], other=0.0).to(tl.float32)
    b_g = tl.load(gate + bos * H + i_h + o_t * H, mask=m_t, other=0.0).to(tl.float32)
    b_o = b_k * tl.sigmoid(b_g)[:, None]
    tl.store(out + (bos * H + i_h) * K + rows, b_o.to(out.dtype.element_ty), mask=m_t[:, None])

def chunk_scale(k: torch.Tensor, gate: torch.Tensor, cu_seqlens: torch.Tensor, chunk_size: int = 64) -> torch.Tensor:
    """k: [total_tokens, H, K]; gate: [total_tokens, H]; cu_seqlens: [n_seqs + 1] offsets."""
    _, H, K = k.shape
    lens = (cu_seqlens[1:] - cu_seqlens[:-1]).tolist()
    pairs = [(n, t) for n, length in enumerate(lens) for t in range(triton.cdiv(length, chunk_size))]
    chunk_indices = torch.tensor(pairs, dtype=torch.int32, device=k.device).flatten()
    out = torch.empty_like(k)
    chunk_scale_kernel[(len(pairs), H)](k, out, gate, cu_seqlens, chunk_indices, H=H, K=K, BT=chunk_size)
    return out
