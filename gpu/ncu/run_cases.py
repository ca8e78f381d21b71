"""Launch the planted and control kernels, each measured launch inside an NVTX range.

    python3 run_cases.py                      # every case
    python3 run_cases.py --only planted_c_uncoalesced,control_copy
    python3 run_cases.py --manifest cases.json --list

Each case is set up, launched twice outside the range (compilation, warm-up), then launched once
inside the NVTX push/pop range `tritonify`, which `ncu --nvtx --nvtx-include tritonify/` selects.
A case that fails is reported on stderr and skipped, so one bad kernel does not cost the capture.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRITON_FILE = HERE / "planted_triton.py"
CUDA_FILE = HERE / "planted_cuda.cu"
SMS = 132
RANGE = "tritonify"


def _triton_cases():
    import torch
    import triton

    import planted_triton as k

    dev = "cuda"
    f32 = torch.float32

    def rand(n, dtype=f32):
        return torch.rand(n, device=dev, dtype=dtype)

    cases = {}

    def case(fn):
        cases[fn.__name__.removeprefix("setup_")] = fn
        return fn

    @case
    def setup_control_copy():
        n = 1 << 26
        x, y = rand(n), torch.empty(n, device=dev)
        return lambda: k.control_copy[(triton.cdiv(n, 4096),)](x, y, n, BLOCK=4096, num_warps=8)

    @case
    def setup_control_softmax():
        rows, cols = 8192, 4096
        x, y = rand(rows * cols), torch.empty(rows * cols, device=dev)
        return lambda: k.control_softmax[(rows,)](x, y, cols, BLOCK=4096, num_warps=8)

    @case
    def setup_control_fma_poly():
        n = 1 << 24
        x, y = rand(n), torch.empty(n, device=dev)
        return lambda: k.control_fma_poly[(triton.cdiv(n, 1024),)](x, y, n, ITERS=256, BLOCK=1024, num_warps=4)

    @case
    def setup_control_atomic_per_block():
        n = 1 << 24
        x, out = rand(n), torch.zeros(64, device=dev)
        return lambda: k.control_atomic_per_block[(triton.cdiv(n, 4096),)](x, out, n, BLOCK=4096, num_warps=8)

    def _mm(kernel, size, dtype, bm, bn, bk, warps, stages):
        a = torch.randn(size, size, device=dev).to(dtype)
        b = torch.randn(size, size, device=dev).to(dtype)
        c = torch.empty(size, size, device=dev, dtype=dtype)
        grid = (size // bm, size // bn)
        return lambda: kernel[grid](a, b, c, size, size, size, BM=bm, BN=bn, BK=bk,
                                    num_warps=warps, num_stages=stages)

    @case
    def setup_control_matmul_fp16():
        return _mm(k.control_matmul_fp16, 4096, torch.float16, 128, 128, 64, 8, 3)

    @case
    def setup_planted_a_small_grid():
        n = 1 << 24
        x, y = rand(n), torch.empty(n, device=dev)
        return lambda: k.planted_a_small_grid[(16,)](x, y, n, BLOCK=1024, num_warps=4)

    @case
    def setup_planted_b_imbalance():
        block, progs = 256, SMS * 8
        x, y = rand(block * progs), torch.empty(block * progs, device=dev)
        work = torch.ones(progs, device=dev, dtype=torch.int32)
        work[:4] = 20000
        return lambda: k.planted_b_imbalance[(progs,)](x, y, work, BLOCK=block, num_warps=4)

    @case
    def setup_planted_c_uncoalesced():
        n, stride = 1 << 22, 32
        x, y = rand(n * stride), torch.empty(n, device=dev)
        return lambda: k.planted_c_uncoalesced[(triton.cdiv(n, 1024),)](x, y, n, STRIDE=stride, BLOCK=1024, num_warps=4)

    @case
    def setup_planted_d_sparse_store():
        n, stride = 1 << 22, 32
        x, y = rand(n), torch.empty(n * stride, device=dev)
        return lambda: k.planted_d_sparse_store[(triton.cdiv(n, 1024),)](x, y, n, STRIDE=stride, BLOCK=1024, num_warps=4)

    @case
    def setup_planted_e_latency():
        block, chunks = 128, 1 << 19              # 64M int32 entries (256 MB), far beyond L2
        perm = torch.randperm(chunks, device=dev, dtype=torch.int64)
        lane = torch.arange(block, device=dev, dtype=torch.int64)
        nxt = (perm[:, None] * block + lane[None, :]).reshape(-1).to(torch.int32)
        progs = SMS * 16
        out = torch.empty(progs * block, device=dev, dtype=torch.int32)
        return lambda: k.planted_e_latency[(progs,)](nxt, out, 256, BLOCK=block, num_warps=4)

    @case
    def setup_planted_f_fp32_dot_on_fma():
        return _mm(k.planted_f_fp32_dot_on_fma, 2048, torch.float32, 64, 64, 32, 4, 2)

    @case
    def setup_planted_g_atomics():
        n = 1 << 21
        x, hist = rand(n), torch.zeros(4, device=dev)
        return lambda: k.planted_g_atomics[(triton.cdiv(n, 1024),)](x, hist, n, BLOCK=1024, num_warps=4)

    @case
    def setup_planted_i_barrier():
        n = 1 << 22
        x, y = rand(n), torch.empty(n, device=dev)
        return lambda: k.planted_i_barrier[(triton.cdiv(n, 1024),)](x, y, n, ITERS=256, BLOCK=1024, num_warps=16)

    @case
    def setup_planted_j_overstaged():
        return _mm(k.planted_j_overstaged, 4096, torch.float16, 64, 64, 64, 4, 8)

    @case
    def setup_planted_k_spill():
        rows, cols = 4096, 16384
        x, y = rand(rows * cols), torch.empty(rows * cols, device=dev)
        return lambda: k.planted_k_spill[(rows,)](x, y, cols, BLOCK=cols, num_warps=1)

    @case
    def setup_planted_l_fp64():
        n = 1 << 24
        x, y = rand(n), torch.empty(n, device=dev)
        return lambda: k.planted_l_fp64[(triton.cdiv(n, 1024),)](x, y, n, ITERS=64, BLOCK=1024, num_warps=4)

    @case
    def setup_planted_m_no_pipelining():
        return _mm(k.planted_m_no_pipelining, 4096, torch.float16, 128, 128, 64, 8, 1)

    @case
    def setup_planted_o_hmma_small_dot():
        return _mm(k.planted_o_hmma_small_dot, 2048, torch.float16, 16, 64, 32, 2, 2)

    @case
    def setup_probe_k_local_gather():
        n, table = 1 << 24, 1024
        x, y = rand(table), torch.empty(n, device=dev)
        idx = torch.randint(0, table, (n,), device=dev, dtype=torch.int32)
        return lambda: k.probe_k_local_gather[(triton.cdiv(n, 1024),)](x, idx, y, n, BLOCK=1024, TABLE=table,
                                                                          num_warps=4)

    @case
    def setup_probe_n_masked_lanes():
        n = 1 << 24
        x, y = rand(n), torch.empty(n, device=dev)
        return lambda: k.probe_n_masked_lanes[(triton.cdiv(n, 1024),)](x, y, n, ITERS=128, BLOCK=1024, num_warps=4)

    return cases


def _cuda_module():
    """The CUDA kernels, from a cubin nvcc built with -lineinfo (ncu then names planted_cuda.cu)."""
    import cupy as cp

    cubin = os.environ.get("PLANTED_CUBIN")
    if cubin and Path(cubin).is_file():
        return cp.RawModule(path=cubin)
    return cp.RawModule(code=CUDA_FILE.read_text(), options=("-lineinfo",))


def _cuda_cases():
    import cupy as cp

    mod = _cuda_module()
    cases = {}

    def f32(n):
        return cp.random.rand(n, dtype=cp.float32)

    def launch(name, grid, block, args, shared_mem=0):
        kern = mod.get_function(name)
        if shared_mem > 48 * 1024:
            kern.max_dynamic_shared_size_bytes = shared_mem
        return lambda: kern(grid, block, args, shared_mem=shared_mem)

    n = 1 << 24
    x, y = f32(n), cp.empty(n, dtype=cp.float32)
    blocks = (n + 255) // 256
    cases["cuda_control_copy"] = lambda: launch("cuda_control_copy", (blocks,), (256,), (x, y, cp.int32(n)))
    cases["cuda_control_fp32_poly"] = lambda: launch("cuda_control_fp32_poly", (blocks,), (256,), (x, y, cp.int32(n)))
    cases["cuda_control_h_padded"] = lambda: launch("cuda_control_h_padded", (n // 1024,), (32, 32), (x, y))
    cases["cuda_planted_h_bank_conflicts"] = lambda: launch("cuda_planted_h_bank_conflicts", (n // 1024,), (32, 32), (x, y))
    idx = cp.random.randint(0, 32, 1024, dtype=cp.int32)
    cases["cuda_planted_k_local_array"] = lambda: launch("cuda_planted_k_local_array", (blocks,), (256,),
                                                         (x, idx, y, cp.int32(n)))
    cases["cuda_planted_l_fp64"] = lambda: launch("cuda_planted_l_fp64", (blocks,), (256,), (x, y, cp.int32(n)))
    cases["cuda_planted_n_divergent"] = lambda: launch("cuda_planted_n_divergent", (blocks,), (256,), (x, y, cp.int32(n)))

    def strided():
        m, stride = 1 << 22, 32
        xs = f32(m * stride)
        return launch("cuda_planted_c_strided", ((m + 255) // 256,), (256,), (xs, y, cp.int32(m), cp.int32(stride)))

    cases["cuda_planted_c_strided"] = strided

    def atomics():
        m = 1 << 21
        hist = cp.zeros(4, dtype=cp.float32)
        return launch("cuda_planted_g_atomics", ((m + 255) // 256,), (256,), (x, hist, cp.int32(m)))

    cases["cuda_planted_g_atomics"] = atomics
    cases["cuda_planted_i_barrier"] = lambda: launch("cuda_planted_i_barrier", (SMS * 4,), (1024,), (y, cp.int32(512)))
    cases["cuda_planted_j_smem_limited"] = lambda: launch(
        "cuda_planted_j_smem_limited", (SMS * 4,), (64,), (x, y, cp.int32(n)), shared_mem=200 * 1024)
    return cases


def _plants(path: Path) -> dict[str, dict]:
    """kernel name -> {"def_line": n, "plants": {letter: [lines]}} read from the `# PLANT:` comments."""
    out, current = {}, None
    for no, line in enumerate(path.read_text().splitlines(), 1):
        m = re.match(r"\s*def (\w+)\(", line) or re.search(r'extern "C" __global__ void (\w+)\(', line)
        if m:
            current = m.group(1)
            out[current] = {"def_line": no, "plants": {}}
        p = re.search(r"(?:#|//) PLANT: ([A-Z])", line)
        if p and current:
            out[current]["plants"].setdefault(p.group(1), []).append(no)
    return out


def manifest() -> list[dict]:
    rows = []
    for path, lang in ((TRITON_FILE, "triton"), (CUDA_FILE, "cuda")):
        for name, info in _plants(path).items():
            role = ("control" if "control" in name else "probe" if name.startswith("probe") else "planted")
            rows.append({"kernel": name, "language": lang, "file": path.name, "role": role, **info})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", help="comma-separated case names")
    ap.add_argument("--manifest", help="write the case list (kernels, planted lines) as JSON here")
    ap.add_argument("--list", action="store_true", help="only write the manifest")
    ap.add_argument("--no-cuda", action="store_true")
    args = ap.parse_args(argv)
    if args.manifest:
        Path(args.manifest).write_text(json.dumps(manifest(), indent=1))
    if args.list:
        return 0
    sys.path.insert(0, str(HERE))
    import torch

    wanted = set(args.only.split(",")) if args.only else None
    setups = dict(_triton_cases())
    needs_cuda = wanted is None or any(w.startswith("cuda_") for w in wanted)
    if needs_cuda and not args.no_cuda:
        try:
            setups.update(_cuda_cases())
        except Exception:
            traceback.print_exc()
    failed = 0
    for name, setup in setups.items():
        if wanted is not None and name not in wanted:
            continue
        try:
            fn = setup()
            fn()
            fn()
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_push(RANGE)
            fn()
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_pop()
            print(f"ran {name}", flush=True)
        except Exception as exc:
            failed += 1
            print(f"FAILED {name}: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
            traceback.print_exc()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
