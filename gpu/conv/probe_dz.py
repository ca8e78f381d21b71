"""Probe: the training step's epilogue backward (``conv2d_dz_dbias``: dz = dy * silu'(z) and d bias in one pass
over dy and z) on the training rows' outputs, as the template launches it and with other tile shapes and warp
counts; CUDA-graph replay with the L2 flushed (the project's GpuTimer), bytes = dy and z read + dz written.
Each variant's dz and d bias against float64 first. The record of 2026-12-03 19:10Z
(results/conv_h200/checks_2026-12-03_19/1910/probe_dz.jsonl) was made at commit 94f274f, whose kernel could also
walk 4 row tiles a program (the ``/t4`` variants; slower than one on every row, since removed).
The fixed variants: the template as it launches (template: its programs walk several row tiles,
``_CONV2D_DZ_PROGRAMS_PER_SM`` per SM: 2 since 2026-12-04 02:38Z, 4 in the 02:28Z record), with 1, 4 and 8 programs
per SM (pps1, pps4, pps8; the 02:28Z record has pps1, pps2, pps8), with a program a row tile (tile_partials: one
partial row a tile, as the kernel was before 2026-12-04), dz then PyTorch's column sum of dz (dz_then_sum), dz alone
(no_dbias), PyTorch's elementwise add over the same bytes (torch_add, a baseline; its error is not the epilogue's),
and torch.compile of the same math (compile: what Inductor's training graph runs for this part). In the 02:28Z
record, finish_off is the column-sum kernel where the kernel's last program then summed d bias itself (since
retired). --no-tiles: those alone.
    python gpu/conv/probe_dz.py OUT_DIR [--no-tiles]"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
import triton

from tritonify.kernels.bench.timing import GpuTimer
from tritonify.kernels.templates import conv2d as m

sys.path.insert(0, str(Path(__file__).parent))
import bench  # noqa: E402

COPY_TBPS = 4.0  # ../shared/facts/h200.md: device-to-device copy, read + write counted


def with_constants(dy, z, **constants):
    """conv2d_dz_dbias(dy, z, True) with the template's module constants set as given for the call."""
    saved = {name: getattr(m, name) for name in constants}
    for name, value in constants.items():
        setattr(m, name, value)
    try:
        return m.conv2d_dz_dbias(dy, z, True)
    finally:
        for name, value in saved.items():
            setattr(m, name, value)


def dz_dbias_math(dy, z):
    """dz = dy * silu'(z) and its column sums in fp32, as the training graph computes them (for torch.compile)."""
    zf = z.float()
    s = torch.sigmoid(zf)
    dz = dy.float() * s * (1 + zf * (1 - s))
    return dz.to(dy.dtype), dz.reshape(-1, dz.shape[-1]).sum(0).to(dy.dtype)


def main(out: Path, tiles: bool = True) -> int:
    out.mkdir(parents=True, exist_ok=True)
    timer = GpuTimer(warmup_ms=10, rep_ms=40)
    for limit in ("recompile_limit", "cache_size_limit"):  # one compile a shape, none falling back to eager
        if hasattr(torch._dynamo.config, limit):
            setattr(torch._dynamo.config, limit, 64)
    compiled = torch.compile(dz_dbias_math, dynamic=False)
    torch.manual_seed(0)
    with open(out / "probe_dz.jsonl", "w") as f:
        for batch in (32, 128):
            for name in bench.TRAIN_SHAPES:
                _, size, c_in, c_out, k, stride = bench.shape_of(name)
                side = m.conv2d_out_size(size, k, stride, k // 2)
                dy = torch.randn(batch, side, side, c_out, device="cuda").bfloat16()
                z = torch.randn(batch, side, side, c_out, device="cuda").bfloat16()
                s = torch.sigmoid(z.double())
                ref_dz = dy.double() * s * (1 + z.double() * (1 - s))
                ref_db = ref_dz.reshape(-1, c_out).sum(0)
                nbytes = 3 * dy.numel() * dy.element_size()
                tile = m._conv2d_elementwise_tile(c_out)
                variants = {"template": lambda: m.conv2d_dz_dbias(dy, z, True),  # as the template chooses
                            **{f"pps{n}": (lambda n=n: with_constants(dy, z, _CONV2D_DZ_PROGRAMS_PER_SM=n))
                               for n in (1, 4, 8)},
                            "tile_partials": lambda: with_constants(dy, z, _CONV2D_DZ_PROGRAMS_PER_SM=10**9),
                            "dz_then_sum": lambda: (lambda d: (d, d.reshape(-1, d.shape[-1]).sum(0)))(
                                m._conv2d_dz_dbias_tiled(dy, z, False, *tile)[0]),
                            # dz alone: what the partial sums cost
                            "no_dbias": lambda: (m.conv2d_dz_dbias(dy, z, False)[0], ref_db),
                            # PyTorch's elementwise over the same bytes (two reads, one write): a named baseline
                            "torch_add": lambda: (torch.add(dy, z, out=scratch), ref_db),
                            "compile": lambda: compiled(dy, z)}
                scratch = torch.empty_like(dy)
                for block_c in (64, 128, 256) if tiles else ():
                    if block_c > triton.next_power_of_2(c_out):
                        continue
                    for elements in (4096, 8192, 16384):
                        for warps in (4, 8):
                            block_r = elements // block_c
                            if block_r < 16:
                                continue
                            variants[f"{block_r}x{block_c}/w{warps}/t1"] = (
                                lambda br=block_r, bc=block_c, w=warps: m._conv2d_dz_dbias_tiled(dy, z, True, br, bc, w))
                row = {"shape": name, "batch": batch, "rows": dy.numel() // c_out, "C": c_out, "MB": round(nbytes / 1e6, 1),
                       "variants": {}}
                for label, call in variants.items():
                    dz, db = call()
                    if label == "torch_add":
                        dz = ref_dz  # not the epilogue: no error to report
                    err = max(float((dz.double() - ref_dz).abs().max() / ref_dz.abs().max()),
                              float((db.double() - ref_db).abs().max() / ref_db.abs().max()))
                    call()
                    torch.cuda.synchronize()
                    t = timer.measure(call, graph=True, calls_per_graph=timer.graph_calls(call))
                    us = 1e3 * t.p50_ms
                    row["variants"][label] = {"us": round(us, 2), "of_copy": round(nbytes / (us * 1e-6) / (COPY_TBPS * 1e12), 3),
                                              "err": round(err, 5), "method": t.method}
                best = min(row["variants"].items(), key=lambda kv: kv[1]["us"])
                row["best"] = best[0]
                print(json.dumps({k: row[k] for k in ("shape", "batch", "MB", "best")} |
                                 {"template_us": row["variants"]["template"]["us"], "best_us": best[1]["us"],
                                  "best_of_copy": best[1]["of_copy"]} |
                                 {label: v["us"] for label, v in row["variants"].items()}), flush=True)
                f.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), tiles="--no-tiles" not in sys.argv[2:]))
