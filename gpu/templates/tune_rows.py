"""Every autotune config of the row templates' wide-row kernels, forced one at a time, checked against
float64 and timed (CUDA-graph replay) at the shapes where the templates trailed Liger (one device run).

    python gpu/templates/tune_rows.py OUT.json [BUDGET_S]

Kernels: RMSNorm's backward at 4096x14336, add+RMSNorm's backward at 4096x5120, softmax's forward and
backward at 4096x11008, bf16. Each config is forced (the autotuner's list cut to it, the launchers'
recorded plans and the backward's recorded grids forgotten), the template's forward or backward function
called once and its output checked against a float64 computation of the same formula (bf16 tolerance:
|err| <= 2e-2 * max(1, max|ref|) + 3e-2 * |ref|), then timed with ``triton.testing.do_bench_cudagraph``.
The row of each kernel also names the config the autotuner picks with the whole list.
"""
from __future__ import annotations

import importlib
import json
import sys
import time

import torch
import triton

from tritonify.kernels.bench.timing import graph_ms

T0 = time.time()


def module(name):
    return importlib.import_module(f"tritonify.kernels.templates.{name}")


def forget(m):
    for value in vars(m).values():
        if hasattr(value, "plans") and hasattr(value, "kernel"):
            value.plans.clear()
    m.__dict__.get("_bwd_grids", {}).clear()


def max_excess(got, ref):
    got, ref = got.double(), ref.double()
    bound = 2e-2 * max(1.0, ref.abs().max().item()) + 3e-2 * ref.abs()
    return ((got - ref).abs() - bound).max().item(), (got - ref).abs().max().item()


def cases():
    g = torch.Generator(device="cuda").manual_seed(int(time.time()))
    bf16 = torch.bfloat16

    def randn(*shape, scale=1.0, shift=0.0):
        return (shift + scale * torch.randn(*shape, generator=g, device="cuda", dtype=torch.float32)).to(bf16)

    # RMSNorm backward, 4096x14336
    m = module("rms_norm")
    x, w, dy = randn(4096, 14336), randn(14336, scale=0.1, shift=1.0), randn(4096, 14336)
    _, x2d, rstd = m.rms_norm_forward(x, w, 1e-6)
    xd, wd, dyd = x.double().requires_grad_(), w.double().requires_grad_(), dy.double()
    torch.autograd.backward(m.rms_norm_reference(xd, wd, 1e-6), dyd)
    yield ("rms_norm", "_rms_norm_bwd_kernel", (4096, 14336), lambda: m.rms_norm_backward(dy, x2d, w, rstd),
           (xd.grad, wd.grad))
    del xd, wd, dyd
    # add+RMSNorm backward, 4096x5120 (the residual's gradient added)
    m = module("add_rms_norm")
    x, r, w = randn(4096, 5120), randn(4096, 5120), randn(5120, scale=0.1, shift=1.0)
    dy, ds = randn(4096, 5120), randn(4096, 5120)
    _, s, rstd = m.add_rms_norm_forward(x, r, w, 1e-6)
    xd, rd, wd = (t.double().requires_grad_() for t in (x, r, w))
    yd, sd = m.add_rms_norm_reference(xd, rd, wd, 1e-6)
    torch.autograd.backward([yd, sd], [dy.double(), ds.double()])
    yield ("add_rms_norm", "_add_rms_norm_bwd_kernel", (4096, 5120),
           lambda: m.add_rms_norm_backward(dy, ds, s, w, rstd), (xd.grad, wd.grad))
    del xd, rd, wd, yd, sd
    # softmax forward and backward, 4096x11008
    m = module("softmax")
    x, dy = randn(4096, 11008, scale=3.0), randn(4096, 11008)
    y64 = torch.softmax(x.double(), -1)
    yield "softmax", "_softmax_fwd_kernel", (4096, 11008), lambda: m.softmax_forward(x), (y64,)
    y = m.softmax_forward(x)
    yf, dyf = y.double(), dy.double()
    yield ("softmax", "_softmax_bwd_kernel", (4096, 11008), lambda: m.softmax_backward(dy, y),
           (yf * (dyf - (dyf * yf).sum(-1, keepdim=True)),))


def main(argv):
    out_path = argv[0]
    budget = float(argv[1]) if len(argv) > 1 else 600
    rows = []
    for name, kernel_name, shape, call, refs in cases():
        m = module(name)
        kernel = getattr(m, kernel_name)
        every = list(kernel.configs)
        for cfg in every:
            if time.time() - T0 > budget:
                rows.append({"kernel": kernel_name, "skipped": str(cfg)})
                continue
            kernel.configs = [cfg]
            kernel.cache.clear()
            forget(m)
            row = {"template": name, "kernel": kernel_name, "shape": list(shape), "config": str(cfg)}
            try:
                out = call()
                outs = out if isinstance(out, tuple) else (out,)
                checks = [max_excess(o, r) for o, r in zip(outs, refs)]
                row["max_abs_err"] = [c[1] for c in checks]
                row["correct"] = all(c[0] <= 0 for c in checks)
                call()
                torch.cuda.synchronize()
                row["graph_us"] = 1e3 * graph_ms(call, rep_ms=30)
            except Exception as exc:  # noqa: BLE001 - a config that fails is reported, the rest go on
                row["error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
            rows.append(row)
            print(json.dumps(row), flush=True)
        kernel.configs = every
        kernel.cache.clear()
        forget(m)
        if time.time() - T0 < budget:  # the config the autotuner picks from the whole list
            call()
            rows.append({"template": name, "kernel": kernel_name, "autotuner_picks": str(kernel.best_config)})
            print(json.dumps(rows[-1]), flush=True)
        torch.cuda.empty_cache()
    with open(out_path, "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "gpu": torch.cuda.get_device_name(),
                   "torch": torch.__version__, "triton": triton.__version__, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
