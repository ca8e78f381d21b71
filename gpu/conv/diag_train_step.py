"""Diagnosis: what the GPU runs in one training step (conv2d + bias + residual + SiLU, forward + dgrad + wgrad,
``torch.autograd.grad`` of all four inputs) through the template and through ``torch.compile`` of the same
function, kernel by kernel, on the training rows where the template trails compile (or any rows named).

Each step is run once to tune and compile, then ``torch.profiler`` records STEPS eager steps of each; the record per
row holds, for the template and for compile, every kernel's name (cut to 90 characters), its launches per step and
its GPU time per step (the profiler's device time, summed over the steps, divided by STEPS), in the order of the
first launch, and the sum. The sum is kernel time alone: no launch gaps, no host time; the README's rows are
CUDA-graph replay of the whole step (gpu/conv/bench.py). A kernel the template runs that is in neither of its
parts (the forward, the backward epilogue and column sum, cuDNN's backward) shows where the step's time over its
parts goes (at 2026-12-04 02:38Z 18.6 us on s3.1x1b at batch 128, 5.0 on s3.3x3 at 32).

    python gpu/conv/diag_train_step.py OUT_DIR [ROWS]     ROWS: name:batch,... (default s3.3x3:32,s3.1x1b:128,s4.3x3:32)
"""
from __future__ import annotations

import json
import sys
from collections import OrderedDict
from pathlib import Path

import torch

from tritonify.kernels.templates import conv2d as m

sys.path.insert(0, str(Path(__file__).parent))
import bench  # noqa: E402

STEPS = 20
DEFAULT_ROWS = "s3.3x3:32,s3.1x1b:128,s4.3x3:32"


def kernels_per_step(step, steps: int = STEPS) -> tuple[list[dict], float]:
    """([{name, launches, us}] per step in first-launch order, their summed us) of ``steps`` calls of ``step``."""
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    table: OrderedDict[str, dict] = OrderedDict()
    for event in prof.events():
        if event.device_type != torch.autograd.DeviceType.CUDA or event.device_time_total <= 0:
            continue
        name = event.name[:90]
        row = table.setdefault(name, {"name": name, "launches": 0, "us": 0.0})
        row["launches"] += 1
        row["us"] += event.device_time_total
    rows = [{"name": r["name"], "launches": round(r["launches"] / steps, 2), "us": round(r["us"] / steps, 2)}
            for r in table.values()]
    return rows, round(sum(r["us"] for r in rows), 2)


def diagnose(name: str, batch: int) -> dict:
    x, w, b, r, stride, pad = bench.conv_inputs(name, batch, grad=True)
    leaves = (x, w, b, r)
    y = m.conv2d(x, w, b, r, stride, pad, "silu")
    dy = torch.randn_like(y)
    template = lambda: torch.autograd.grad(m.conv2d(x, w, b, r, stride, pad, "silu"), leaves, dy)  # noqa: E731
    torch._dynamo.reset()
    compiled = torch.compile(bench.train_module, dynamic=False)
    compile_step = lambda: torch.autograd.grad(compiled(x, w, b, r, stride, pad), leaves, dy)  # noqa: E731
    for step in (template, compile_step, template, compile_step):  # tune, compile, then warm
        step()
    rec = {"kind": "train_step_kernels", "shape": name, "batch": batch, "steps": STEPS, **bench.layer_choices(x, w)}
    for label, step in (("template", template), ("compile", compile_step)):
        rec[label], rec[f"{label}_kernel_us"] = kernels_per_step(step)
    return rec


def main(out: Path, rows: str = DEFAULT_ROWS) -> int:
    out.mkdir(parents=True, exist_ok=True)
    torch.backends.cudnn.benchmark = True  # as bench.py: cuDNN's fastest algorithm per shape
    m._CONV2D_FORWARD["mode"] = "auto"
    with open(out / "diag_train_step.jsonl", "w") as f:
        for item in rows.split(","):
            name, batch = item.rsplit(":", 1)
            rec = diagnose(name, int(batch))
            f.write(json.dumps(rec) + "\n")
            print(f"{name} batch {batch}: template {rec['template_kernel_us']} us of kernels, compile "
                  f"{rec['compile_kernel_us']} (forward {rec['forward_choice']}, backward {rec['backward_choice']})")
            for label in ("template", "compile"):
                for k in rec[label]:
                    print(f"    {label:8s} {k['us']:8.2f} us  x{k['launches']:<5} {k['name']}")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), *sys.argv[2:3]))
