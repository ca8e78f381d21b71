"""Measure what the precision rules (TRI002, TRI013, TRI015, TRI016, TRI017) claim, on a GPU.

Run on a CUDA machine: `python gpu/rules/precision_rules_bench.py [out.md]`. Prints a Markdown
table (and writes it to out.md when given). Each figure is a `triton.testing.do_bench` mean, through the project's one
timer (`tritonify.kernels.bench.timing.events_ms`).

* TRI016: SwiGLU-style `silu(a * s) * b` (bf16 8192x3072) with the scalar `s` fp32, fp64 (what
  Inductor passes; simulated by casting the argument to fp64 behind a constexpr flag) and fp64
  cast back with `.to(tl.float32)`.
* TRI002: row sum of squares over fp32 rows (8192x8192) accumulated in fp32 vs fp64.
* TRI013: exact erf-GELU vs the sigmoid form, one per element (memory-bound) and 64 chained.
* TRI017: `1 / tl.sqrt(x)` vs `tl.rsqrt(x)`, 64 chained per element.
* TRI015: fp32 matmul 4096^3 with input_precision tf32 / tf32x3 / ieee: time and max error.
"""
from __future__ import annotations

import sys

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def swiglu_kernel(a_ptr, b_ptr, c_ptr, s, n, SCALAR_FP64: tl.constexpr, RECAST: tl.constexpr, BLOCK: tl.constexpr):
    if SCALAR_FP64:
        s = s.to(tl.float64)
    if RECAST:
        s = s.to(tl.float32)
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    g = a * s
    c = g * tl.sigmoid(g) * b
    tl.store(c_ptr + offs, c.to(c_ptr.dtype.element_ty), mask=mask)


@triton.jit
def sumsq_kernel(x_ptr, out_ptr, n_cols, ACC_FP64: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    if ACC_FP64:
        acc = tl.zeros([BLOCK], dtype=tl.float64)
    else:
        acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
        if ACC_FP64:
            x = x.to(tl.float64)
        acc += x * x
    tl.store(out_ptr + row, tl.sum(acc, axis=0).to(tl.float32))


@triton.jit
def silu_chain_kernel(x_ptr, y_ptr, n, ITERS: tl.constexpr, FP64: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    if FP64:
        x = x.to(tl.float64)
    for _ in range(ITERS):
        x = x * tl.sigmoid(x) + 0.5
    tl.store(y_ptr + offs, x.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n, ITERS: tl.constexpr, EXACT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    for _ in range(ITERS):
        if EXACT:
            x = 0.5 * x * (1.0 + libdevice.erf(x * 0.7071067811865476))
        else:
            x = x * tl.sigmoid(1.5957691 * x * (1 + 0.044715 * x * x))
    tl.store(y_ptr + offs, x, mask=mask)


@triton.jit
def rsqrt_kernel(x_ptr, y_ptr, n, ITERS: tl.constexpr, RSQRT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    y = x
    for _ in range(ITERS):
        if RSQRT:
            y = tl.rsqrt(y + x)
        else:
            y = 1.0 / tl.sqrt(y + x)
    tl.store(y_ptr + offs, y, mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, PRECISION: tl.constexpr,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0).to(tl.int64)
    pid_n = tl.program_id(1).to(tl.int64)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, K, BK):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += BK
        b_ptrs += BK * N
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


def bench(fn) -> float:
    from tritonify.kernels.bench.timing import events_ms

    return events_ms(fn, warmup_ms=50, rep_ms=300)


def main() -> None:
    torch.manual_seed(0)
    dev = "cuda"
    rows: list[tuple[str, str, str]] = []

    # TRI016 -------------------------------------------------------------------------------
    a = torch.randn(8192, 3072, device=dev, dtype=torch.bfloat16)
    b = torch.randn_like(a)
    c = torch.empty_like(a)
    n = a.numel()
    grid = (triton.cdiv(n, 1024),)
    for label, fp64, recast in (("fp32 scalar (eager)", False, False), ("fp64 scalar (Inductor)", True, False),
                                ("fp64 scalar + .to(tl.float32)", True, True)):
        ms = bench(lambda: swiglu_kernel[grid](a, b, c, 1.0, n, fp64, recast, BLOCK=1024))
        gbs = 3 * n * 2 / ms / 1e6
        rows.append(("TRI016 silu(a*s)*b bf16 8192x3072", label, f"{ms * 1e3:.1f} us ({gbs:.0f} GB/s)"))

    # TRI002 -------------------------------------------------------------------------------
    x = torch.randn(8192, 8192, device=dev, dtype=torch.float32)
    out = torch.empty(8192, device=dev, dtype=torch.float32)
    ref = (x.double() ** 2).sum(1)
    for label, fp64 in (("fp32 accumulator", False), ("fp64 accumulator", True)):
        ms = bench(lambda: sumsq_kernel[(8192,)](x, out, 8192, fp64, BLOCK=1024))
        err = ((out.double() - ref).abs() / ref).max().item()
        rows.append(("TRI002 row sum of squares fp32 8192x8192", label, f"{ms * 1e3:.1f} us, max rel err {err:.1e}"))

    v32 = torch.randn(16 * 1024 * 1024, device=dev, dtype=torch.float32)
    v64 = v32.double()
    w32, w64 = torch.empty_like(v32), torch.empty_like(v64)
    gv = (triton.cdiv(v32.numel(), 1024),)
    for iters in (1, 64):
        for label, src, dst, fp64 in (("fp32 tensors, fp32 math", v32, w32, False),
                                      ("fp32 tensors, fp64 math (.to(tl.float64))", v32, w32, True),
                                      ("fp64 tensors (.double() on the host)", v64, w64, False)):
            ms = bench(lambda: silu_chain_kernel[gv](src, dst, src.numel(), iters, fp64, BLOCK=1024))
            rows.append((f"TRI002 x*sigmoid(x)+c x{iters} per element, 16M", label, f"{ms * 1e3:.1f} us"))

    # TRI013 -------------------------------------------------------------------------------
    g = torch.randn(16 * 1024 * 1024, device=dev, dtype=torch.float32) * 3
    y = torch.empty_like(g)
    exact = torch.nn.functional.gelu(g.double())
    for iters in (1, 64):
        for label, is_exact in (("erf (exact)", True), ("sigmoid form", False)):
            gg = triton.cdiv(g.numel(), 1024)
            ms = bench(lambda: gelu_kernel[(gg,)](g, y, g.numel(), iters, is_exact, BLOCK=1024))
            extra = ""
            if iters == 1:
                extra = f", max abs err vs fp64 erf-GELU {(y.double() - exact).abs().max().item():.1e}"
            rows.append((f"TRI013 GELU x{iters} per element, 16M fp32", label, f"{ms * 1e3:.1f} us{extra}"))

    # TRI017 -------------------------------------------------------------------------------
    p = torch.rand(16 * 1024 * 1024, device=dev, dtype=torch.float32) + 0.5
    q = torch.empty_like(p)
    results = {}
    for label, use_rsqrt in (("1 / tl.sqrt(x)", False), ("tl.rsqrt(x)", True)):
        gp = triton.cdiv(p.numel(), 1024)
        ms = bench(lambda: rsqrt_kernel[(gp,)](p, q, p.numel(), 64, use_rsqrt, BLOCK=1024))
        results[label] = q.clone()
        rows.append(("TRI017 64 chained reciprocal square roots, 16M fp32", label, f"{ms * 1e3:.1f} us"))
    one = p[:1 << 20]
    r1 = torch.empty_like(one)
    r2 = torch.empty_like(one)
    rsqrt_kernel[(1024,)](one, r1, one.numel(), 1, False, BLOCK=1024)
    rsqrt_kernel[(1024,)](one, r2, one.numel(), 1, True, BLOCK=1024)
    ref1 = 1 / torch.sqrt(2 * one.double())
    rows.append(("TRI017 one reciprocal sqrt, rel err vs fp64", "1 / tl.sqrt | tl.rsqrt",
                 f"{((r1.double() - ref1).abs() / ref1).max().item():.1e} | {((r2.double() - ref1).abs() / ref1).max().item():.1e}"))

    # TRI015 -------------------------------------------------------------------------------
    M = N = K = 4096
    A = torch.randn(M, K, device=dev, dtype=torch.float32)
    B = torch.randn(K, N, device=dev, dtype=torch.float32)
    C = torch.empty(M, N, device=dev, dtype=torch.float32)
    refC = (A.double() @ B.double())
    for prec in ("tf32", "tf32x3", "ieee"):
        mgrid = (M // 128, N // 128)
        ms = bench(lambda: matmul_kernel[mgrid](A, B, C, M, N, K, prec, BM=128, BN=128, BK=32, num_warps=8, num_stages=3))
        err = (C.double() - refC).abs().max().item()
        tflops = 2 * M * N * K / ms / 1e9
        rows.append(("TRI015 fp32 matmul 4096^3", f'input_precision="{prec}"', f"{ms:.2f} ms ({tflops:.0f} TFLOP/s), max abs err {err:.1e}"))

    header = (f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}\n\n"
              "| case | variant | result |\n| --- | --- | --- |\n")
    table = header + "\n".join(f"| {a_} | {b_} | {c_} |" for a_, b_, c_ in rows) + "\n"
    print(table)
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w", encoding="utf-8") as fh:
            fh.write(table)


if __name__ == "__main__":
    main()
