"""The convolution templates on the H200 in one device call: compile every tile config in parallel,
then time the templates beside cuDNN, cuDNN + separate epilogue ops and torch.compile (bf16).

    python gpu/conv/bench.py OUT_DIR [--budget S] [--workers N]    (run by gpu/conv/run_on_h200.sh)
    python gpu/conv/bench.py --precompile-worker OUT_DIR INDEX N      (internal: one compile worker)

Sections, each stopping at the time budget, records appended to ``OUT_DIR/conv.jsonl``:

* ``fwd``: conv2d forward at ResNet-50's layers, batch 32 and 128 (SHAPES), plain (template vs
  ``F.conv2d`` on channels-last tensors, cuDNN with ``cudnn.benchmark``) and with the fused epilogue
  ``silu(conv + bias + residual)`` (template vs cuDNN followed by the separate add and SiLU ops);
  each key's autotune timings of every tile config (the sweep) are recorded too;
* ``conv1d``: depthwise causal conv1d + SiLU, forward and forward + backward, template vs ``F.conv1d``
  (cuDNN, groups = channels) + SiLU on the [batch, channels, seqlen] view of NLC tensors;
* ``train``: conv2d + bias + residual + SiLU forward + dgrad + wgrad (``torch.autograd.grad``), template
  vs eager (cuDNN) vs ``torch.compile`` of the same function, at TRAIN_SHAPES.

Timing: ``tritonify.kernels.bench.timing.GpuTimer`` (the project's one timer): ``graph_us`` is CUDA-graph
replay (calls per graph from a probe, do_bench over replays with the L2 flushed before each replay),
``events_us`` do_bench with CUDA events and the L2 flush; medians of the second of two passes.
Inputs are leaf tensors as a user builds them (``torch.randn`` in NHWC, the weight in
[C_out, R, S, C_in]); the cuDNN baselines get the channels-last NCHW views of the same memory.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

T0 = time.time()

# (name, H=W of the input, C_in, C_out, kernel, stride): ResNet-50's bottleneck layers (torchvision v1.5:
# the stride on the 3x3), the stride-2 1x1 downsample projections, and a 3x3 with C_in = 3
SHAPES = [
    ("s1.3x3", 56, 64, 64, 3, 1), ("s1.1x1a", 56, 256, 64, 1, 1), ("s1.1x1b", 56, 64, 256, 1, 1),
    ("s2.3x3/2", 56, 128, 128, 3, 2), ("s2.3x3", 28, 128, 128, 3, 1), ("s2.1x1a", 28, 512, 128, 1, 1),
    ("s2.1x1b", 28, 128, 512, 1, 1), ("s2.down/2", 56, 256, 512, 1, 2),
    ("s3.3x3/2", 28, 256, 256, 3, 2), ("s3.3x3", 14, 256, 256, 3, 1), ("s3.1x1a", 14, 1024, 256, 1, 1),
    ("s3.1x1b", 14, 256, 1024, 1, 1), ("s3.down/2", 28, 512, 1024, 1, 2),
    ("s4.3x3/2", 14, 512, 512, 3, 2), ("s4.3x3", 7, 512, 512, 3, 1), ("s4.1x1a", 7, 2048, 512, 1, 1),
    ("s4.1x1b", 7, 512, 2048, 1, 1), ("s4.down/2", 14, 1024, 2048, 1, 2),
    ("rgb.3x3", 224, 3, 64, 3, 1),
]
BATCHES = (32, 128)
TRAIN_SHAPES = ["s1.3x3", "s2.3x3/2", "s3.3x3", "s4.3x3", "s1.1x1a", "s3.1x1b"]
CONV1D_SHAPES = [(4, 2048, 4096), (4, 8192, 4096), (4, 2048, 8192), (4, 8192, 8192)]  # (batch, seqlen, channels)


def selected(names):
    """The names CONV_SHAPES (environment, comma-separated layer names) keeps: all when it is unset."""
    keep = os.environ.get("CONV_SHAPES")
    return [n for n in names if not keep or n in keep.split(",")]


def shape_of(name):
    return next(s for s in SHAPES if s[0] == name)


def left(budget):
    return budget - (time.time() - T0)


class Log:
    def __init__(self, out: Path):
        self.f = (out / "conv.jsonl").open("a")

    def __call__(self, **rec):
        rec["t"] = round(time.time() - T0, 1)
        line = json.dumps(rec, default=str)
        self.f.write(line + "\n")
        self.f.flush()
        print(line, flush=True)


def env_record():
    import torch
    import triton

    p = torch.cuda.get_device_properties(0)
    return {"kind": "env", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "gpu": p.name,
            "sms": p.multi_processor_count, "python": sys.version.split()[0], "torch": torch.__version__,
            "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(), "triton": triton.__version__}


# --------------------------------------------------------------------------- inputs
def conv_inputs(name, batch, grad=False):
    import torch

    from tritonify.kernels.templates import conv2d as m

    _, hw, c_in, c_out, k, stride = shape_of(name)
    pad = k // 2
    out = m.conv2d_out_size(hw, k, stride, pad)
    bf = torch.bfloat16
    x = torch.randn(batch, hw, hw, c_in, dtype=bf, device="cuda")
    w = torch.randn(c_out, k, k, c_in, dtype=bf, device="cuda") / (k * k * c_in) ** 0.5
    b = 0.1 * torch.randn(c_out, dtype=bf, device="cuda")
    r = torch.randn(batch, out, out, c_out, dtype=bf, device="cuda")
    if grad:
        x, w, b, r = (t.requires_grad_() for t in (x, w, b, r))
    return x, w, b, r, stride, pad


def conv1d_inputs(shape, grad=False):
    import torch

    batch, seqlen, channels = shape
    bf = torch.bfloat16
    x = torch.randn(batch, seqlen, channels, dtype=bf, device="cuda")
    w = torch.randn(channels, 4, dtype=bf, device="cuda") / 2
    b = 0.1 * torch.randn(channels, dtype=bf, device="cuda")
    if grad:
        x, w, b = (t.requires_grad_() for t in (x, w, b))
    return x, w, b


# --------------------------------------------------------------------------- compile workers
def precompile_tasks(kinds=None):
    """(kind, shape name or conv1d shape, batch, config index, variant): every tile config of every
    kernel at every benchmarked key, so the main process's autotuning finds each one compiled."""
    from tritonify.kernels.templates import causal_conv1d as c1
    from tritonify.kernels.templates import conv2d as m

    tasks = []
    for name in selected([s[0] for s in SHAPES]):
        for i, config in enumerate(m._CONV2D_FWD_CONFIGS):
            batch = next((b for b in BATCHES if fwd_config_runs(config, name, b)), None)
            if batch is None:  # pruned at every benchmarked batch: never compiled for this key
                continue
            tasks += [("fwd", name, batch, i, "plain"), ("fwd", name, batch, i, "fused")]
            if name in TRAIN_SHAPES:
                tasks.append(("fwd", name, batch, i, "train"))
        if gemm_layer(name):  # the 1x1 layers' GEMM kernel (kernel_checks' prune keeps BLOCK_K 128 for 128+ channels)
            for i, config in enumerate(m._CONV2D_GEMM_CONFIGS):
                if config.kwargs["BLOCK_K"] != 64 and shape_of(name)[2] < 128:
                    continue
                variants = ["plain", "fused"] + (["train"] if name in TRAIN_SHAPES else [])
                tasks += [("gemm", name, 32, i, v) for v in variants]
        if box_layer(name):  # the Gluon box kernel's configs (its choice compiles them in the main process otherwise)
            variants = ["plain", "fused"] + (["train"] if name in TRAIN_SHAPES else [])
            pairs = {(m._CONV2D_BOX_CONFIGS.index(c), splits > 1) for batch in BATCHES
                     for c, splits in box_candidates(name, batch)}
            tasks += [("box", name, 32, i, v + ("+split" if split else "")) for i, split in sorted(pairs)
                      for v in variants]
    for name in selected(TRAIN_SHAPES):
        tasks += [("dgrad", name, 32, i, "") for i in range(len(m._CONV2D_DGRAD_CONFIGS))]
        tasks += [("wgrad", name, 32, i, "") for i in range(len(m._CONV2D_WGRAD_CONFIGS))]
    for shape in CONV1D_SHAPES:
        tasks += [("c1fwd", shape, 0, i, "") for i in range(len(c1._CAUSAL_CONV1D_FWD_CONFIGS))]
        tasks += [("c1bwd", shape, 0, i, "") for i in range(len(c1._CAUSAL_CONV1D_BWD_CONFIGS))]
    return [t for t in tasks if kinds is None or t[0] in kinds]


def box_layer(name) -> bool:
    """Whether the Gluon box kernel can run this layer (``_conv2d_box_fits`` for bf16 on the H200)."""
    _, hw, c_in, c_out, k, stride = shape_of(name)
    return hw % stride == 0 and c_in % 64 == 0 and c_out % 8 == 0


def box_candidates(name, batch):
    """The (config, splits) pairs the layer's box choice times at this batch (``_conv2d_box_candidates`` on
    empty tensors: shapes only)."""
    import torch

    from tritonify.kernels.templates import conv2d as m

    _, hw, c_in, c_out, k, stride = shape_of(name)
    out = m.conv2d_out_size(hw, k, stride, k // 2)
    x = torch.empty(batch, hw, hw, c_in, dtype=torch.bfloat16, device="meta")
    w = torch.empty(c_out, k, k, c_in, dtype=torch.bfloat16, device="meta")
    return m._conv2d_box_candidates(x, w, (stride,) * 2, (k // 2,) * 2, out, out)


def gemm_layer(name) -> bool:
    """Whether the 1x1 GEMM kernel can run this layer (``_conv2d_gemm_fits`` for bf16 on the H200)."""
    _, hw, c_in, c_out, k, stride = shape_of(name)
    return k == 1 and hw % stride == 0 and c_in % 8 == 0 and c_out % 8 == 0


def fwd_config_runs(config, name, batch) -> bool:
    """Whether the forward's prune keeps ``config`` at this layer and batch (bf16 on the H200)."""
    from tritonify.kernels.templates import conv2d as m

    _, hw, c_in, c_out, k, stride = shape_of(name)
    out = m.conv2d_out_size(hw, k, stride, k // 2)
    row_k = m._conv2d_row_k(c_in, k)
    if (config.kwargs["USE_TMA"] or config.kwargs["A_TMA"] or config.kwargs["A_BOX"]) and row_k:
        return False
    plain_gemm = (k, stride, c_in % 8) == (1, 1, 0)  # the input has a descriptor too
    if config.kwargs["A_TMA"] and not plain_gemm:
        return False
    box_view = (not plain_gemm and hw % stride == 0 and c_in % 8 == 0  # the input's 5-D box view
                and (stride == 1 or c_in % m._CONV2D_TMA_BLOCK[1] == 0))
    if config.kwargs["A_BOX"] and not box_view:
        return False
    if config.kwargs["BLOCK_K"] != 64 and (c_in < 128 or row_k):
        return False
    if not m._conv2d_shared_memory_fits(config, 2, m._conv2d_shared_memory_limit(0), row_k):
        return False
    iterations = m._conv2d_k_iterations(config, c_in, k, k, bool(row_k))
    return m._conv2d_split_fits(config, batch * out * out, c_out, iterations, 132)


def run_task(task):
    import torch

    from tritonify.kernels.templates import causal_conv1d as c1
    from tritonify.kernels.templates import conv2d as m

    kind, shape, batch, index, variant = task
    if kind == "box":
        x, w, b, r, stride, pad = conv_inputs(shape, batch)
        out = m.conv2d_out_size(x.shape[1], w.shape[1], stride, pad)
        y = x.new_empty(x.shape[0], out, out, w.shape[0])
        variant, _, split = variant.partition("+")
        splits = 2 if split else 1  # the split kernel (REDUCE) compiles once for every split count
        z = torch.empty_like(y) if variant == "train" else None
        with torch.no_grad():
            if variant == "plain":
                m._conv2d_box_forward(x, w, None, None, None, y, (stride,) * 2, (pad,) * 2, out, out, False,
                                      m._CONV2D_BOX_CONFIGS[index], splits)
            else:
                m._conv2d_box_forward(x, w, b, r, z, y, (stride,) * 2, (pad,) * 2, out, out, True,
                                      m._CONV2D_BOX_CONFIGS[index], splits)
        torch.cuda.synchronize()
        return
    m._CONV2D_BOX["mode"] = "off"  # the box kernel's own tasks compile it; this worker's choices never run
    kernel, launcher = {"fwd": (m._conv2d_fwd_kernel, m._conv2d_fwd_launch),
                        "dgrad": (m._conv2d_dgrad_kernel, m._conv2d_dgrad_launch),
                        "wgrad": (m._conv2d_wgrad_kernel, m._conv2d_wgrad_launch),
                        "c1fwd": (c1._causal_conv1d_fwd_kernel, c1._causal_conv1d_fwd_launch),
                        "c1bwd": (c1._causal_conv1d_bwd_kernel, c1._causal_conv1d_bwd_launch),
                        "gemm": (m._conv2d_gemm_kernel, m._conv2d_gemm_launch)}[kind]
    saved, mode = kernel.configs, m._CONV2D_GEMM["mode"]
    kernel.configs, kernel.cache = [saved[index]], {}
    launcher.plans.clear()
    m._CONV2D_GEMM["mode"] = "gemm" if kind == "gemm" else "implicit"
    try:
        with torch.no_grad():
            if kind in ("c1fwd", "c1bwd"):
                x, w, b = conv1d_inputs(shape)
                if kind == "c1fwd":
                    c1.causal_conv1d_forward(x, w, b, "silu")
                else:
                    c1.causal_conv1d_backward(torch.randn_like(x), x, w, b, "silu")
                return
            x, w, b, r, stride, pad = conv_inputs(shape, batch)
            if kind in ("fwd", "gemm"):
                if variant == "plain":
                    m.conv2d_forward(x, w, None, None, stride, pad)
                else:
                    m.conv2d_forward(x, w, b, r, stride, pad, "silu", keep_z=variant == "train")
            elif kind == "dgrad":
                m.conv2d_dgrad(torch.randn_like(r), w, x.shape, stride, pad)
            else:
                m.conv2d_wgrad(torch.randn_like(r), x, w.shape, stride, pad)
        torch.cuda.synchronize()
    finally:
        kernel.configs, kernel.cache = saved, {}
        launcher.plans.clear()
        m._CONV2D_GEMM["mode"] = mode


def precompile_worker(out: Path, index: int, workers: int) -> int:
    kinds = os.environ.get("CONV_PRECOMPILE_KINDS")
    tasks = precompile_tasks(kinds.split(",") if kinds else None)[index::workers]
    failures = []
    for task in tasks:
        try:
            run_task(task)
        except Exception as exc:  # noqa: BLE001 - a config that cannot run here is recorded, not fatal
            failures.append({"task": task, "error": f"{type(exc).__name__}: {str(exc)[:200]}"})
    (out / f"precompile_{index}.json").write_text(json.dumps({"tasks": len(tasks), "failures": failures}))
    return 0


def precompile(log, out: Path, workers: int):
    start = time.time()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    procs = [subprocess.Popen([sys.executable, __file__, "--precompile-worker", str(out), str(i), str(workers)],
                              env=env) for i in range(workers)]
    for p in procs:
        p.wait()
    failures, tasks = [], 0
    for i in range(workers):
        path = out / f"precompile_{i}.json"
        if path.exists():
            rec = json.loads(path.read_text())
            tasks += rec["tasks"]
            failures += rec["failures"]
            path.unlink()
    log(kind="precompile", tasks=tasks, workers=workers, seconds=round(time.time() - start, 1),
        failures=failures[:20], failed=len(failures))


# --------------------------------------------------------------------------- timing
_TIMER = None
_TIMER_MS = {"warmup_ms": 10, "rep_ms": 40}


def timings(call, events=True):
    """{"graph_us", "events_us"} of a no-argument call through the project's GpuTimer."""
    import torch

    from tritonify.kernels.bench.timing import GpuTimer

    global _TIMER
    if _TIMER is None:
        _TIMER = GpuTimer(**_TIMER_MS)
    call()
    torch.cuda.synchronize()
    calls = _TIMER.graph_calls(call)
    graph = _TIMER.measure(call, graph=True, calls_per_graph=calls)
    note = getattr(graph, "note", "")
    if graph.method != "cuda_graph":  # the capture failed (its note says why): once more before events stand in
        torch.cuda.synchronize()
        graph = _TIMER.measure(call, graph=True, calls_per_graph=calls)
    rec = {"graph_us": round(1e3 * graph.p50_ms, 2), "graph_method": graph.method, "noisy": graph.noisy}
    if note:
        rec["graph_note"] = str(note)[:300]
    if events:
        rec["events_us"] = round(1e3 * _TIMER.measure(call).p50_ms, 2)
    return rec


def config_sweep(kernel):
    """The autotuner's own timings of every config at the last key it tuned (ms, median)."""
    timings_ = getattr(kernel, "configs_timings", None) or {}
    return {str(c.all_kwargs()): (round(float(t[0] if isinstance(t, (list, tuple)) else t) * 1e3, 2))
            for c, t in timings_.items()}


def best_config(kernel):
    c = getattr(kernel, "best_config", None)
    return str(c.all_kwargs()) if c is not None else None


def section_fwd(log, budget):
    import torch
    import torch.nn.functional as F

    from tritonify.kernels.bench.timing import cuda_issue_us
    from tritonify.kernels.templates import conv2d as m

    m._CONV2D_FORWARD["mode"] = "template"  # the forward rows time the template's own kernels, never cuDNN's conv
    for batch in [int(b) for b in os.environ.get("CONV_FWD_BATCHES", ",".join(map(str, BATCHES))).split(",")]:
        for name in selected([s[0] for s in SHAPES]):
            if left(budget) < 0:
                log(kind="skipped", section="fwd", reason="budget")
                return
            try:
                x, w, b, r, stride, pad = conv_inputs(name, batch)
                xc, wc = x.permute(0, 3, 1, 2), w.permute(0, 3, 1, 2)  # channels_last NCHW views
                rc = r.permute(0, 3, 1, 2)
                gemm = gemm_layer(name)
                with torch.no_grad():
                    y = m.conv2d(x, w, stride=stride, padding=pad)
                    sweep_plain, best_plain = config_sweep(m._conv2d_fwd_kernel), best_config(m._conv2d_fwd_kernel)
                    if gemm:
                        sweep_gemm, best_gemm = config_sweep(m._conv2d_gemm_kernel), best_config(m._conv2d_gemm_kernel)
                    ref = F.conv2d(xc.double(), wc.double(), stride=stride, padding=pad).permute(0, 2, 3, 1)
                    err = ((y.double() - ref).abs().max() / ref.abs().max()).item()
                    yf = m.conv2d(x, w, b, r, stride, pad, "silu")
                    sweep_fused, best_fused = config_sweep(m._conv2d_fwd_kernel), best_config(m._conv2d_fwd_kernel)
                    reff = F.silu(F.conv2d(xc.double(), wc.double(), b.double(), stride=stride, padding=pad)
                                  + rc.double()).permute(0, 2, 3, 1)
                    errf = ((yf.double() - reff).abs().max() / reff.abs().max()).item()
                    rec = {"kind": "fwd", "shape": name, "batch": batch, "max_rel_err": err, "max_rel_err_fused": errf,
                           "best_plain": best_plain, "best_fused": best_fused}
                    if box_layer(name):  # the Gluon box kernel's config the layer's choice kept (None: the implicit GEMM)
                        boxes = m._CONV2D_BOX["choices"]
                        rec["box_plain"], rec["box_fused"] = (
                            next((list(c) if c else None for k, c in boxes.items() if k[0] == tuple(x.shape)
                                  and k[1] == tuple(w.shape) and k[7] == fused), None) for fused in (False, True))
                        rec["box_times_ms"] = {  # every candidate the choice timed, and the path it takes otherwise
                            ("fused" if k[7] else "plain"): {str(c if c == "otherwise" else (list(c[0]), c[1])): v
                                                             for c, v in t.items()}
                            for k, t in m._CONV2D_BOX["times"].items()
                            if k[0] == tuple(x.shape) and k[1] == tuple(w.shape)}
                    if gemm:  # which path the 1x1 layer took, each path's time alone, torch.mm on the same operands
                        choices = m._CONV2D_GEMM["choices"]
                        rec["path_plain"], rec["path_fused"] = (
                            next((c for k, c in choices.items() if k[0] == tuple(x.shape) and k[5] == fused), None)
                            for fused in (False, True))
                        rec["best_gemm_plain"] = best_gemm
                        rec["sweep_gemm_plain_ms"] = sweep_gemm
                        mode = m._CONV2D_GEMM["mode"]
                        try:
                            for path in ("gemm", "implicit"):
                                m._CONV2D_GEMM["mode"] = path
                                yp = m.conv2d(x, w, stride=stride, padding=pad)
                                rec[f"max_rel_err_{path}"] = ((yp.double() - ref).abs().max() / ref.abs().max()).item()
                                rec[f"{path}_only"] = timings(lambda: m.conv2d(x, w, stride=stride, padding=pad),
                                                              events=False)
                        finally:
                            m._CONV2D_GEMM["mode"] = mode
                        # the ceiling: cuBLAS on the same matrices (at stride 2 on a copy of the pixels read)
                        xs = x if stride == 1 else x[:, ::stride, ::stride].contiguous()
                        a2, w2 = xs.reshape(-1, x.shape[3]), w.reshape(w.shape[0], -1)
                        rec["torch_mm"] = timings(lambda: torch.mm(a2, w2.t()), events=False)
                    ours = lambda: m.conv2d(x, w, stride=stride, padding=pad)  # noqa: E731
                    base = lambda: F.conv2d(xc, wc, stride=stride, padding=pad)  # noqa: E731
                    rec["template"], rec["cudnn"] = timings(ours), timings(base)
                    if batch == BATCHES[0]:  # the host's cost of issuing one call (GpuTimer's host method)
                        rec["template"]["issue_us"] = round(cuda_issue_us(ours), 1)
                        rec["cudnn"]["issue_us"] = round(cuda_issue_us(base), 1)
                    rec["template_fused"] = timings(lambda: m.conv2d(x, w, b, r, stride, pad, "silu"), events=False)
                    rec["cudnn_epilogue"] = timings(
                        lambda: F.silu(F.conv2d(xc, wc, b, stride=stride, padding=pad) + rc), events=False)
                rec["sweep_plain_ms"], rec["sweep_fused_ms"] = sweep_plain, sweep_fused
                log(**rec)
            except Exception as exc:  # noqa: BLE001
                log(kind="error", section="fwd", shape=name, batch=batch, error=f"{type(exc).__name__}: {exc}"[:400],
                    trace=traceback.format_exc()[-1500:])
                torch.cuda.synchronize()


def section_conv1d(log, budget):
    import torch
    import torch.nn.functional as F

    from tritonify.kernels.templates import causal_conv1d as c1

    def cudnn(x, w, b):
        seqlen = x.shape[1]
        y = F.conv1d(x.transpose(1, 2), w.unsqueeze(1), b, padding=3, groups=x.shape[2])[..., :seqlen]
        return F.silu(y).transpose(1, 2)

    for shape in CONV1D_SHAPES:
        if left(budget) < 0:
            log(kind="skipped", section="conv1d", reason="budget")
            return
        try:
            x, w, b = conv1d_inputs(shape, grad=True)
            dy = torch.randn_like(x)
            ours = lambda: c1.causal_conv1d(x, w, b, "silu")  # noqa: E731
            base = lambda: cudnn(x, w, b)  # noqa: E731
            y = ours()
            gx, gw, gb = torch.autograd.grad(y, (x, w, b), dy)
            xd, wd, bd = (t.detach().double().requires_grad_() for t in (x, w, b))
            yr = c1.causal_conv1d_reference(xd, wd, bd, "silu")
            rx, rw, rb = torch.autograd.grad(yr, (xd, wd, bd), dy.double())
            errs = {k: ((g.double() - r).abs().max() / r.abs().max()).item()
                    for k, g, r in (("y", y, yr), ("dx", gx, rx), ("dw", gw, rw), ("db", gb, rb))}
            rec = {"kind": "conv1d", "shape": list(shape), "max_rel_err": errs}
            with torch.no_grad():
                rec["template_fwd"] = timings(ours)
                rec["cudnn_fwd"] = timings(base)
            rec["template_fwd_bwd"] = timings(lambda: torch.autograd.grad(ours(), (x, w, b), dy))
            rec["cudnn_fwd_bwd"] = timings(lambda: torch.autograd.grad(base(), (x, w, b), dy))
            log(**rec)
        except Exception as exc:  # noqa: BLE001
            log(kind="error", section="conv1d", shape=list(shape), error=f"{type(exc).__name__}: {exc}"[:400],
                trace=traceback.format_exc()[-1500:])
            torch.cuda.synchronize()


def train_module(x, w, b, r, stride, pad):
    """The training rows' function as eager PyTorch and torch.compile run it: silu(conv + bias + residual)."""
    from tritonify.kernels.templates import conv2d as m

    return m.conv2d_reference(x, w, b, r, stride, pad, "silu")


def layer_choices(x, w) -> dict:
    """The paths the template's forward (with z kept, as training runs it) and backward chose for this layer."""
    from tritonify.kernels.templates import conv2d as m

    same = lambda k: k[0] == tuple(x.shape) and k[1] == tuple(w.shape)  # noqa: E731
    return {"backward_choice": next((list(c) for k, c in m._CONV2D_BACKWARD["choices"].items() if same(k)), None),
            "forward_choice": next((c for k, c in m._CONV2D_FORWARD["choices"].items() if same(k) and k[-1]), None)}


def section_train(log, budget, with_compile=True):
    import torch

    from tritonify.kernels.templates import conv2d as m

    m._CONV2D_FORWARD["mode"] = os.environ.get("TRITONIFY_CONV2D_FORWARD", "auto")  # as users run it
    module = train_module

    # one untimed training step through the timer first: run as a process's first section, the first row's
    # three timings came out 8-12x the later run's (12:22Z and 12:31Z: 1,139-1,483 us on s1.3x3 at batch 32
    # against 115-162 us when the forward section ran before it)
    warm = conv_inputs(selected(TRAIN_SHAPES)[0], BATCHES[0], grad=True)
    warm_y = m.conv2d(*warm[:4], warm[4], warm[5], "silu")
    timings(lambda: torch.autograd.grad(m.conv2d(*warm[:4], warm[4], warm[5], "silu"), warm[:4], torch.ones_like(warm_y)),
            events=False)
    del warm, warm_y
    batches = [int(b) for b in os.environ.get("CONV_TRAIN_BATCHES", ",".join(map(str, BATCHES))).split(",")]
    for batch in batches:
        for name in selected(TRAIN_SHAPES):
            if left(budget) < 0:
                log(kind="skipped", section="train", reason="budget")
                return
            try:
                x, w, b, r, stride, pad = conv_inputs(name, batch, grad=True)
                leaves = (x, w, b, r)
                y = m.conv2d(x, w, b, r, stride, pad, "silu")
                dy = torch.randn_like(y)
                grads = torch.autograd.grad(y, leaves, dy)
                refs = [t.detach().double().requires_grad_() for t in leaves]
                yr = module(*refs, stride, pad)
                ref_grads = torch.autograd.grad(yr, refs, dy.double())
                errs = {k: ((g.double() - rg).abs().max() / rg.abs().max()).item()
                        for k, g, rg in zip(("y", "dx", "dw", "db", "dres"), (y, *grads), (yr, *ref_grads))}
                rec = {"kind": "train", "shape": name, "batch": batch, "max_rel_err": errs,
                       "best_dgrad": best_config(m._conv2d_dgrad_kernel), "best_wgrad": best_config(m._conv2d_wgrad_kernel),
                       **layer_choices(x, w)}
                rec["template"] = timings(lambda: torch.autograd.grad(m.conv2d(x, w, b, r, stride, pad, "silu"), leaves, dy))
                rec["eager"] = timings(lambda: torch.autograd.grad(module(x, w, b, r, stride, pad), leaves, dy))
                if os.environ.get("CONV_TRAIN_PARTS") == "1":  # each step of the template's training step alone
                    xd, wd, bd, rd = (t.detach() for t in leaves)
                    with torch.no_grad():
                        _, z = m.conv2d_forward(xd, wd, bd, rd, stride, pad, "silu", keep_z=True)
                        dz, _ = m.conv2d_dz_dbias(dy, z, True)
                        parts = {
                            "fwd_keep_z": lambda: m.conv2d_forward(xd, wd, bd, rd, stride, pad, "silu", keep_z=True),
                            "fwd_cudnn_keep_z": lambda: m.conv2d_cudnn_forward(xd, wd, bd, rd, stride, pad, "silu",
                                                                               keep_z=True),
                            "dz_dbias": lambda: m.conv2d_dz_dbias(dy, z, True),  # one pass: silu' and d bias
                            "dgrad_template": lambda: m.conv2d_dgrad(dz, wd, xd.shape, stride, pad),
                            "wgrad_template": lambda: m.conv2d_wgrad(dz, xd, wd.shape, stride, pad),
                            "dgrad_cudnn": lambda: m.conv2d_cudnn_grads(dz, xd, wd, stride, pad, (True, False)),
                            "wgrad_cudnn": lambda: m.conv2d_cudnn_grads(dz, xd, wd, stride, pad, (False, True)),
                            "both_cudnn": lambda: m.conv2d_cudnn_grads(dz, xd, wd, stride, pad, (True, True))}
                        rec["parts_us"] = {k: timings(f, events=False)["graph_us"] for k, f in parts.items()}
                if with_compile and left(budget) > 30:
                    start = time.time()
                    # a fresh Dynamo cache per row: past its recompile limit (8 frames of ``module``) torch.compile
                    # runs the function eagerly, and the "compile" timing would be eager's
                    torch._dynamo.reset()
                    compiled = torch.compile(module, dynamic=False)
                    torch.autograd.grad(compiled(x, w, b, r, stride, pad), leaves, dy)
                    rec["compile_s"] = round(time.time() - start, 1)
                    rec["compile"] = timings(lambda: torch.autograd.grad(compiled(x, w, b, r, stride, pad), leaves, dy))
                log(**rec)
            except Exception as exc:  # noqa: BLE001
                log(kind="error", section="train", shape=name, batch=batch, error=f"{type(exc).__name__}: {exc}"[:400],
                    trace=traceback.format_exc()[-1500:])
                torch.cuda.synchronize()


def main(argv):
    if argv and argv[0] == "--precompile-worker":
        return precompile_worker(Path(argv[1]), int(argv[2]), int(argv[3]))
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--budget", type=float, default=400)
    ap.add_argument("--workers", type=int, default=10)
    ap.add_argument("--sections", default="fwd,conv1d,train")
    ap.add_argument("--no-precompile", action="store_true")
    ap.add_argument("--precompile-only", action="store_true")
    ap.add_argument("--rep-ms", type=int, default=40, help="GpuTimer's repetitions per pass (warm-up: a quarter)")
    args = ap.parse_args(argv)
    _TIMER_MS.update(warmup_ms=max(5, args.rep_ms // 4), rep_ms=args.rep_ms)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    import torch

    torch.backends.cudnn.benchmark = True  # cuDNN picks its fastest algorithm per shape: the strongest baseline
    log = Log(out)
    log(**env_record())  # every run heads its records with its machine and versions (a timing-only run too)
    if not args.no_precompile:
        precompile(log, out, args.workers)
    if args.precompile_only:
        return 0
    sections = args.sections.split(",")
    for section, fn in (("fwd", section_fwd), ("conv1d", section_conv1d), ("train", section_train)):
        if section in sections:
            fn(log, args.budget)
    log(kind="done", seconds=round(time.time() - T0, 1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
