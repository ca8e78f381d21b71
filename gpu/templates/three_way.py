"""Every template timed three ways in one run, forward and forward + backward, beside eager,
torch.compile and Liger-Kernel (one device call; results as JSON lines, then Markdown).

    python gpu/templates/three_way.py OUT_DIR [--budget S] [--sections ce,host,table] [--only NAME,...]
        [--shapes NAME=RxC+RxC,...]
    python gpu/templates/three_way.py --markdown OUT_DIR/three_way.jsonl results/templates_three_way_h200.md

The three ways answer two questions:
* ``graph``: CUDA-graph replay (``triton.testing.do_bench_cudagraph``): GPU time only, the launcher's
  Python is outside the measurement. Is the kernel fast?
* ``events``: ``triton.testing.do_bench`` (CUDA events, L2 flushed before each repetition): what an
  eager loop sees, where a launcher slower on the host than the GPU work leaves the GPU idle.
* ``host``: wall time per call of 200 back-to-back calls on 8 rows of the same width, synchronised at
  both ends (``tritonify.kernels.bench.timing.host_us_per_call``), and the time to issue them (the
  clock stopped before the final synchronisation, ``host_issue_us_per_call``): the launcher's cost,
  beside the call's GPU time (a host time at or under it is GPU-bound).

Sections, in priority order, each stopping at the time budget: ``ce`` (cross-entropy forward +
backward at 8192x128256 and 4096x32000 bf16 against Liger and torch.compile, the gradient checked
against float64, peak extra memory), ``host`` (host time per call of every template and baseline,
and where a template's time goes), ``table`` (every template at decode, mid and training shapes).
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
import traceback
from pathlib import Path

# The timings themselves live in the project's one timer (kernels/bench/timing.py).
from tritonify.kernels.bench.timing import (
    cuda_host_us as host_us,
    cuda_issue_us as issue_us,
    events_ms,
    graph_ms,
    three_timings,
)

T0 = time.time()
BF16 = "bfloat16"

# template -> shapes: a decode-like shape (a few rows), non-power-of-two hidden sizes, a training shape
SHAPES = {
    "rms_norm": [(4, 4096), (4096, 5120), (4096, 14336), (16384, 4096)],
    "add_rms_norm": [(4, 4096), (4096, 5120), (16384, 4096)],
    "softmax": [(4, 4096), (4096, 11008), (16384, 4096)],
    "swiglu": [(4, 14336), (4096, 11008), (4096, 14336), (16384, 4096)],
    "tanh_glu": [(4, 14336), (4096, 11008), (16384, 4096)],
    "relu2_glu": [(4, 14336), (4096, 11008), (16384, 4096)],
    "geglu_sigmoid": [(4, 14336), (4096, 11008), (16384, 4096)],
    "cross_entropy": [(4, 128256), (4096, 32000), (8192, 128256)],
    "fused_linear_cross_entropy": [(4, 4096, 128256), (8192, 4096, 128256)],
    "linear_gelu": [(4, 4096, 14336), (8192, 4096, 14336)],
}
ORDER = ["rms_norm", "swiglu", "cross_entropy", "softmax", "add_rms_norm", "fused_linear_cross_entropy",
         "linear_gelu", "tanh_glu", "relu2_glu", "geglu_sigmoid"]


def left(budget: float) -> float:
    return budget - (time.time() - T0)


class Log:
    def __init__(self, out: Path):
        self.path = out / "three_way.jsonl"
        self.f = self.path.open("a")

    def __call__(self, **rec):
        rec["t"] = round(time.time() - T0, 1)
        self.f.write(json.dumps(rec, default=str) + "\n")
        self.f.flush()
        print(json.dumps(rec, default=str), flush=True)


def env_record():
    import importlib.metadata as md

    import torch
    import triton

    p = torch.cuda.get_device_properties(0)
    return {"kind": "env", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "gpu": p.name,
            "sms": p.multi_processor_count, "l2_mb": getattr(p, "L2_cache_size", 0) / 2**20,
            "python": sys.version.split()[0], "torch": torch.__version__, "cuda": torch.version.cuda,
            "triton": triton.__version__, "liger": md.version("liger-kernel")}


def copy_gbps():
    import torch

    a = torch.empty(2**30, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    ms = events_ms(lambda: b.copy_(a), warmup_ms=10, rep_ms=50)
    return 2 * a.numel() / (ms * 1e-3) / 1e9


# --------------------------------------------------------------------------- implementations
def module(name):
    return importlib.import_module(f"tritonify.kernels.templates.{name}")


def contract_of(name):
    return getattr(module(name), f"{name.upper()}_CONTRACT")


_COMPILED = {}


def implementations(name):
    """impl name -> callable on the contract's inputs (template, eager, compile, liger where one exists)."""
    import torch
    from tritonify.kernels.bench import baselines as baselines_mod

    c = contract_of(name)
    impls = {"template": c.entry, "eager": c.reference}
    if name not in _COMPILED:
        _COMPILED[name] = torch.compile(c.reference)
    impls["compile"] = _COMPILED[name]
    if c.liger is not None:
        try:
            impls["liger"] = baselines_mod.liger_callable(c.liger)
        except Exception as exc:  # noqa: BLE001 - reported, not fatal
            print(f"liger for {name}: {exc}")
    return impls


def inputs(name, shape, requires_grad):
    import torch

    c = contract_of(name)
    args = list(c.inputs(shape, getattr(torch, c.dtype), "cuda"))
    if requires_grad:
        args = [a.detach().requires_grad_() if isinstance(a, torch.Tensor) and a.is_floating_point() else a
                for a in args]
    return args


def fwd_bwd(fn, args):
    """A no-argument call doing forward + backward (torch.autograd.grad: nothing accumulates in .grad)."""
    import torch

    leaves = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
    out = fn(*args)
    outs = out if isinstance(out, tuple) else (out,)
    seeds = [torch.randn_like(o) if o.dim() else torch.ones_like(o) for o in outs]

    def call():
        o = fn(*args)
        o = o if isinstance(o, tuple) else (o,)
        return torch.autograd.grad([x for x in o], leaves, seeds[:len(o)], allow_unused=True)

    return call


# --------------------------------------------------------------------------- sections
def section_ce(log, budget):
    """Cross-entropy forward + backward: template (three gradient destinations), Liger, compile, eager."""
    import torch
    import torch.nn.functional as F
    from liger_kernel.transformers.functional import liger_cross_entropy

    m = module("cross_entropy")
    compiled = torch.compile(lambda x, t: F.cross_entropy(x.float(), t))
    for rows, vocab in [(8192, 128256), (4096, 32000)]:
        if left(budget) < 60:
            log(kind="skipped", section="ce", shape=[rows, vocab])
            return
        torch.manual_seed(rows + vocab)
        base = torch.randn(rows, vocab, device="cuda", dtype=torch.bfloat16) * 2
        target = torch.randint(0, vocab, (rows,), device="cuda")
        target[torch.rand(rows, device="cuda") < 0.1] = -100
        valid = target != -100
        # float64 reference gradient of the mean loss
        ref_loss = F.cross_entropy(base.double(), target)
        ref = torch.softmax(base.double(), -1)
        ref[valid.nonzero().squeeze(1), target[valid]] -= 1
        ref[~valid] = 0
        ref /= valid.sum()
        buffer = torch.empty_like(base)
        impls = {
            "template (gradient over the logits)": lambda x: m.cross_entropy(x, target),
            "template (gradient into a preallocated buffer)": lambda x: m.cross_entropy(x, target, grad_buffer=buffer),
            "template (gradient in a new tensor)": lambda x: m.cross_entropy(x, target, inplace=False),
            "liger (gradient over the logits)": lambda x: liger_cross_entropy(x, target),
            "torch.compile (fp32 upcast)": lambda x: compiled(x, target),
            "eager (fp32 upcast)": lambda x: F.cross_entropy(x.float(), target),
        }
        for label, fn in impls.items():
            try:
                x = base.clone().requires_grad_()
                loss = fn(x)
                (grad,) = torch.autograd.grad(loss, x)
                err = (grad.double() - ref).abs().max().item()
                loss_err = abs(loss.item() - ref_loss.item())
                del loss, grad
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
                before = torch.cuda.memory_allocated()
                (grad,) = torch.autograd.grad(fn(x), x)
                del grad
                torch.cuda.synchronize()
                peak_extra = torch.cuda.max_memory_allocated() - before

                def step(x=x, fn=fn):   # the logits as a model's lm_head output sees them: no .grad to fill
                    return torch.autograd.grad(fn(x), x)

                def leaf_step(x=x, fn=fn):   # loss.backward() on a leaf: autograd copies an aliased gradient
                    fn(x).backward()
                    x.grad = None

                fwd_only = base.clone()
                rec = {"kind": "ce", "shape": [rows, vocab], "impl": label, "max_abs_grad_err": err,
                       "loss_abs_err": loss_err, "peak_extra_mib": peak_extra / 2**20,
                       "fwd_bwd_events_us": 1e3 * events_ms(step, warmup_ms=10, rep_ms=80),
                       "pass2": 1e3 * events_ms(step, warmup_ms=5, rep_ms=80),
                       "leaf_backward_events_us": 1e3 * events_ms(leaf_step, warmup_ms=5, rep_ms=60),
                       "fwd_events_us": 1e3 * events_ms(lambda: fn(fwd_only), warmup_ms=10, rep_ms=40)}
                log(**rec)
                del x
            except Exception as exc:  # noqa: BLE001
                log(kind="ce", shape=[rows, vocab], impl=label, error=f"{type(exc).__name__}: {exc}"[:300])
            torch.cuda.empty_cache()
        log(kind="ce_floor", shape=[rows, vocab], bytes=2 * base.numel() * 2,
            note="read the logits once + write the gradient once")
        del base, ref, buffer
        torch.cuda.empty_cache()


def section_host(log, budget, names):
    """Host time per call at 8 rows, forward and forward + backward, every template and baseline;
    then where the RMSNorm template's time goes."""
    import cProfile
    import io
    import pstats

    import torch

    for name in names:
        if left(budget) < 30:
            log(kind="skipped", section="host", template=name)
            return
        shape = (8, *SHAPES[name][-1][1:])
        for label, fn in implementations(name).items():
            rec = {"kind": "host", "template": name, "impl": label, "shape": list(shape)}
            try:
                args = inputs(name, shape, False)
                rec["fwd_host_us"] = host_us(lambda: fn(*args))
                rec["fwd_issue_us"] = issue_us(lambda: fn(*args))
                gargs = inputs(name, shape, True)
                if name != "cross_entropy" or label == "template":  # the in-place gradient: any values will do
                    rec["fwd_grad_issue_us"] = issue_us(lambda: fn(*gargs))
                rec["fwd_bwd_host_us"] = host_us(fwd_bwd(fn, gargs))
                if label == "template":  # the GPU time of the same call: a host time at or under it is GPU-bound
                    rec["fwd_graph_us"] = 1e3 * graph_ms(lambda: fn(*args), rep_ms=20)
            except Exception as exc:  # noqa: BLE001
                rec["error"] = f"{type(exc).__name__}: {exc}"[:300]
            log(**rec)
    # breakdown: the same forward through each layer of the RMSNorm template
    m = module("rms_norm")
    x = torch.randn(8, 4096, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(4096, device="cuda", dtype=torch.bfloat16)
    xg = x.clone().requires_grad_()
    launch = m._rms_norm_fwd_launch
    parts = {"rms_norm() (no grad: lean launcher, no autograd node)": lambda: m.rms_norm(x, w),
             "rms_norm() with x.requires_grad (autograd.Function + lean launcher)": lambda: m.rms_norm(xg, w),
             "rms_norm_forward() (no autograd)": lambda: m.rms_norm_forward(x, w, 1e-6),
             "torch.empty_like x2 (the allocations alone)": lambda: (torch.empty_like(x), torch.empty(8, device="cuda")),
             "F.rms_norm (eager, one ATen op)": lambda: torch.nn.functional.rms_norm(x, (4096,), w, 1e-6)}
    for label, fn in parts.items():
        log(kind="host_breakdown", what=label, host_us=host_us(fn))
    for impl, fn in implementations("rms_norm").items():
        log(kind="host_breakdown", what=f"{impl}, forward with x.requires_grad", host_us=host_us(lambda: fn(xg, w, 1e-6)))
    launch.plans.clear()
    launch.direct = False   # every call through the autotuner and the JIT dispatch, as before
    log(kind="host_breakdown", what="rms_norm() no grad, every launch through @triton.autotune and the JIT dispatch (the short path off)",
        host_us=host_us(lambda: m.rms_norm(x, w)))
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(300):
        m.rms_norm(x, w)
    prof.disable()
    torch.cuda.synchronize()
    text = io.StringIO()
    pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(14)
    log(kind="host_profile", what="300 calls through the autotuner, sorted by own time", text=text.getvalue()[-3500:])
    launch.direct = True


def section_table(log, budget, names):
    for name in names:
        for shape in SHAPES[name]:
            if left(budget) < 25:
                log(kind="skipped", section="table", template=name, shape=list(shape))
                return
            for label, fn in implementations(name).items():
                rec = {"kind": "table", "template": name, "shape": list(shape), "impl": label}
                try:
                    args = inputs(name, shape, False)
                    rec["fwd"] = three_timings(lambda: fn(*args))
                    gargs = inputs(name, shape, True)
                    rec["fwd_bwd"] = three_timings(fwd_bwd(fn, gargs))
                except Exception as exc:  # noqa: BLE001
                    rec["error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
                log(**rec)
                import torch

                torch.cuda.empty_cache()


# --------------------------------------------------------------------------- markdown
def markdown(jsonl: Path, dest: Path) -> None:
    recs = [json.loads(line) for line in jsonl.read_text().splitlines() if line.strip()]
    env = next((r for r in recs if r.get("kind") == "env"), {})
    bw = next((r["copy_gbps"] for r in recs if r.get("kind") == "copy"), None)
    out = ["# Templates timed three ways on the H200: GPU time, what an eager loop sees, host time per call", "",
           f"Measured {env.get('date')} on one {env.get('gpu')} ({env.get('sms')} SMs), python {env.get('python')}, "
           f"torch {env.get('torch')} (CUDA {env.get('cuda')}), triton {env.get('triton')}, liger-kernel {env.get('liger')}; "
           f"copy bandwidth in the same run {bw:,.0f} GB/s. One run of `gpu/templates/three_way.py`; raw records: "
           "`results/templates_h200/three_way.jsonl`." if bw else "", "",
           "Method, per column:", "",
           "* **graph**: CUDA-graph replay, `triton.testing.do_bench_cudagraph` (its default, the mean of 10 replays of a graph of back-to-back calls): GPU time alone.",
           "* **events**: `triton.testing.do_bench` (CUDA events, L2 flushed before each repetition, mean: its default): what an "
           "eager loop sees; a launcher slower on the host than the GPU work shows here.",
           "* **host**: wall time per call of 200 back-to-back calls on 8 rows of the same width, synchronised at both "
           "ends: the launcher's Python and the launch.",
           "* forward + backward is `torch.autograd.grad(outputs, inputs, random output gradients)` after a forward "
           "(the cross-entropy section: `loss.backward()`); inputs bf16; eager and torch.compile run the templates' "
           "PyTorch references (fp32 statistics), Liger its `transformers.functional` op.", ""]
    ce = [r for r in recs if r.get("kind") == "ce"]
    if ce:
        out += ["## Cross-entropy for training (forward + backward, bf16)", "",
                "`events` timing (what the loop pays); fwd+bwd = `torch.autograd.grad(loss, logits)`, the logits as "
                "an lm_head output sees them (two passes of do_bench, the second in brackets); `leaf .backward()` = "
                "`loss.backward()` on a leaf tensor, where autograd copies a gradient that aliases the leaf itself "
                "(the in-place variants pay that copy there, about 1 ms at 8192x128256); gradient error against float64 "
                "(softmax - onehot) / n_valid with 10% of the rows ignored; peak extra memory = the largest allocation "
                "during one fwd+bwd above what was allocated before it.", "",
                "| shape | implementation | fwd+bwd us | leaf .backward() us | fwd us | max abs grad error | peak extra MiB |",
                "| --- | --- | --- | --- | --- | --- | --- |"]
        for r in ce:
            shape = "x".join(map(str, r["shape"]))
            if "error" in r:
                out.append(f"| {shape} | {r['impl']} | error: {r['error'][:80]} | | | | |")
                continue
            leaf = r.get("leaf_backward_events_us")
            out.append(f"| {shape} | {r['impl']} | {r['fwd_bwd_events_us']:,.0f} ({r['pass2']:,.0f}) | "
                       f"{f'{leaf:,.0f}' if leaf else '-'} | {r['fwd_events_us']:,.0f} | {r['max_abs_grad_err']:.2e} | "
                       f"{r['peak_extra_mib']:,.0f} |")
        out.append("")
    host = [r for r in recs if r.get("kind") == "host"]
    if host:
        out += ["## Host time per call (8 rows, us)", "",
                "`forward` = wall time per call, synchronised at both ends (bounded below by the GPU time of the "
                "call); `issued` = the host time to issue the calls (the clock stops before the final "
                "synchronisation): the launcher's own cost; `with requires_grad` = issued, inputs requiring grad "
                "(the autograd node); `GPU` = the same call's graph-replay time (template only).", "",
                "| template | impl | forward | issued | with requires_grad (issued) | GPU | forward + backward |",
                "| --- | --- | --- | --- | --- | --- | --- |"]
        for r in host:
            f = lambda k: f"{r[k]:.1f}" if isinstance(r.get(k), float) else ("-" if "error" not in r else r["error"][:60])
            out.append(f"| {r['template']} | {r['impl']} | {f('fwd_host_us')} | {f('fwd_issue_us')} | "
                       f"{f('fwd_grad_issue_us')} | {f('fwd_graph_us')} | {f('fwd_bwd_host_us')} |")
        out.append("")
    brk = [r for r in recs if r.get("kind") == "host_breakdown"]
    if brk:
        out += ["### Where a template call's host time goes (RMSNorm forward, 8x4096 bf16)", "", "| call | us per call |",
                "| --- | --- |"] + [f"| {r['what']} | {r['host_us']:.1f} |" for r in brk] + [""]
    table = [r for r in recs if r.get("kind") == "table"]
    if table:
        out += ["## Every template, three ways (us; ratio = baseline / template, graph time)", "",
                "| template | shape | impl | fwd graph | fwd events | fwd+bwd graph | fwd+bwd events |",
                "| --- | --- | --- | --- | --- | --- | --- |"]
        tmpl = {(r["template"], tuple(r["shape"])): r for r in table if r["impl"] == "template"}

        def cell(r, mode, key):
            v = (r.get(mode) or {}).get(key)
            if v is None:
                return "-"
            t = (tmpl.get((r["template"], tuple(r["shape"]))) or {}).get(mode, {}).get(key)
            ratio = f" ({v / t:.2f}x)" if t and r["impl"] != "template" else ""
            return f"{v:,.1f}{ratio}"

        for r in table:
            if "error" in r and not r.get("fwd"):
                out.append(f"| {r['template']} | {'x'.join(map(str, r['shape']))} | {r['impl']} | error: {r['error'][:70]} | | | |")
                continue
            out.append(f"| {r['template']} | {'x'.join(map(str, r['shape']))} | {r['impl']} | {cell(r, 'fwd', 'graph_us')} | "
                       f"{cell(r, 'fwd', 'events_us')} | {cell(r, 'fwd_bwd', 'graph_us')} | {cell(r, 'fwd_bwd', 'events_us')} |")
        out.append("")
    skipped = [r for r in recs if r.get("kind") == "skipped"]
    if skipped:
        out += ["Not measured in this run (time budget): " + ", ".join(
            f"{r.get('section')} {r.get('template', '')} {r.get('shape', '')}".strip() for r in skipped), ""]
    dest.write_text("\n".join(out) + "\n")


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("out", nargs="?")
    p.add_argument("--budget", type=float, default=400)
    p.add_argument("--sections", default="ce,host,table")
    p.add_argument("--only", default="")
    p.add_argument("--shapes", default="", help="NAME=RxC+RxC,...: only these shapes of NAME (the table)")
    p.add_argument("--markdown", nargs=2, metavar=("JSONL", "DEST"))
    a = p.parse_args(argv)
    if a.markdown:
        markdown(Path(a.markdown[0]), Path(a.markdown[1]))
        return 0
    import logging

    logging.getLogger("liger_kernel.backends.registry").setLevel(logging.ERROR)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    log = Log(out)
    log(**env_record())
    log(kind="copy", copy_gbps=copy_gbps())
    names = [n for n in ORDER if not a.only or n in a.only.split(",")]
    for item in filter(None, a.shapes.split(",")):
        name, _, dims = item.partition("=")
        SHAPES[name] = [tuple(int(d) for d in shape.split("x")) for shape in dims.split("+")]
    for section in a.sections.split(","):
        try:
            if section == "ce":
                section_ce(log, a.budget)
            elif section == "host":
                section_host(log, a.budget, names)
            elif section == "table":
                section_table(log, a.budget, names)
        except Exception:  # noqa: BLE001 - one section's failure must not lose the others
            log(kind="section_error", section=section, trace=traceback.format_exc()[-2000:])
    log(kind="done", elapsed_s=round(time.time() - T0, 1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
