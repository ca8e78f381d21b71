"""fp32 matmul for a solver that needs fp32 results, and an fp32 Gram matrix for whitening.

The precision rules fire here:
- TRI015 on `matmul_kernel`: the launcher passes fp32 tensors, but the `tl.dot` does not say its
  precision, so it runs on TF32 tensor cores by default (10-bit mantissa) and the solver does not
  get fp32 results.
`gram_kernel` stays quiet: its operands are bf16 activations cast up to fp32, and TF32 holds every
bf16 value exactly, so the TF32 products are the fp32 products (the cast only costs time).
"""
import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32}, num_warps=4, num_stages=4),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0).to(tl.int64)
    pid_n = tl.program_id(1).to(tl.int64)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def gram_kernel(x_ptr, g_ptr, n_rows, n_feat, stride_x, BLOCK_F: tl.constexpr, BLOCK_R: tl.constexpr):
    """G[i, j] = sum_r x[r, i] * x[r, j] for one BLOCK_F x BLOCK_F tile, from bf16 activations."""
    pid_i = tl.program_id(0).to(tl.int64)
    pid_j = tl.program_id(1).to(tl.int64)
    fi = pid_i * BLOCK_F + tl.arange(0, BLOCK_F)
    fj = pid_j * BLOCK_F + tl.arange(0, BLOCK_F)
    acc = tl.zeros((BLOCK_F, BLOCK_F), dtype=tl.float32)
    for start in range(0, n_rows, BLOCK_R):
        r = start + tl.arange(0, BLOCK_R)
        xi = tl.load(x_ptr + r[:, None] * stride_x + fi[None, :],
                     mask=(r[:, None] < n_rows) & (fi[None, :] < n_feat), other=0.0).to(tl.float32)
        xj = tl.load(x_ptr + r[:, None] * stride_x + fj[None, :],
                     mask=(r[:, None] < n_rows) & (fj[None, :] < n_feat), other=0.0).to(tl.float32)
        acc += tl.dot(tl.trans(xi), xj)
    tl.store(g_ptr + fi[:, None] * n_feat + fj[None, :], acc,
             mask=(fi[:, None] < n_feat) & (fj[None, :] < n_feat))


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    a = a.float()
    b = b.float()
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float32)

    def grid(meta):
        return (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))

    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1))
    return c


def gram(x: torch.Tensor) -> torch.Tensor:
    """x: (rows, features) bf16 activations -> (features, features) fp32 Gram matrix."""
    n_rows, n_feat = x.shape
    g = torch.empty((n_feat, n_feat), device=x.device, dtype=torch.float32)
    grid = (triton.cdiv(n_feat, 64), triton.cdiv(n_feat, 64))
    gram_kernel[grid](x, g, n_rows, n_feat, x.stride(0), BLOCK_F=64, BLOCK_R=64)
    return g
