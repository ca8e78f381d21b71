"""Device probe: the 1x1 layers' GEMM kernel (``_conv2d_gemm_kernel``), each config alone, on ResNet-50's 1x1
layers (CONV_SHAPES picks them) at PROBE_BATCHES, against float64 (PROBE_LAUNCHES launches on the same inputs,
each checked, all compared with the first), timed beside the implicit-GEMM kernel (its autotuner's choice),
cuDNN (``F.conv2d`` on the channels-last views) and ``torch.mm`` on the same matrices (at stride 2 on a copy
of the pixels the filter reads), all with the project's timer in the same process.

With PROBE_GEMM_WS=1 it also runs WS_TILES: configs with Triton's own warp specialization of the kernel's tile
loop (``tl.range(warp_specialize=True)``, FLATTEN off as Hopper wants), which no shipped config has; a config
that does not compile is recorded with its error.

    python gpu/conv/probe_gemm.py OUT_DIR        # records appended to OUT_DIR/probe_gemm.jsonl
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench  # noqa: E402  (the benchmark's shapes, inputs and timer)

BATCHES = tuple(int(b) for b in os.environ.get("PROBE_BATCHES", "32,128").split(","))
LAUNCHES = int(os.environ.get("PROBE_LAUNCHES", "3"))
WRONG = 0.01
WS_TILES = [(128, 128, 64, 4, 4), (128, 128, 64, 8, 3), (128, 128, 64, 8, 4), (128, 256, 64, 8, 3),
            (128, 128, 128, 8, 3), (64, 128, 64, 4, 4)]  # (BLOCK_M, BLOCK_N, BLOCK_K, warps, stages)


def main(argv):
    import torch
    import torch.nn.functional as F

    from tritonify.kernels.templates import conv2d as m

    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    f = (out / "probe_gemm.jsonl").open("a")
    torch.backends.cudnn.benchmark = True
    kernel, launcher = m._conv2d_gemm_kernel, m._conv2d_gemm_launch
    saved = kernel.configs
    tried = list(saved)
    if os.environ.get("PROBE_GEMM_WS") == "1":
        tried += [m._conv2d_gemm_config(*tile, flatten=False, warp_specialize=True) for tile in WS_TILES]
    torch.manual_seed(0)

    def emit(rec):
        line = json.dumps(rec, default=str)
        f.write(line + "\n")
        f.flush()
        print(line[:300], flush=True)

    for name in bench.selected([s[0] for s in bench.SHAPES if bench.gemm_layer(s[0])]):
        _, hw, c_in, c_out, k, stride = bench.shape_of(name)
        for batch in BATCHES:
            x, w, _, _, _, pad = bench.conv_inputs(name, batch)
            xc, wc = x.permute(0, 3, 1, 2), w.permute(0, 3, 1, 2)
            ref = F.conv2d(xc.double(), wc.double(), None, stride, pad).permute(0, 2, 3, 1)
            scale = ref.abs().max().item()
            base = {"kind": "probe_gemm", "layer": name, "batch": batch}
            with torch.no_grad():
                m._CONV2D_GEMM["mode"] = "implicit"
                m.conv2d_forward(x, w, None, None, stride, pad)
                emit({**base, "what": "implicit", "config": bench.best_config(m._conv2d_fwd_kernel),
                      "us": bench.timings(lambda: m.conv2d_forward(x, w, None, None, stride, pad), events=False)["graph_us"]})
                emit({**base, "what": "cudnn", "us": bench.timings(lambda: F.conv2d(xc, wc, None, stride, pad),
                                                                   events=False)["graph_us"]})
                xs = x if stride == 1 else x[:, ::stride, ::stride].contiguous()
                a2, w2 = xs.reshape(-1, c_in), w.reshape(c_out, c_in)
                emit({**base, "what": "torch_mm", "us": bench.timings(lambda: torch.mm(a2, w2.t()), events=False)["graph_us"]})
                m._CONV2D_GEMM["mode"] = "gemm"
                for config in tried:
                    if config.kwargs["BLOCK_K"] != 64 and c_in < 128:
                        continue
                    rec = {**base, "what": "gemm", "config": str(config)}
                    kernel.configs, kernel.cache = [config], {}
                    launcher.plans.clear()
                    try:
                        ys = [m.conv2d_forward(x, w, None, None, stride, pad)[0].clone() for _ in range(LAUNCHES)]
                        torch.cuda.synchronize()
                        errs = [((y.double() - ref).abs().max() / scale).item() for y in ys]
                        rec["max_rel_err"] = max(errs)
                        rec["launches_differ"] = int(sum((y != ys[0]).sum().item() for y in ys[1:]))
                        rec["wrong"] = rec["max_rel_err"] > WRONG or rec["launches_differ"] > 0
                        rec["us"] = bench.timings(lambda: m.conv2d_forward(x, w, None, None, stride, pad), events=False)["graph_us"]
                    except Exception as exc:  # noqa: BLE001
                        rec["error"] = f"{type(exc).__name__}: {exc}"[:400]
                    finally:
                        kernel.configs, kernel.cache = saved, {}
                        launcher.plans.clear()
                    emit(rec)
                m._CONV2D_GEMM["mode"] = "auto"
    return 0


if __name__ == "__main__":
    bench._TIMER_MS.update(warmup_ms=5, rep_ms=10)
    start = time.time()
    rc = main(sys.argv[1:])
    print(f"probe done in {time.time() - start:.0f} s")
    sys.exit(rc)
