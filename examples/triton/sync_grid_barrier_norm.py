"""Divide a vector by its sum in one kernel: every program adds its block's sum to a global total,
counts itself in, then waits at a grid barrier until all programs have arrived.

Tritonify: TRI018 fires on the barrier's `while tl.atomic_add(arrived, 0) < tl.num_programs(0)`:
the grid is `cdiv(n, BLOCK)`, so for a large vector it holds more programs than the GPU keeps
resident; the resident ones spin forever waiting for programs that never start. Two kernels (per-block
sums, then a second pass that reads their total) need no barrier; a persistent grid of one
program per SM (`grid = (num_sms,)`, looping over the blocks) keeps every program resident.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _normalise_by_sum(x_ptr, total_ptr, arrived_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.atomic_add(total_ptr, tl.sum(x, axis=0), sem="release")
    tl.atomic_add(arrived_ptr, 1, sem="release")
    while tl.atomic_add(arrived_ptr, 0, sem="acquire") < tl.num_programs(0):
        pass
    total = tl.load(total_ptr, volatile=True)
    tl.store(out_ptr + offs, x / total, mask=mask)


def normalise_by_sum(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous().view(-1)
    n = x.numel()
    total = torch.zeros(1, device=x.device, dtype=torch.float32)
    arrived = torch.zeros(1, device=x.device, dtype=torch.int32)
    out = torch.empty_like(x)
    BLOCK = 1024
    _normalise_by_sum[(triton.cdiv(n, BLOCK),)](x, total, arrived, out, n, BLOCK=BLOCK)
    return out
