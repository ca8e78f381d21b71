"""A grouped GEMM over tokens sorted by expert (the fused-MoE layout), launched over the worst-case
padded length.

`tritonify check --select TRI060 examples/triton/moe_grouped_gemm.py` reports the expert-id load: the
grid covers `sorted_token_ids.numel()` slots (every expert padded by BLOCK_M - 1), but the kernel never
compares its tile with `num_tokens_post_padded`, the real padded total, so the programs past it read
expert ids the alignment did not write for them and stream weights for rows that are all padding.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def grouped_gemm_kernel(a_ptr, b_ptr, c_ptr, sorted_token_ids_ptr, expert_ids_ptr, num_tokens_post_padded_ptr,
                        n_cols, n_k, num_valid_tokens, stride_am, stride_be, stride_bn, stride_cm,
                        TOP_K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_token = tl.load(sorted_token_ids_ptr + pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    token_mask = offs_token < num_valid_tokens
    expert = tl.load(expert_ids_ptr + pid_m).to(tl.int64)  # TRI060: return first when the tile is past the total
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, n_k, BLOCK_K):
        a = tl.load(a_ptr + (offs_token[:, None] // TOP_K) * stride_am + (k + offs_k)[None, :],
                    mask=token_mask[:, None] & ((k + offs_k)[None, :] < n_k), other=0.0)
        b = tl.load(b_ptr + expert * stride_be + offs_n[None, :] * stride_bn + (k + offs_k)[:, None],
                    mask=(offs_n[None, :] < n_cols) & ((k + offs_k)[:, None] < n_k), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + offs_token[:, None] * stride_cm + offs_n[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=token_mask[:, None] & (offs_n[None, :] < n_cols))


def grouped_gemm(a, w, sorted_token_ids, expert_ids, num_tokens_post_padded, top_k, block_m=64):
    """a (T, K); w (E, N, K); the alignment's outputs for top_k slots per token."""
    n_experts, n_cols, n_k = w.shape
    out = torch.empty(a.shape[0] * top_k, n_cols, device=a.device, dtype=a.dtype)
    grid = (triton.cdiv(sorted_token_ids.numel(), block_m), triton.cdiv(n_cols, 64))
    grouped_gemm_kernel[grid](a, w, out, sorted_token_ids, expert_ids, num_tokens_post_padded, n_cols, n_k,
                              a.shape[0] * top_k, a.stride(0), w.stride(0), w.stride(1), out.stride(0),
                              TOP_K=top_k, BLOCK_M=block_m, BLOCK_N=64, BLOCK_K=64)
    return out
