"""The conv2d forward's host time per call on the H200, in a fresh process (one short device call):
the template with its TMA descriptors, the same template with descriptors off (pointer configs only:
what the descriptors cost on the host), and cuDNN, at a few ResNet-50 layers, batch 32, bf16. Each
variant runs the config the committed run's autotuner chose for that layer (``results/conv_h200/
conv.jsonl``: ``best_plain``, and the fastest pointer config of its sweep), so nothing is re-tuned.

    python gpu/conv/host_time.py OUT_DIR

Host time: ``tritonify.kernels.bench.timing.cuda_issue_us`` (200 back-to-back calls issued, the clock
stopped before the final synchronisation); GPU time: ``GpuTimer`` CUDA-graph replay, as in bench.py.
Each template output is checked against float64. Records appended to ``OUT_DIR/host_time.jsonl``.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import conv_inputs, env_record, timings  # noqa: E402

LAYERS = ["s1.3x3", "s2.1x1a", "s3.3x3", "s4.3x3", "s4.1x1b", "rgb.3x3"]
RECORDS = Path(__file__).resolve().parents[2] / "results" / "conv_h200" / "conv.jsonl"


def config_of(text: str):
    import triton

    kw = eval(text)  # noqa: S307 - a config dict this project's bench.py wrote
    warps, stages = kw.pop("num_warps"), kw.pop("num_stages")
    kw.pop("num_ctas", None)
    kw.pop("maxnreg", None)
    return triton.Config(kw, num_warps=warps, num_stages=stages)


def chosen(name: str):
    """(the committed run's best config, its fastest pointer config) at (name, batch 32)."""
    for line in RECORDS.read_text().splitlines():
        r = json.loads(line)
        if r.get("kind") == "fwd" and r["shape"] == name and r["batch"] == 32:
            pointer = [k for k in sorted(r["sweep_plain_ms"], key=r["sweep_plain_ms"].get) if "'USE_TMA': False" in k]
            return config_of(r["best_plain"]), config_of(pointer[0])
    raise KeyError(name)


def main(argv):
    import torch
    import torch.nn.functional as F

    from tritonify.kernels.bench.timing import cuda_issue_us
    from tritonify.kernels.templates import conv2d as m

    torch.backends.cudnn.benchmark = True
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    f = (out / "host_time.jsonl").open("a")

    def log(**rec):
        f.write(json.dumps(rec, default=str) + "\n")
        f.flush()
        print(json.dumps(rec, default=str), flush=True)

    log(**env_record())
    tma = m._tma_available
    with torch.no_grad():
        for name in LAYERS:
            x, w, _, _, stride, pad = conv_inputs(name, 32)
            xc, wc = x.permute(0, 3, 1, 2), w.permute(0, 3, 1, 2)
            ref = F.conv2d(xc.double(), wc.double(), stride=stride, padding=pad).permute(0, 2, 3, 1)
            rec = {"kind": "host", "shape": name, "batch": 32}
            best, pointer = chosen(name)
            for variant, available, config in (("template", tma, best), ("template_no_descriptors", lambda: False, pointer)):
                m._tma_available = available
                saved = m._conv2d_fwd_kernel.configs
                m._conv2d_fwd_kernel.configs, m._conv2d_fwd_kernel.cache = [config], {}
                m._conv2d_fwd_launch.plans.clear()
                try:
                    call = lambda: m.conv2d(x, w, stride=stride, padding=pad)  # noqa: E731
                    y = call()
                    rec[variant] = {"max_rel_err": ((y.double() - ref).abs().max() / ref.abs().max()).item(),
                                    "best": str(m._conv2d_fwd_kernel.best_config.all_kwargs()),
                                    **timings(call, events=False), "issue_us": round(cuda_issue_us(call), 1)}
                finally:
                    m._tma_available = tma
                    m._conv2d_fwd_kernel.configs, m._conv2d_fwd_kernel.cache = saved, {}
                    m._conv2d_fwd_launch.plans.clear()
            base = lambda: F.conv2d(xc, wc, stride=stride, padding=pad)  # noqa: E731
            rec["cudnn"] = {**timings(base, events=False), "issue_us": round(cuda_issue_us(base), 1)}
            log(**rec)
    print("| layer | template us (GPU) | host us/call | no descriptors: GPU | host | cuDNN GPU | host |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for line in (out / "host_time.jsonl").read_text().splitlines():
        r = json.loads(line)
        if r.get("kind") == "host":
            t, p, c = r["template"], r["template_no_descriptors"], r["cudnn"]
            print(f"| {r['shape']} | {t['graph_us']} | {t['issue_us']} | {p['graph_us']} | {p['issue_us']} | "
                  f"{c['graph_us']} | {c['issue_us']} |")
    return 0


if __name__ == "__main__":
    T0 = time.time()
    sys.exit(main(sys.argv[1:]))
