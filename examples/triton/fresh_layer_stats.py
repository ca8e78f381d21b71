"""A kernel as it is often first written (by a person in a hurry, or by a model): each marked line
stops Triton's compiler before anything runs. `tritonify check` reports them all at once, with
the fix; TRI024-TRI031's pages say why each fails."""
import torch
import triton
import triton.language as tl


def softplus(x):
    return tl.log(1 + tl.exp(x))


@triton.jit
def layer_stats_kernel(x_addr, stats_ptr, out_ptr, n_cols, K: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_addr + row * n_cols + cols, mask=mask, other=0.0)   # TRI024: x_addr is an int
    mean = tl.sum(x, axis=0) / n_cols
    var = tl.sum((x - mean) ** 2, axis=0) / n_cols                      # TRI027: no ** on tensors
    tl.store(stats_ptr, x - mean, mask=mask)                           # TRI025: one pointer, block value
    series = 1.0
    for k in range(1, K):
        series += x / k                                                 # TRI030: scalar becomes a block
    y = tl.tanh(series) + softplus(x)                                   # TRI026 / TRI031
    tl.store(out_ptr + row * n_cols + cols, y * tl.rsqrt(var + 1e-5), mask=mask)


def layer_stats(x: torch.Tensor) -> torch.Tensor:
    rows, n_cols = x.shape
    out = torch.empty_like(x)
    stats = torch.empty(rows, device=x.device)
    layer_stats_kernel[(rows,)](x.data_ptr(), stats, out, n_cols, K=4, BLOCK=triton.next_power_of_2(n_cols))
    return out


@triton.jit
def row_scores_kernel(q_ptr, k_ptr, lens_ptr, out_ptr, D: tl.constexpr):
    row = tl.program_id(0)
    d = tl.arange(0, D)
    q = tl.load(q_ptr + row * D + d)
    lens = tl.load(lens_ptr + d).to(tl.int32)
    best = 0.0
    for j in range(0, lens):                                            # TRI029: a block as loop bound
        k = tl.load(k_ptr + j * D + d)
        best = tl.maximum(best, tl.dot(q, k))                          # TRI028: 1-D operands
    tl.store(out_ptr + row, best)


def row_scores(q: torch.Tensor, k: torch.Tensor, lens: torch.Tensor) -> torch.Tensor:
    out = torch.empty(q.shape[0], device=q.device)
    row_scores_kernel[(q.shape[0],)](q, k, lens, out, D=q.shape[1])
    return out
