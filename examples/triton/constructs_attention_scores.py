"""Attention scores for one tile of queries, then a per-key bias added to a score tile.

TRI021 fires twice, once per kernel:

* `attention_scores_kernel` loads `k` as a [BLOCK_N, HEAD_DIM] tile, so `tl.dot(q, k)` pairs
  q:[64, 64] with k:[32, 64]. The reduction dimensions differ (64 vs 32), and triton 3.9 rejects
  it with "input and other must have equal reduction dimensions". The intended product is
  `tl.dot(q, tl.trans(k))`.
* `add_key_bias_kernel` adds a [BLOCK_N] key bias to a [BLOCK_M, BLOCK_N] tile along the wrong
  axis: `scores + bias[:, None]` pairs [64, 32] with [32, 1]. It must be `bias[None, :]`.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def attention_scores_kernel(q_ptr, k_ptr, out_ptr, n_keys,
                            BLOCK_M: tl.constexpr = 64, BLOCK_N: tl.constexpr = 32, HEAD_DIM: tl.constexpr = 64):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rd = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + rm[:, None] * HEAD_DIM + rd[None, :])
    k = tl.load(k_ptr + rn[:, None] * HEAD_DIM + rd[None, :], mask=rn[:, None] < n_keys, other=0.0)
    scores = tl.dot(q, k)
    tl.store(out_ptr + rm[:, None] * n_keys + rn[None, :], scores, mask=rn[None, :] < n_keys)


@triton.jit
def add_key_bias_kernel(scores_ptr, bias_ptr, n_keys, BLOCK_M: tl.constexpr = 64, BLOCK_N: tl.constexpr = 32):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tile = rm[:, None] * n_keys + rn[None, :]
    mask = rn[None, :] < n_keys
    scores = tl.load(scores_ptr + tile, mask=mask, other=0.0)
    bias = tl.load(bias_ptr + rn, mask=rn < n_keys, other=0.0)
    tl.store(scores_ptr + tile, scores + bias[:, None], mask=mask)


def attention_scores(q: torch.Tensor, k: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    n_queries, n_keys = q.shape[0], k.shape[0]
    out = torch.empty((n_queries, n_keys), device=q.device, dtype=torch.float32)
    grid = (triton.cdiv(n_queries, 64), triton.cdiv(n_keys, 32))
    attention_scores_kernel[grid](q, k, out, n_keys)
    add_key_bias_kernel[grid](out, bias, n_keys)
    return out


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    q, k = torch.randn(128, 64, device=device), torch.randn(96, 64, device=device)
    bias = torch.randn(96, device=device)
    torch.testing.assert_close(attention_scores(q, k, bias), q @ k.T + bias)
