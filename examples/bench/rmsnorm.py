"""RMSNorm forward in Triton: one program per row, fp32 accumulation, output in the input's dtype.

y = x / sqrt(mean(x^2) + eps) * weight. Memory-bound: each row of x is read once and y written once,
so its floor is (bytes of x + bytes of y + bytes of weight) / copy bandwidth.

Benchmark it (the contract is in rmsnorm_contract.py beside this file):
    tritonify bench examples/bench/rmsnorm.py::rmsnorm_kernel --baselines eager,compile,liger

This is the version measured on the H200 (results/bench_rmsnorm_h200.md, lineage run 2e96eabc85), kept
as measured. `tritonify check` suggests the next candidate: tl.rsqrt (TRI017), an fp32 eps (TRI016) and
a 64-bit row offset (TRI006); bench it with --parent 2e96eabc85 before promoting it.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, x_row_stride, y_row_stride, n_cols, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    mean_square = tl.sum(x * x, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(mean_square + eps)
    y = x * rstd * w
    tl.store(y_ptr + row * y_row_stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def rmsnorm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """RMSNorm over the last dimension of ``x`` (any leading shape), scaled by ``weight``."""
    shape = x.shape
    x2 = x.reshape(-1, shape[-1])
    if x2.stride(-1) != 1:
        x2 = x2.contiguous()
    y = torch.empty_like(x2)
    n_rows, n_cols = x2.shape
    block = triton.next_power_of_2(n_cols)
    num_warps = min(max(block // 256, 1), 16)
    rmsnorm_kernel[(n_rows,)](x2, weight, y, x2.stride(0), y.stride(0), n_cols, eps,
                              BLOCK_SIZE=block, num_warps=num_warps)
    return y.reshape(shape)
