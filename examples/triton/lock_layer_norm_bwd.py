"""LayerNorm backward in two kernels, in the style of the older Triton layer-norm tutorial.

The first kernel computes dx for one row per program and folds the row's contribution to
dw/db into one of GROUP_SIZE_M partial buffers, taking a per-buffer spin lock
(`atomic_cas` on `Lock`) so that programs sharing a buffer do not race. The second kernel sums
the GROUP_SIZE_M partial buffers column-wise.

Tritonify: TRI018 stays quiet on the `while tl.atomic_cas(...)` lock: it is a mutex that the
same kernel releases (`tl.atomic_xchg(Lock, 0)`), so the program it waits for holds it while
running and leaves a short critical section; no program waits for one that has not started.
Writing one partial per program (or per row block) and summing in the second kernel needs no lock.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _layer_norm_bwd_dx_fused(DX, DY, DW, DB, X, W, Mean, Rstd, Lock,
                             stride, N, GROUP_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    # partial dw/db buffer shared by every GROUP_SIZE_M-th row, with its lock and first-writer flag
    lock_id = row % GROUP_SIZE_M
    Lock += lock_id
    Count = Lock + GROUP_SIZE_M
    DW = DW + lock_id * N + cols
    DB = DB + lock_id * N + cols

    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = tl.where(mask, (x - mean) * rstd, 0.0)
    wdy = tl.where(mask, w * dy, 0.0)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(DX + cols, dx, mask=mask)

    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = dy.to(w.dtype)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    if count == 0:
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask)
        partial_db += tl.load(DB, mask=mask)
    tl.store(DW, partial_dw, mask=mask)
    tl.store(DB, partial_db, mask=mask)
    # every thread's stores must land before the lock is released
    tl.debug_barrier()
    tl.atomic_xchg(Lock, 0)


@triton.jit
def _layer_norm_bwd_dwdb(DW, DB, FINAL_DW, FINAL_DB, M, N, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    dw = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for i in range(0, M, BLOCK_SIZE_M):
        rows = i + tl.arange(0, BLOCK_SIZE_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW + offs, mask=mask, other=0.0)
        db += tl.load(DB + offs, mask=mask, other=0.0)
    tl.store(FINAL_DW + cols, tl.sum(dw, axis=0), mask=cols < N)
    tl.store(FINAL_DB + cols, tl.sum(db, axis=0), mask=cols < N)


def layer_norm_backward(dy, x, w, mean, rstd, group_size_m: int = 64):
    M, N = x.shape
    BLOCK_SIZE_N = triton.next_power_of_2(N)
    locks = torch.zeros(2 * group_size_m, dtype=torch.int32, device=x.device)
    partial_dw = torch.zeros((group_size_m, N), dtype=x.dtype, device=x.device)
    partial_db = torch.zeros((group_size_m, N), dtype=x.dtype, device=x.device)
    dw = torch.empty((N,), dtype=w.dtype, device=w.device)
    db = torch.empty((N,), dtype=w.dtype, device=w.device)
    dx = torch.empty_like(dy)
    _layer_norm_bwd_dx_fused[(M,)](dx, dy, partial_dw, partial_db, x, w, mean, rstd, locks,
                                   x.stride(0), N, GROUP_SIZE_M=group_size_m, BLOCK_SIZE_N=BLOCK_SIZE_N)
    _layer_norm_bwd_dwdb[(triton.cdiv(N, 128),)](partial_dw, partial_db, dw, db, min(group_size_m, M), N,
                                                 BLOCK_SIZE_M=32, BLOCK_SIZE_N=128)
    return dx, dw, db
