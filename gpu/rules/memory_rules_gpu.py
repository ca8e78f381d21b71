"""Check on a GPU what the memory rules (TRI005, TRI006, TRI007, TRI014) claim.

Run on a CUDA machine: `python gpu/rules/memory_rules_gpu.py [out.md]`. Prints a Markdown table
(and writes it to out.md when given). Cases that may fault run in a child process each, because
an illegal memory access poisons the CUDA context of the process that made it.

* TRI006: copy a [600_000, 4096] int32 tensor (2.46e9 elements) row by row with
  `x_ptr + row * stride` where `row = tl.program_id(0)` (int32) and where it is cast to int64;
  then time both forms on an ordinary [8192, 4096] int32 tensor (the cost of the fix).
* TRI014: the row max of all-negative rows (1000 columns in a 1024 block) with a masked load
  without `other=` and with `other=-inf`; a softmax of negative logits loaded the same two ways.
* TRI005: which `tl.dot` tile shapes compile and give the right answer on this GPU (fp16 with
  K = 8, M = 8, N = 8), and a bf16 matrix-vector product written with `tl.dot` (vector padded to
  16 columns) against `tl.sum(w * x[None, :], 1)`.
* TRI007: an unmasked vector add on 98,000 elements: does the tail block write into a tensor
  allocated right after the output? (Depends on the allocator; reported as observed.)
"""
from __future__ import annotations

import json
import subprocess
import sys

import torch
import triton
import triton.language as tl

from tritonify.kernels.bench.timing import events_ms

ROWS_BIG, COLS = 600_000, 4096


# ---- TRI006 -------------------------------------------------------------------------------------
@triton.jit
def copy_rows_kernel(x_ptr, y_ptr, stride, n_cols, WIDE: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    if WIDE:
        row = row.to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0)
    tl.store(y_ptr + row * stride + cols, x, mask=mask)


def overflow_case(wide: bool) -> dict:
    # int32 rows holding their own index: a row read from the wrong place shows up
    x = torch.arange(ROWS_BIG, device="cuda", dtype=torch.int32)[:, None].expand(ROWS_BIG, COLS).contiguous()
    y = torch.zeros_like(x)
    copy_rows_kernel[(ROWS_BIG,)](x, y, x.stride(0), COLS, WIDE=wide, BLOCK=COLS)
    torch.cuda.synchronize()
    bad_rows = (y != x).any(dim=1).nonzero().flatten()
    return {
        "elements": x.numel(),
        "bad_rows": int(bad_rows.numel()),
        "first_bad_row": int(bad_rows[0]) if bad_rows.numel() else None,
        "wrap_row": (2**31) // COLS,
    }


def timing_case() -> dict:
    x = torch.randint(0, 1000, (8192, COLS), device="cuda", dtype=torch.int32)
    y = torch.empty_like(x)
    out = {}
    for wide in (False, True):
        ms = events_ms(lambda wide=wide: copy_rows_kernel[(8192,)](x, y, x.stride(0), COLS, WIDE=wide, BLOCK=COLS), warmup_ms=25, rep_ms=100)
        out["int64" if wide else "int32"] = ms * 1e3
    return out


# ---- TRI014 -------------------------------------------------------------------------------------
@triton.jit
def row_max_kernel(x_ptr, out_ptr, n_cols, WITH_OTHER: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    if WITH_OTHER:
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    else:
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask)
    tl.store(out_ptr + row, tl.max(x, axis=0))


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, WITH_OTHER: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    if WITH_OTHER:
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    else:
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask)
    num = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * n_cols + cols, num / tl.sum(num, axis=0), mask=mask)


def other_case() -> dict:
    torch.manual_seed(0)
    x = -torch.rand(64, 1000, device="cuda") - 1.0          # every value in [-2, -1)
    out = {}
    for with_other in (False, True):
        m = torch.empty(64, device="cuda")
        row_max_kernel[(64,)](x, m, 1000, WITH_OTHER=with_other, BLOCK=1024)
        y = torch.empty_like(x)
        softmax_kernel[(64,)](x, y, 1000, WITH_OTHER=with_other, BLOCK=1024)
        key = "other=-inf" if with_other else "no other"
        out[key] = {
            "row_max_err": float((m - x.max(dim=1).values).abs().max()),
            "row_max_sample": float(m[0]),
            "softmax_max_abs_err": float((y - torch.softmax(x, dim=1)).abs().max()),
        }
    out["true_row_max_sample"] = float(x[0].max())
    return out


# ---- TRI005 -------------------------------------------------------------------------------------
@triton.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))


def dot_shapes_case() -> dict:
    out = {}
    for m, n, k in [(16, 16, 16), (8, 16, 16), (16, 8, 16), (16, 1, 16), (16, 16, 8)]:
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        c = torch.empty(m, n, device="cuda", dtype=torch.float32)
        try:
            dot_kernel[(1,)](a, b, c, M=m, N=n, K=k)
            torch.cuda.synchronize()
            err = float((c - a.float() @ b.float()).abs().max())
            out[f"M={m} N={n} K={k}"] = f"runs, max abs err {err:.1e}"
        except Exception as exc:  # noqa: BLE001 - report the compiler's message
            out[f"M={m} N={n} K={k}"] = f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1][:120]}"
    return out


@triton.jit
def gemv_sum_kernel(w_ptr, x_ptr, y_ptr, K, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        w = tl.load(w_ptr + rows[:, None].to(tl.int64) * K + ks[None, :])
        x = tl.load(x_ptr + ks)
        acc += tl.sum(w.to(tl.float32) * x[None, :].to(tl.float32), 1)
    tl.store(y_ptr + rows, acc)


@triton.jit
def gemv_dot_kernel(w_ptr, x_ptr, y_ptr, K, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, 16)
    acc = tl.zeros((BLOCK_M, 16), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        w = tl.load(w_ptr + rows[:, None].to(tl.int64) * K + ks[None, :])
        x = tl.load(x_ptr + ks[:, None] + cols[None, :] * 0, mask=cols[None, :] < 1, other=0.0)  # [BK, 16], column 0 only
        acc = tl.dot(w, x, acc)
    y = tl.sum(acc, 1)  # only column 0 is non-zero
    tl.store(y_ptr + rows, y)


def gemv_case() -> dict:
    m, k = 16384, 4096
    w = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    x = torch.randn(k, device="cuda", dtype=torch.bfloat16)
    ref = w.float() @ x.float()
    out = {}
    for name, kernel, bm, bk in (("tl.sum", gemv_sum_kernel, 16, 256), ("tl.dot padded to N=16", gemv_dot_kernel, 64, 64)):
        y = torch.empty(m, device="cuda", dtype=torch.float32)
        kernel[(m // bm,)](w, x, y, k, BLOCK_M=bm, BLOCK_K=bk)
        err = float((y - ref).abs().max())
        ms = events_ms(lambda kernel=kernel, y=y, bm=bm, bk=bk: kernel[(m // bm,)](w, x, y, k, BLOCK_M=bm, BLOCK_K=bk), warmup_ms=25, rep_ms=100)
        gbs = w.numel() * 2 / (ms * 1e-3) / 1e9
        out[name] = {"us": ms * 1e3, "GB/s": gbs, "max_abs_err": err}
    return out


# ---- TRI007 -------------------------------------------------------------------------------------
@triton.jit
def add_unmasked_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + tl.load(y_ptr + offs))


def unmasked_case() -> dict:
    n = 98_000
    a = torch.rand(n, device="cuda")
    b = torch.rand(n, device="cuda")
    out = torch.empty(n, device="cuda")
    neighbour = torch.full((4096,), -1.0, device="cuda")
    gap = neighbour.data_ptr() - (out.data_ptr() + n * 4)
    add_unmasked_kernel[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK=1024)
    torch.cuda.synchronize()
    changed = int((neighbour != -1.0).sum())
    return {"bytes_between_out_end_and_neighbour": gap, "neighbour_elements_overwritten": changed,
            "out_correct": bool(torch.allclose(out, a + b))}


CASES = {
    "overflow_int32": lambda: overflow_case(False),
    "overflow_int64": lambda: overflow_case(True),
    "timing": timing_case,
    "other": other_case,
    "dot_shapes": dot_shapes_case,
    "gemv": gemv_case,
    "unmasked": unmasked_case,
}


def run_child(name: str) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--case", name], capture_output=True, text=True, timeout=300, check=False)
    if proc.returncode != 0:
        lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
        cuda = [line for line in lines if "CUDA error" in line or "illegal" in line.lower()]
        return {"failed": (cuda or lines or [f"exit {proc.returncode}"])[-1][:300]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--case":
        print(json.dumps(CASES[sys.argv[2]]()))
        return
    results = {name: run_child(name) for name in CASES}
    header = (f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}\n\n"
              "```json\n" + json.dumps(results, indent=1) + "\n```\n")
    print(header)
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as fh:
            fh.write(header)


if __name__ == "__main__":
    main()
