"""Where TRI063's exp -> exp2 gain holds: the same flash-attention forward as TRI010's benchmark
(`sync_rules_bench.attn_fwd`: fp16, non-causal, `tl.exp` vs `tl.exp2(E * log2e)` vs log2(e) folded
into the scale), swept over the two facts TRI063 reads from the source: the head dim (64 .. 512)
and the number of query rows per program (a BLOCK_M query block vs a 16-row head group).

Run on a CUDA machine: `python gpu/rules/tri063_tile_bench.py [out.md]`; `--smoke` runs each
case once at toy sizes (TRITON_INTERPRET=1 on a CPU). Timings through the project's one timer
(`tritonify.kernels.bench.timing.events_ms`, via `sync_rules_bench._time`), each variant's error
against a float64 reference on fresh random inputs.
"""
from __future__ import annotations

import os
import sys

import torch
import triton

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sync_rules_bench import DEVICE, SMOKE, _time, attn_fwd, write_report  # noqa: E402

NAMES = {0: "tl.exp", 1: "tl.exp2(E * 1.44269504)", 2: "tl.exp2, log2(e) in the scale"}
# (head dim, BLOCK_M, BLOCK_N, num_warps, num_stages)
CASES = [(64, 128, 64, 8, 3), (128, 128, 64, 8, 3), (256, 64, 64, 8, 2), (512, 64, 32, 8, 2),
         (128, 16, 64, 4, 3), (128, 16, 128, 4, 3)]
QUICK_CASES = [CASES[1], CASES[3], CASES[4]]   # `--quick`: D=128 dense, D=512, 16 rows
SMOKE_CASES = [(16, 16, 16, 4, 1), (32, 16, 16, 4, 1)]


def run_case(rows: list, z: int, n_ctx: int, d: int, bm: int, bn: int, warps: int, stages: int) -> None:
    gen = torch.Generator(device=DEVICE).manual_seed(d * 1000 + bm)
    q, k, v = (torch.randn(z, n_ctx, d, device=DEVICE, dtype=torch.float16, generator=gen) for _ in range(3))
    scale = d ** -0.5
    ref = torch.softmax((q.double() @ k.double().transpose(1, 2)) * scale, dim=-1) @ v.double()
    times = {}
    for mode, name in NAMES.items():
        o = torch.empty_like(q)

        def run():
            attn_fwd[(n_ctx // bm, z)](q, k, v, o, scale, n_ctx, HEAD_DIM=d, BLOCK_M=bm, BLOCK_N=bn, MODE=mode,
                                       num_warps=warps, num_stages=stages)
        try:
            run()
        except Exception as e:  # an out-of-resources config is a result, not a crash of the sweep
            rows.append((f"D={d} BLOCK_M={bm} BLOCK_N={bn}", name, f"failed: {type(e).__name__}: {str(e)[:80]}"))
            return
        err = (o.double() - ref).abs().max().item()
        times[mode] = ms = _time(run)
        gain = f", {100 * (1 - ms / times[0]):+.1f}% vs tl.exp" if mode and times.get(0) else ""
        rows.append((f"D={d} BLOCK_M={bm} BLOCK_N={bn}", name,
                     f"{ms * 1e3:.1f} us{gain}, max abs err {err:.1e} (fp64 reference)"))
        print("|", " | ".join(rows[-1]), "|", flush=True)  # progress: a cut-off run still shows its rows


def main() -> int:
    rows: list[tuple[str, str, str]] = []
    z, n_ctx = (1, 32) if SMOKE else (8, 4096)
    for case in (SMOKE_CASES if SMOKE else QUICK_CASES if "--quick" in sys.argv else CASES):
        run_case(rows, z, n_ctx, *case)
    return write_report(rows, "tile", f"; Z={z} heads x N={n_ctx} tokens, fp16")


if __name__ == "__main__":
    sys.exit(main())
