"""Device probe: the conv2d forward's A_BOX configs, each alone (PROBE_WEIGHT_DESCRIPTOR=1: also the ones
with the weight's descriptor too, taken out of the template), on the layers whose input boxes hold several
images (14x14 and 7x7 outputs) and on two of one image (56x56, 28x28), at several batches, against float64;
where an output is wrong, where in the box / grid the wrong elements lie, and whether launches on the same
inputs agree (a race shows as a difference). CONV_SHAPES (environment) picks the layers.

    python gpu/conv/probe_box.py OUT_DIR        # records appended to OUT_DIR/probe_box.jsonl

Each record: layer, batch, config, BOX, grid programs, max_rel_err (first launch, and the worst of the
later ones: PROBE_LAUNCHES, default 2), the elements where later launches differ from the first, the
wrong elements' counts (worst launch) by image-in-box, by output row and by channel tile, the
compiled kernel's shared memory and registers (occupancy: programs per SM), the config's GPU time.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench  # noqa: E402  (the benchmark's shapes, inputs and timer)

LAYERS = ["s3.3x3", "s4.3x3", "s3.3x3/2", "s4.3x3/2", "s4.down/2", "s1.3x3", "s2.3x3"]
BATCHES = tuple(int(b) for b in os.environ.get("PROBE_BATCHES", "32,64,128").split(","))
LAUNCHES = int(os.environ.get("PROBE_LAUNCHES", "2"))  # launches on the same inputs, each against float64
WRONG = 0.01


def compiled_stats(kernel):
    """(shared bytes, registers) of the kernels the autotuner's JIT function has compiled (the last one)."""
    fn = getattr(kernel, "fn", None)
    stats = []
    for cache in getattr(fn, "device_caches", {}).values():
        kernels = cache[0] if isinstance(cache, tuple) else cache
        for k in kernels.values():
            try:
                k._init_handles()
            except Exception:  # noqa: BLE001
                pass
            stats.append((getattr(k.metadata, "shared", None), getattr(k, "n_regs", None), getattr(k, "n_spills", None)))
    return stats


def main(argv):
    import torch
    import torch.nn.functional as F

    from tritonify.kernels.templates import conv2d as m

    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    f = (out / "probe_box.jsonl").open("a")
    configs = [c for c in m._CONV2D_FWD_TMA_CONFIGS if c.kwargs["A_BOX"]]
    if os.environ.get("PROBE_WEIGHT_DESCRIPTOR") == "1":  # the configs taken out (the race) and a 4-warp one
        configs += [m._conv2d_config(128, 128, 64, 8, 3, tma=True, a_box=True),
                    m._conv2d_config(128, 128, 64, 4, 4, tma=True, a_box=True)]
    kernel, launcher = m._conv2d_fwd_kernel, m._conv2d_fwd_launch
    saved = kernel.configs
    torch.manual_seed(0)
    for name in bench.selected(LAYERS):
        _, hw, c_in, c_out, k, stride = bench.shape_of(name)
        pad = k // 2
        o = m.conv2d_out_size(hw, k, stride, pad)
        box = m._conv2d_box_shape(o, o)
        for batch in BATCHES:
            x, w, _, _, _, _ = bench.conv_inputs(name, batch)
            ref = F.conv2d(x.double().permute(0, 3, 1, 2), w.double().permute(0, 3, 1, 2), None, stride, pad)
            ref = ref.permute(0, 2, 3, 1)
            scale = ref.abs().max().item()
            for ci, config in enumerate(configs):
                rec = {"kind": "probe_box", "layer": name, "batch": batch, "config": str(config), "box": box,
                       "programs": (-(-batch // box[0]) * -(-o // box[1]) * -(-o // box[2]))
                       * -(-c_out // config.kwargs["BLOCK_N"])}
                kernel.configs, kernel.cache = [config], {}
                launcher.plans.clear()
                try:
                    with torch.no_grad():
                        ys = []
                        for _ in range(LAUNCHES):
                            y, _ = m.conv2d_forward(x, w, None, None, stride, pad)
                            ys.append(y.clone())
                        torch.cuda.synchronize()
                    errs = [((y.double() - ref).abs() / scale) for y in ys]
                    err = max(errs, key=lambda e: e.max().item())
                    rec["max_rel_err"] = errs[0].max().item()
                    rec["max_rel_err_2"] = max(e.max().item() for e in errs[1:]) if len(errs) > 1 else None
                    rec["launches_differ"] = int(sum((y != ys[0]).sum().item() for y in ys[1:]))
                    bad = err > WRONG
                    rec["wrong"] = int(bad.sum().item())
                    if rec["wrong"]:
                        rec["wrong_by_image_in_box"] = bad.reshape(-1, box[0], o, o, c_out).sum((0, 2, 3, 4)).tolist()
                        rec["wrong_by_image"] = bad.sum((1, 2, 3)).tolist()
                        rec["wrong_by_row"] = bad.sum((0, 2, 3)).tolist()
                        rec["wrong_by_col"] = bad.sum((0, 1, 3)).tolist()
                        rec["wrong_by_ctile"] = bad.reshape(batch, o, o, -1, config.kwargs["BLOCK_N"]).sum((0, 1, 2, 4)).tolist() \
                            if c_out % config.kwargs["BLOCK_N"] == 0 else None
                    try:
                        rec["compiled"] = compiled_stats(kernel)
                    except Exception as exc:  # noqa: BLE001
                        rec["compiled"] = f"{type(exc).__name__}: {exc}"[:200]
                    rec["us"] = bench.timings(lambda: m.conv2d_forward(x, w, None, None, stride, pad), events=False)["graph_us"]
                except Exception as exc:  # noqa: BLE001
                    rec["error"] = f"{type(exc).__name__}: {exc}"[:400]
                finally:
                    kernel.configs, kernel.cache = saved, {}
                    launcher.plans.clear()
                line = json.dumps(rec, default=str)
                f.write(line + "\n")
                f.flush()
                print(line[:400], flush=True)
    return 0


if __name__ == "__main__":
    bench._TIMER_MS.update(warmup_ms=5, rep_ms=10)
    start = time.time()
    rc = main(sys.argv[1:])
    print(f"probe done in {time.time() - start:.0f} s")
    sys.exit(rc)
