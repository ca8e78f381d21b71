"""One device call for the wide-row templates: the template's own call and some of its kernel's configs
forced, checked against float64, then timed beside Liger-Kernel and torch.compile with CUDA-graph
replay, interleaved, several times.

    python gpu/templates/sweep_wide.py OUT_DIR [--reps 7] [--budget S] [--groups NAME,...]

Groups (bf16): softmax forward and backward at 4096x11008 and 16384x4096, RMSNorm forward at
4096x14336, add+RMSNorm forward at 4096x5120, SwiGLU forward at 16384x4096. (The candidate kernels of
2026-12-01 18:03-18:06Z, whose winners became the templates' three-tile and PREFETCH configs, were
``gpu/templates/prefetch_candidates.py`` at commit b27c1e5; those configs are now forced here.)
In each: the template's own function (autotuned, as a user calls it), some of its kernel's configs
forced (the JIT function launched with them, no autotuner), and the baselines (the same callables as ``three_way.py``: Liger's functional op,
``torch.compile`` of the template's fp32-statistics reference; Liger's softmax backward directly).
The configs the autotuner chose are printed.

Check: each implementation's output on fresh random inputs (outputs poisoned with NaN first where the
candidate takes its output buffer) against float64, elementwise ``|got - ref| <= 1e-2 * |ref| + ATOL``
with ATOL = 1e-3 * max|ref| (bf16 rounding is 2**-9 relative); a NaN or unwritten element fails. A
forced config that fails is not timed; a baseline outside the tolerance is timed and marked so.
Timing: each call captured 20 times in one CUDA graph, the graph replayed 5 times (CUDA events), the
median per call; every implementation of every group once per repetition, in turn, ``--reps`` times;
the table gives the median over repetitions and the spread (min-max).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch
import triton

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import three_way  # noqa: E402  (the same baselines as the three-way table)
from tritonify.kernels.bench.timing import graph_ms, graph_of_calls_us  # noqa: E402

T0 = time.time()
BF16 = torch.bfloat16


def check(got, ref):
    got, ref = got.double(), ref.double()
    atol = 1e-3 * ref.abs().max().item()
    err = (got - ref).abs()
    bad = ~(err <= 1e-2 * ref.abs() + atol)  # NaN fails
    rel = (err.norm() / ref.norm()).item()
    return {"ok": not bool(bad.any()), "bad": int(bad.sum()), "max_abs_err": err.nan_to_num(float("inf")).max().item(),
            "rel_l2": rel}


# --------------------------------------------------------------------------- groups
def forced(kernel, grid, *args, **meta):
    """The template's own kernel with one config forced (its JIT function, no autotuner)."""
    kernel.fn[grid](*args, **meta)


def _sms():
    return torch.cuda.get_device_properties(0).multi_processor_count


def config_grid(rows, meta):
    """One program per row, or with PPS > 0 a persistent grid of PPS programs per SM (as the templates' row_grid)."""
    return (max(1, min(rows, meta["PPS"] * _sms())),) if meta.get("PPS") else (rows,)


def softmax_fwd_group(rows, cols, configs):
    m = three_way.module("softmax")
    from liger_kernel.ops.softmax import _softmax_forward as liger_fwd
    compiled = three_way.implementations("softmax")["compile"]

    def make_inputs():
        return ((3.0 * torch.randn(rows, cols, device="cuda")).to(BF16),)

    def reference(x):
        return torch.softmax(x.double(), -1)

    impls = {"template": lambda x, out: m.softmax_forward(x),
             "liger": lambda x, out: liger_fwd(x)[0],
             "compile": lambda x, out: compiled(x)}
    for label, w, meta in configs:
        meta = {"BLOCK_N": m._pow2(cols), "ROWS": 1, "PPS": 0, "STAGES": 1, **meta}
        impls[f"template {label} w{w}"] = (
            lambda x, out, w=w, meta=meta: forced(
                m._softmax_fwd_kernel, config_grid(rows, meta), x, out, rows, cols, x.stride(0), out.stride(0), 2,
                num_warps=w, **meta) or out)
    return make_inputs, reference, impls


def softmax_bwd_group(rows, cols, configs):
    m = three_way.module("softmax")
    from liger_kernel.ops.softmax import _softmax_backward as liger_bwd
    from liger_kernel.ops.utils import calculate_settings

    block, warps = calculate_settings(cols)
    compiled = torch.compile(lambda dy, y: (y.float() * (dy.float() - (dy.float() * y.float()).sum(-1, keepdim=True))).to(dy.dtype))

    def make_inputs():
        x = (3.0 * torch.randn(rows, cols, device="cuda")).to(BF16)
        return torch.randn(rows, cols, device="cuda").to(BF16), torch.softmax(x.float(), -1).to(BF16)

    def reference(dy, y):
        dyd, yd = dy.double(), y.double()
        return yd * (dyd - (dyd * yd).sum(-1, keepdim=True))

    impls = {"template": lambda dy, y, out: m.softmax_backward(dy, y),
             "liger": lambda dy, y, out: liger_bwd(dy, y, block, warps, False),
             "compile": lambda dy, y, out: compiled(dy, y)}
    for label, w, meta in configs:
        meta = {"BLOCK_N": m._pow2(cols), "PPS": 0, "STAGES": 1, **meta}
        impls[f"template {label} w{w}"] = (
            lambda dy, y, out, w=w, meta=meta: forced(
                m._softmax_bwd_kernel, config_grid(rows, meta), dy, y, out, rows, cols, dy.stride(0), y.stride(0),
                out.stride(0), 2, num_warps=w, **meta) or out)
    return make_inputs, reference, impls


def rms_fwd_group(rows, cols, configs):
    m = three_way.module("rms_norm")
    base = three_way.implementations("rms_norm")

    def make_inputs():
        return (torch.randn(rows, cols, device="cuda").to(BF16),
                (1.0 + 0.1 * torch.randn(cols, device="cuda")).to(BF16))

    def reference(x, w):
        xd = x.double()
        return xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + 1e-6) * w.double()

    def into(x, w, out):  # the template's launcher and plan, writing a buffer given to it (no allocation)
        key = ("into", rows, cols, x.stride(0), x.dtype, w.dtype, x.data_ptr() & 15, w.data_ptr() & 15)
        grid = lambda meta: (m.row_grid(x, rows, meta["ROWS"], meta["PPS"]),)
        m._rms_norm_fwd_launch(key, grid, x, w, out, out, rows, cols, x.stride(0), out.stride(0), 1e-6,
                               m._rms_norm_row_bucket(rows), BLOCK_N=m._rms_norm_block_n(cols), STORE_RSTD=False)
        return out

    impls = {"template": lambda x, w, out: m.rms_norm(x, w, 1e-6),
             "template (output buffer given)": into,
             "liger": lambda x, w, out: base["liger"](x, w, 1e-6),
             "compile": lambda x, w, out: base["compile"](x, w, 1e-6)}
    for label, wp, meta in configs:
        meta = {"BLOCK_N": m._rms_norm_block_n(cols), "STORE_RSTD": False, "ROWS": 1, "PPS": 0, "STAGES": 1, **meta}
        impls[f"template {label} w{wp}"] = (
            lambda x, w, out, wp=wp, meta=meta: forced(
                m._rms_norm_fwd_kernel, config_grid(rows, meta), x, w, out, out, rows, cols, x.stride(0),
                out.stride(0), 1e-6, 2, num_warps=wp, **meta) or out)
    return make_inputs, reference, impls


def add_rms_fwd_group(rows, cols, configs):
    m = three_way.module("add_rms_norm")
    base = three_way.implementations("add_rms_norm")

    def make_inputs():
        return (torch.randn(rows, cols, device="cuda").to(BF16), torch.randn(rows, cols, device="cuda").to(BF16),
                (1.0 + 0.1 * torch.randn(cols, device="cuda")).to(BF16))

    def reference(x, r, w):
        sd = (x + r).double()  # the sum rounded to bf16, as every implementation stores it
        return sd * torch.rsqrt(sd.pow(2).mean(-1, keepdim=True) + 1e-6) * w.double()

    impls = {"template": lambda x, r, w, out: m.add_rms_norm(x, r, w, 1e-6)[0],
             "liger": lambda x, r, w, out: base["liger"](x, r, w, 1e-6)[0],
             "compile": lambda x, r, w, out: base["compile"](x, r, w, 1e-6)[0]}
    try:
        from liger_kernel.ops.fused_add_rms_norm import LigerFusedAddRMSNormFunction

        impls["liger Function in_place=False"] = (
            lambda x, r, w, out: LigerFusedAddRMSNormFunction.apply(x, r, w, 1e-6, 0.0, "llama", False)[0])
    except ImportError:
        pass
    sums = {}

    def call(x, r, w, out, wp, meta):
        s = sums.setdefault(out.shape, torch.empty_like(out))
        forced(m._add_rms_norm_fwd_kernel, (rows,), x, r, w, out, s, out, rows, cols, x.stride(0), r.stride(0),
               out.stride(0), s.stride(0), 1e-6, 2, num_warps=wp, **meta)
        return out

    for label, wp, meta in configs:
        meta = {"BLOCK_N": m._add_rms_norm_block_n(cols), "STORE_RSTD": False, "ROWS": 1, **meta}
        impls[f"template {label} w{wp}"] = lambda x, r, w, out, wp=wp, meta=meta: call(x, r, w, out, wp, meta)
    return make_inputs, reference, impls


def swiglu_fwd_group(rows, cols):
    m = three_way.module("swiglu")
    base = three_way.implementations("swiglu")

    def make_inputs():
        return torch.randn(rows, cols, device="cuda").to(BF16), torch.randn(rows, cols, device="cuda").to(BF16)

    def reference(a, b):
        ad = a.double()
        return ad * torch.sigmoid(ad) * b.double()

    impls = {"template": lambda a, b, out: m.swiglu(a, b), "liger": lambda a, b, out: base["liger"](a, b),
             "compile": lambda a, b, out: base["compile"](a, b)}
    return make_inputs, reference, impls


PREFETCH = {"PPS": 1, "PREFETCH": 1}  # one program per SM, the next row loaded before this row's sum
GROUPS = {
    # the template's own call (its autotuner's pick) beside some of its kernel's configs forced
    "softmax_fwd 4096x11008": lambda: softmax_fwd_group(4096, 11008, [
        ("one block", 16, {}), ("three tiles", 4, {"BLOCK_N": 4096, "NT": 3})]),
    "softmax_bwd 4096x11008": lambda: softmax_bwd_group(4096, 11008, [
        ("one block RELOAD", 8, {"RELOAD": 1}), ("prefetch", 32, PREFETCH)]),
    "softmax_fwd 16384x4096": lambda: softmax_fwd_group(16384, 4096, []),
    "softmax_bwd 16384x4096": lambda: softmax_bwd_group(16384, 4096, []),
    "rms_norm_fwd 4096x14336": lambda: rms_fwd_group(4096, 14336, [("prefetch", 32, PREFETCH)]),
    "add_rms_norm_fwd 4096x5120": lambda: add_rms_fwd_group(4096, 5120, [
        ("three tiles", 8, {"BLOCK_N": 2048, "NT": 3}), ("three tiles", 16, {"BLOCK_N": 2048, "NT": 3})]),
    "swiglu_fwd 16384x4096": lambda: swiglu_fwd_group(16384, 4096),
}


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--budget", type=float, default=240)
    p.add_argument("--groups", default="")
    p.add_argument("--timers", default="graph",
                   help="comma-separated: graph (20 calls per graph), graph1000 (1000 calls per graph), "
                        "triton (triton.testing.do_bench_cudagraph, rep 40 ms: the three-way table's graph column)")
    p.add_argument("--fresh-inputs", action="store_true",
                   help="each repetition on new inputs placed after a spacer of random size (0-96 MiB), the same "
                        "placement for every implementation of a group in that repetition: the ratio per "
                        "repetition is free of where the allocator put the tensors, the median over repetitions "
                        "covers placements")
    a = p.parse_args(argv)
    timers = a.timers.split(",")
    import logging

    logging.getLogger("liger_kernel.backends.registry").setLevel(logging.ERROR)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    log = open(out / "sweep.jsonl", "w")

    def emit(**rec):
        rec["t"] = round(time.time() - T0, 1)
        log.write(json.dumps(rec) + "\n")
        log.flush()

    emit(**three_way.env_record())
    names = [n for n in GROUPS if not a.groups or any(n.startswith(g) for g in a.groups.split(","))]
    groups = {}
    for name in names:  # build, check on fresh inputs, keep the correct ones with their timing inputs
        make_inputs, reference, impls = GROUPS[name]()
        kept = {}
        for label, fn in impls.items():
            args = make_inputs()
            buf = torch.full_like(args[0], float("nan"))
            try:
                got = fn(*args, buf)
                res = check(got, reference(*args))
            except Exception as exc:  # noqa: BLE001 - a candidate that fails is reported, the rest go on
                res = {"ok": False, "error": f"{type(exc).__name__}: {str(exc)[:200]}"}
            emit(kind="check", group=name, impl=label, **res)
            print(f"check {name:28s} {label:34s} {res}", flush=True)
            if res["ok"] or ("error" not in res and not label.startswith("template ")):
                kept[label] = fn  # a baseline outside the tolerance (Liger's bf16 arithmetic) is still timed
        timing_args = make_inputs()
        groups[name] = (kept, [timing_args, torch.empty_like(timing_args[0])], make_inputs)
        torch.cuda.empty_cache()
    for tmpl in ("softmax", "rms_norm", "add_rms_norm"):  # what the autotuner chose for the template calls
        m = three_way.module(tmpl)
        for attr, value in vars(m).items():
            if isinstance(value, triton.runtime.autotuner.Autotuner) and value.cache:
                emit(kind="autotuner", template=tmpl, kernel=attr,
                     picks={str(k): str(v) for k, v in value.cache.items()})
                print(f"autotuner {tmpl}.{attr}: {[str(v) for v in value.cache.values()]}", flush=True)
    def timed(timer, call):
        if timer == "triton":
            return 1e3 * graph_ms(call, rep_ms=40)
        return graph_of_calls_us(call, calls=1000 if timer == "graph1000" else 20, replays=3 if timer == "graph1000" else 5)

    def name(label, timer):
        return label if timer == "graph" and len(timers) == 1 else f"{label} [{timer}]"

    times = {(g, name(label, tm)): [] for g, (kept, _, _) in groups.items() for label in kept for tm in timers}
    for rep in range(a.reps):
        if rep >= 2 and time.time() - T0 > a.budget:
            break
        for g, (kept, held, make_inputs) in groups.items():
            spacer = fresh = None
            if a.fresh_inputs:
                held.clear()
                torch.cuda.empty_cache()
                spacer = torch.empty(int(torch.randint(0, 96 << 20, (1,))), dtype=torch.uint8, device="cuda")
                fresh = make_inputs()
                held.extend([fresh, torch.empty_like(fresh[0])])
            args, buf = held
            if a.fresh_inputs:
                emit(kind="placement", group=g, rep=rep, spacer_bytes=spacer.numel(),
                     input_ptrs=[t.data_ptr() for t in args if isinstance(t, torch.Tensor)])
            for timer in timers:
                for label, fn in kept.items():
                    try:
                        t = timed(timer, lambda fn=fn: fn(*args, buf))
                    except Exception as exc:  # noqa: BLE001
                        emit(kind="time_error", group=g, impl=label, timer=timer, error=str(exc)[:200])
                        continue
                    times[(g, name(label, timer))].append(t)
                    emit(kind="time", group=g, impl=label, timer=timer, rep=rep, graph_us=t)
            args = buf = fresh = spacer = None  # nothing of this placement held into the next
        print(f"rep {rep} done at {time.time() - T0:.0f} s", flush=True)
    lines = ["| group | impl | graph us (median) | min-max | vs template | vs liger | vs compile | reps |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for g in groups:
        med = {label: statistics.median(v) for (gg, label), v in times.items() if gg == g and v}
        for label, t in sorted(med.items(), key=lambda kv: kv[1]):
            v = times[(g, label)]
            suffix = label[label.rindex(" ["):] if label.endswith("]") else ""  # the same timer's baseline
            ratio = lambda base: f"{med[base + suffix] / t:.3f}x" if base + suffix in med else "-"
            lines.append(f"| {g} | {label} | {t:.1f} | {min(v):.1f}-{max(v):.1f} | {ratio('template')} | "
                         f"{ratio('liger')} | {ratio('compile')} | {len(v)} |")
    (out / "sweep.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    emit(kind="done", elapsed_s=round(time.time() - T0, 1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
