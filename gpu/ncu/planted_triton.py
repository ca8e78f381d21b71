"""Triton kernels with one planted bottleneck each, and clean controls.

Each planted kernel is named `planted_<letter>_<what>`; the lines that carry the planted cost end
with a `# PLANT: <letter>` comment, so tests find the expected lines without hard-coded numbers.
Controls are named `control_<what>` and must not be flagged. `probe_<what>` kernels try a
pattern that Triton may compile away (masks become predication); they are recorded, not required. The kernels run on the H200 machine
under `capture.py`; nothing here is imported by the linter.
"""
import triton
import triton.language as tl


# --- clean controls ----------------------------------------------------------------------------

@triton.jit
def control_copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x * 2.0, mask=mask)


@triton.jit
def control_softmax(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    m = tl.max(x, 0)
    e = tl.exp(x - m)
    s = tl.sum(e, 0)
    tl.store(y_ptr + row * n_cols + cols, e / s, mask=mask)


@triton.jit
def control_fma_poly(x_ptr, y_ptr, n, ITERS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = x
    for _ in range(ITERS):
        y = y * 0.9999 + 0.0001
    tl.store(y_ptr + offs, y, mask=mask)


@triton.jit
def control_atomic_per_block(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.atomic_add(out_ptr + (pid % 64), tl.sum(x, 0))


@triton.jit
def control_matmul_fp16(a_ptr, b_ptr, c_ptr, M, N, K,
                        BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, K, BK):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * N
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


# --- planted patterns --------------------------------------------------------------------------

@triton.jit
def planted_a_small_grid(x_ptr, y_ptr, n, BLOCK: tl.constexpr):  # PLANT: A
    pid = tl.program_id(0)
    step = tl.num_programs(0) * BLOCK
    for start in range(pid * BLOCK, n, step):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        tl.store(y_ptr + offs, x * 2.0, mask=mask)


@triton.jit
def planted_b_imbalance(x_ptr, y_ptr, work_ptr, BLOCK: tl.constexpr):  # PLANT: B
    pid = tl.program_id(0)
    reps = tl.load(work_ptr + pid)  # PLANT: B
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for _ in range(reps):  # PLANT: B
        acc = acc * 0.999 + x  # PLANT: B
    tl.store(y_ptr + offs, acc)


@triton.jit
def planted_c_uncoalesced(x_ptr, y_ptr, n, STRIDE: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs.to(tl.int64) * STRIDE, mask=mask)  # PLANT: C
    tl.store(y_ptr + offs, x + 1.0, mask=mask)


@triton.jit
def planted_d_sparse_store(x_ptr, y_ptr, n, STRIDE: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs.to(tl.int64) * STRIDE, x + 1.0, mask=mask)  # PLANT: D


@triton.jit
def planted_e_latency(next_ptr, out_ptr, steps, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    lane = tl.arange(0, BLOCK)
    pos = tl.load(next_ptr + pid * BLOCK + lane)
    for _ in range(steps):
        pos = tl.load(next_ptr + pos)  # PLANT: E
    tl.store(out_ptr + pid * BLOCK + lane, pos)


@triton.jit
def planted_f_fp32_dot_on_fma(a_ptr, b_ptr, c_ptr, M, N, K,
                              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, K, BK):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc, input_precision="ieee")  # PLANT: F
        a_ptrs += BK
        b_ptrs += BK * N
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def planted_g_atomics(x_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.atomic_add(hist_ptr + (offs % 4), x, mask=mask)  # PLANT: G


@triton.jit
def planted_i_barrier(x_ptr, y_ptr, n, ITERS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(x_ptr + offs, mask=mask)
    for _ in range(ITERS):
        y = y * 0.9999 + 0.0001
        tl.debug_barrier()  # PLANT: I
    tl.store(y_ptr + offs, y, mask=mask)


@triton.jit
def planted_j_overstaged(a_ptr, b_ptr, c_ptr, M, N, K,
                         BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):  # PLANT: J
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, K, BK):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * N
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@triton.jit
def planted_k_spill(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols)  # PLANT: K
    m = tl.max(x, 0)  # PLANT: K
    e = tl.exp(x - m)  # PLANT: K
    s = tl.sum(e, 0)  # PLANT: K
    tl.store(y_ptr + row * n_cols + cols, e / s)  # PLANT: K


@triton.jit
def planted_l_fp64(x_ptr, y_ptr, n, ITERS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = x.to(tl.float64)  # PLANT: L
    for _ in range(ITERS):
        y = y * 0.9999 + 0.0001  # PLANT: L
    tl.store(y_ptr + offs, y.to(tl.float32), mask=mask)  # PLANT: L


@triton.jit
def planted_m_no_pipelining(a_ptr, b_ptr, c_ptr, M, N, K,
                            BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, K, BK):  # PLANT: M
        a = tl.load(a_ptrs)  # PLANT: M
        b = tl.load(b_ptrs)  # PLANT: M
        acc = tl.dot(a, b, acc)  # PLANT: M
        a_ptrs += BK
        b_ptrs += BK * N
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@triton.jit
def planted_o_hmma_small_dot(a_ptr, b_ptr, c_ptr, M, N, K,
                             BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # A 16-row tile and 2 warps: Triton cannot use wgmma (it needs a warpgroup of 4 warps and
    # 64-row tiles), so on sm_90 the dot lowers to mma.sync (HMMA).
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, K, BK):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc)  # PLANT: O
        a_ptrs += BK
        b_ptrs += BK * N
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@triton.jit
def probe_k_local_gather(x_ptr, idx_ptr, y_ptr, n, BLOCK: tl.constexpr, TABLE: tl.constexpr):
    # Probe: a per-program table indexed by loaded data (tl.gather); Triton may keep it in
    # registers/shared memory rather than local memory, so this is recorded, not required.
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    table = tl.load(x_ptr + tl.arange(0, TABLE)) + pid
    j = tl.load(idx_ptr + offs, mask=mask, other=0)
    v = tl.gather(table, j, 0)  # PLANT: K
    tl.store(y_ptr + offs, v, mask=mask)


@triton.jit
def probe_n_masked_lanes(x_ptr, y_ptr, n, ITERS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    active = (offs % 32) < 2  # PLANT: N
    x = tl.load(x_ptr + offs, mask=active, other=0.0)  # PLANT: N
    y = x
    for _ in range(ITERS):
        y = tl.where(active, y * 0.9999 + 0.0001, y)  # PLANT: N
    tl.store(y_ptr + offs, y, mask=active)  # PLANT: N
