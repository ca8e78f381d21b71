"""Measure what the synchronisation and softmax rules (TRI008, TRI010, TRI012, TRI018) claim, on a GPU.

Run on a CUDA machine: `python gpu/rules/sync_rules_bench.py [out.md]`. Prints a Markdown table
(and writes it to out.md when given). Timings are `triton.testing.do_bench` means, through the project's one timer
(`tritonify.kernels.bench.timing.events_ms`).
`--smoke` runs every kernel once at toy sizes (works under TRITON_INTERPRET=1 on a CPU) to check
the script itself.

* TRI010: flash-attention forward (fp16, non-causal) with `tl.exp`, with the mechanical fix
  `tl.exp2(E * 1.44269504)`, and with log2(e) folded into the scale (`tl.exp2` on `qk * qk_scale`).
* TRI008: a global sum where every program does `tl.atomic_add(sum_ptr, partial)` vs one partial
  per program reduced in a second stage; and a loop doing an atomic per iteration vs accumulating
  locally and issuing one atomic per program.
* TRI008/TRI018: column sums of an MxN matrix (the dW/dB reduction of a norm backward): an atomic
  per row, the layer-norm tutorial's spin-locked group buffers, and lock-free per-program partials.
* TRI012: an autotuned `atomic_add` reduction, first and second call for a new key.
"""
from __future__ import annotations

import sys

import torch
import triton
import triton.language as tl

SMOKE = "--smoke" in sys.argv
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
LOG2E = 1.44269504


# ---- TRI010: attention forward ------------------------------------------------------------

@triton.jit
def attn_fwd(Q, K, V, Out, sm_scale, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
             BLOCK_N: tl.constexpr, MODE: tl.constexpr):
    """MODE 0: tl.exp; 1: tl.exp2(E * LOG2E) (the mechanical rewrite); 2: log2(e) folded into the scale."""
    start_m = tl.program_id(0)
    off_z = tl.program_id(1).to(tl.int64) * N_CTX * HEAD_DIM
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + off_z + offs_m[:, None] * HEAD_DIM + offs_d[None, :])
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    scale = sm_scale * 1.44269504 if MODE == 2 else sm_scale
    for start_n in range(0, N_CTX, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(K + off_z + cols[None, :] * HEAD_DIM + offs_d[:, None])
        qk = tl.dot(q, k) * scale  # noqa: TRI016 (launched eagerly: the scale is fp32)
        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        if MODE == 0:
            p = tl.exp(qk - m_new[:, None])  # noqa: TRI010 (the baseline being measured)
            alpha = tl.exp(m_i - m_new)  # noqa: TRI010
        elif MODE == 1:
            p = tl.exp2((qk - m_new[:, None]) * 1.44269504)
            alpha = tl.exp2((m_i - m_new) * 1.44269504)
        else:
            p = tl.exp2(qk - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(V + off_z + cols[:, None] * HEAD_DIM + offs_d[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    tl.store(Out + off_z + offs_m[:, None] * HEAD_DIM + offs_d[None, :], (acc / l_i[:, None]).to(Out.dtype.element_ty))


def bench_attention(rows: list, z: int, n_ctx: int, head_dim: int) -> None:
    q, k, v = (torch.randn(z, n_ctx, head_dim, device=DEVICE, dtype=torch.float16) for _ in range(3))
    scale = head_dim ** -0.5
    ref = torch.softmax((q.float() @ k.float().transpose(1, 2)) * scale, dim=-1) @ v.float()
    block_m, block_n = (128, 64) if not SMOKE else (16, 16)
    names = {0: "tl.exp", 1: "tl.exp2(E * 1.44269504) (the fix alone)", 2: "tl.exp2, log2(e) folded into the scale"}
    for mode, name in names.items():
        o = torch.empty_like(q)

        def run():
            attn_fwd[(n_ctx // block_m, z)](q, k, v, o, scale, n_ctx, HEAD_DIM=head_dim, BLOCK_M=block_m,
                                            BLOCK_N=block_n, MODE=mode, num_warps=8 if not SMOKE else 4,
                                            num_stages=3 if not SMOKE else 1)

        run()
        err = (o.float() - ref).abs().max().item()
        flops = 4 * z * n_ctx * n_ctx * head_dim
        ms = _time(run)
        rows.append((f"TRI010 attention fwd fp16 Z={z} N={n_ctx} D={head_dim}", name,
                     f"{ms * 1e3:.1f} us ({flops / ms * 1e-9:.0f} TFLOP/s), max abs err {err:.1e}"))


# ---- TRI008: one address from every program / an atomic per iteration ----------------------

@triton.jit
def sum_atomic_kernel(x_ptr, sum_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(sum_ptr, tl.sum(x, axis=0))  # noqa: TRI008 (the pattern being measured)


@triton.jit
def sum_partials_kernel(x_ptr, partial_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(partial_ptr + pid, tl.sum(x, axis=0))


@triton.jit
def sum_loop_kernel(x_ptr, sum_ptr, n, CHUNKS: tl.constexpr, HOISTED: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(CHUNKS):
        offs = (pid * CHUNKS + i) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        if HOISTED:
            acc += x
        else:
            tl.atomic_add(sum_ptr, tl.sum(x, axis=0))  # noqa: TRI008 (the pattern being measured)
    if HOISTED:
        tl.atomic_add(sum_ptr, tl.sum(acc, axis=0))  # noqa: TRI008 (one per program, the fix)


def bench_global_sum(rows: list, n: int) -> None:
    x = torch.rand(n, device=DEVICE, dtype=torch.float32)
    expected = x.double().sum().item()
    block = 1024 if not SMOKE else 64
    grid = triton.cdiv(n, block)
    total = torch.zeros(1, device=DEVICE)
    partials = torch.empty(grid, device=DEVICE)

    def atomic():
        total.zero_()
        sum_atomic_kernel[(grid,)](x, total, n, BLOCK=block)

    def two_stage():
        sum_partials_kernel[(grid,)](x, partials, n, BLOCK=block)
        return partials.sum()

    chunks = 16 if not SMOKE else 2

    def loop(hoisted):
        def run():
            total.zero_()
            sum_loop_kernel[(triton.cdiv(n, block * chunks),)](x, total, n, CHUNKS=chunks, HOISTED=hoisted, BLOCK=block)
        return run

    label = f"TRI008 sum of {n / 2**20:.0f}M fp32"
    atomic()
    rows.append((label, f"tl.atomic_add(sum_ptr, s) from {grid} programs",
                 f"{_time(atomic) * 1e3:.1f} us, rel err {abs(total.item() - expected) / expected:.1e}"))
    got = two_stage().item()
    rows.append((label, "one partial per program + torch.sum", f"{_time(two_stage) * 1e3:.1f} us, rel err {abs(got - expected) / expected:.1e}"))
    for hoisted, name in ((False, f"atomic every iteration ({chunks} per program)"), (True, "accumulate locally, one atomic per program")):
        run = loop(hoisted)
        run()
        rows.append((label, name, f"{_time(run) * 1e3:.1f} us, rel err {abs(total.item() - expected) / expected:.1e}"))


# ---- TRI008 / TRI018: column sums (dW/dB of a norm backward) -------------------------------

@triton.jit
def colsum_atomic_kernel(x_ptr, out_ptr, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.atomic_add(out_ptr + cols, x, mask=cols < n_cols)


@triton.jit
def colsum_locked_kernel(x_ptr, buf_ptr, lock_ptr, n_cols, GROUP: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row.to(tl.int64) * n_cols + cols, mask=mask, other=0.0)
    group = row % GROUP
    lock_ptr += group
    count_ptr = lock_ptr + GROUP
    buf = buf_ptr + group * n_cols + cols
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:  # noqa: TRI018 (the pattern being measured)
        pass
    count = tl.load(count_ptr)
    if count == 0:
        tl.atomic_xchg(count_ptr, 1)
    else:
        x += tl.load(buf, mask=mask)
    tl.store(buf, x, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(lock_ptr, 0)


@triton.jit
def colsum_partials_kernel(x_ptr, partial_ptr, n_rows, n_cols, ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for r in range(ROWS):
        row = pid * ROWS + r
        row_vec = row + tl.zeros([BLOCK_N], dtype=tl.int32)
        x = tl.load(x_ptr + row.to(tl.int64) * n_cols + cols, mask=(cols < n_cols) & (row_vec < n_rows), other=0.0)
        acc += x
    tl.store(partial_ptr + pid.to(tl.int64) * n_cols + cols, acc, mask=cols < n_cols)


def bench_column_sums(rows: list, m: int, n: int) -> None:
    x = torch.randn(m, n, device=DEVICE, dtype=torch.float32)
    expected = x.double().sum(0)
    block_n = triton.next_power_of_2(n)
    out = torch.zeros(n, device=DEVICE)
    group = 64 if not SMOKE else 4
    locks = torch.zeros(2 * group, device=DEVICE, dtype=torch.int32)
    bufs = torch.zeros(group, n, device=DEVICE)
    rows_per_program = 64 if not SMOKE else 4
    partials = torch.zeros(triton.cdiv(m, rows_per_program), n, device=DEVICE)
    num_warps = 8 if not SMOKE else 4

    def atomic():
        out.zero_()
        colsum_atomic_kernel[(m,)](x, out, n, BLOCK_N=block_n, num_warps=num_warps)
        return out

    def locked():
        locks.zero_()
        colsum_locked_kernel[(m,)](x, bufs, locks, n, GROUP=group, BLOCK_N=block_n, num_warps=num_warps)
        return bufs.sum(0)

    def two_stage():
        colsum_partials_kernel[(partials.shape[0],)](x, partials, m, n, ROWS=rows_per_program, BLOCK_N=block_n,
                                                     num_warps=num_warps)
        return partials.sum(0)

    label = f"TRI008/TRI018 column sums fp32 {m}x{n}"
    for name, fn in ((f"tl.atomic_add per row ({m} programs)", atomic),
                     (f"spin-locked {group} group buffers + sum (layer-norm tutorial)", locked),
                     (f"per-program partials over {rows_per_program} rows + sum", two_stage)):
        err = (fn().double() - expected).abs().max().item()
        rows.append((label, name, f"{_time(fn) * 1e3:.1f} us, max abs err {err:.1e}"))


# ---- TRI012: autotuned atomics -----------------------------------------------------------

def bench_autotune_first_call(rows: list, n: int) -> None:
    configs = [triton.Config({"BLOCK": b}) for b in (256, 512, 1024, 2048)]
    extra = {}
    if SMOKE and DEVICE == "cpu":
        extra["do_bench"] = lambda fn, quantiles=None: [_run_once(fn)] * len(quantiles or [0])

    @triton.autotune(configs=configs, key=["n"], **extra)
    @triton.jit
    def vector_sum(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        tl.atomic_add(y_ptr, tl.sum(x, axis=0))  # noqa: TRI008, TRI012 (the bug being measured)

    x = torch.rand(n, device=DEVICE)
    expected = x.double().sum().item()
    calls = []
    for _ in range(2):
        y = torch.zeros(1, device=DEVICE)
        vector_sum[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n)
        calls.append(y.item())
    rows.append((f"TRI012 autotuned atomic_add sum, {len(configs)} configs, n={n}", "first call / second call / exact",
                 f"{calls[0]:.4g} / {calls[1]:.4g} / {expected:.4g} (first call = {calls[0] / expected:.1f}x)"))


# ---- helpers ------------------------------------------------------------------------------

def _run_once(fn) -> float:
    fn()
    return 1.0


def _time(fn) -> float:
    """Median milliseconds."""
    if SMOKE:
        fn()
        return float("nan")
    from tritonify.kernels.bench.timing import events_ms

    return events_ms(fn, warmup_ms=25, rep_ms=200)


def main() -> int:
    rows: list[tuple[str, str, str]] = []
    if SMOKE:
        bench_attention(rows, z=1, n_ctx=32, head_dim=16)
        bench_global_sum(rows, n=4096)
        bench_column_sums(rows, m=16, n=24)
        bench_autotune_first_call(rows, n=3000)
    else:
        for head_dim in (64, 128):
            bench_attention(rows, z=32, n_ctx=4096, head_dim=head_dim)
        bench_global_sum(rows, n=64 * 2**20)
        bench_column_sums(rows, m=32768, n=4096)
        bench_autotune_first_call(rows, n=1_000_000)
    return write_report(rows, "case")


def write_report(rows: list, first_column: str, setting: str = "") -> int:
    """The rows as a Markdown table under the GPU and versions, printed and written to the first
    argument that is not an option (when there is one)."""
    gpu = torch.cuda.get_device_name() if torch.cuda.is_available() else "CPU (TRITON_INTERPRET)"
    lines = [f"GPU: {gpu}, torch {torch.__version__}, triton {triton.__version__}{setting}", "",
             f"| {first_column} | variant | result |", "| --- | --- | --- |"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    out = [a for a in sys.argv[1:] if not a.startswith("--")]
    if out:
        with open(out[0], "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
