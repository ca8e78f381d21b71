"""The real kernels on the device: launch them for ncu, or check and time them with their candidates.

    python3 gpu/realkernels/run.py profile [--only L1,L2]     # under ncu: each launcher's call, warmed
                                                             # up twice, then once in NVTX range `tritonify`
    python3 gpu/realkernels/run.py bench OUT [--only ...] [--budget S]

`profile` writes nothing but stderr (ncu's report is the record). `bench` appends one JSON line per
launcher to OUT/bench.jsonl: the original's error against the float64 reference, its timings
(`kernels/bench/timing.py`'s `three_timings`: CUDA-graph replay = kernel time; events with the L2
flushed = what an eager loop sees), the eager and torch.compile baselines, and each candidate's
error (against the reference and against the original) and timings. A launcher that fails is
reported in its line and the run goes on.
"""
from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks.realkernels.registry import KERNELS  # noqa: E402


def launchers(only: list[str] | None = None) -> list[str]:
    seen: dict[str, None] = {}
    for k in KERNELS:
        if only and k.launcher.split(":")[1] not in only and k.name not in only:
            continue
        seen.setdefault(k.launcher, None)
    return list(seen)


def build(launcher: str):
    module, function = launcher.split(":")
    return getattr(importlib.import_module(f"benchmarks.realkernels.{module}"), function)()


def _checking(flag: bool) -> None:
    from benchmarks.realkernels import liger

    liger.CHECKING[0] = flag


def profile(only: list[str] | None, with_candidates: list[str] | None = None) -> int:
    """Each launcher's call in the NVTX range; then, in launch order, each candidate named in
    `with_candidates` (the fixed copy's kernel has the original's name: the report's launch order,
    printed here, tells them apart)."""
    import torch

    failed = 0
    for launcher in launchers(only):
        try:
            torch.manual_seed(0)
            case = build(launcher)
            calls = [("original", case.call)] + [(n, c.call) for n, c in case.candidates.items()
                                                 if n in (with_candidates or ())]
            for name, call in calls:
                for _ in range(2):
                    call()
                torch.cuda.synchronize()
                # autograd runs a CUDA backward on a thread of its own, outside this thread's NVTX range
                # (runs 1-2 missed Inductor's backward kernels so); single-threaded, it runs here.
                # Added after the runs: not yet tried on the device.
                with torch.autograd.set_multithreading_enabled(False):
                    torch.cuda.nvtx.range_push("tritonify")
                    call()
                    torch.cuda.synchronize()
                    torch.cuda.nvtx.range_pop()
                print(f"profiled {launcher} {name}", file=sys.stderr, flush=True)
        except Exception:  # one bad launcher must not cost the capture
            failed += 1
            print(f"FAILED {launcher}:\n{traceback.format_exc()}", file=sys.stderr, flush=True)
        finally:
            case = None
            gc.collect()
            torch.cuda.empty_cache()
    return 1 if failed else 0


def _timed(call) -> dict:
    from tritonify.kernels.bench.timing import three_timings

    _checking(False)
    try:
        return three_timings(call)
    finally:
        _checking(True)


def _errors(call, reference_out, original_out=None):
    from benchmarks.realkernels.case import rel_errors

    import torch

    _checking(True)
    out = call()
    torch.cuda.synchronize()
    rec = {"rel_error_vs_float64": rel_errors(out, reference_out)}
    if original_out is not None:
        rec["rel_error_vs_original"] = rel_errors(out, original_out)
    return rec, out


def bench_one(launcher: str) -> dict:
    import torch

    torch.manual_seed(1)   # fresh inputs, not the profiled ones
    case = build(launcher)
    rec: dict = {"launcher": launcher, "tolerance": case.tolerance, "notes": case.notes,
                 "bytes_moved": case.bytes_moved}
    ref = case.reference()
    torch.cuda.synchronize()
    check, original_out = _errors(case.call, ref)
    original_out = tuple(o.clone() for o in (original_out if isinstance(original_out, (tuple, list))
                                                 else (original_out,)) if o is not None)
    rec["original"] = {**check, "correct": max(check["rel_error_vs_float64"]) <= case.tolerance,
                       **_timed(case.call)}
    for name, fn in (("eager", case.eager), ("torch_compile", case.compiled)):
        if fn is None:
            continue
        try:
            c, _ = _errors(fn, ref)
            rec[name] = {**c, **_timed(fn)}
        except Exception as exc:  # noqa: BLE001
            rec[name] = {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}
    rec["candidates"] = {}
    for name, cand in case.candidates.items():
        try:
            c, _ = _errors(cand.call, ref, original_out)
            c["correct"] = max(c["rel_error_vs_float64"]) <= case.tolerance
            rec["candidates"][name] = {"fixes": cand.fixes, "change": cand.change, **c, **_timed(cand.call)}
        except Exception as exc:  # noqa: BLE001
            rec["candidates"][name] = {"fixes": cand.fixes, "change": cand.change,
                                       "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
    return rec


def bench(out: Path, only: list[str] | None, budget: float) -> int:
    import torch

    start = time.time()
    out.mkdir(parents=True, exist_ok=True)
    path = out / "bench.jsonl"
    for launcher in launchers(only):
        if time.time() - start > budget:
            print(f"budget spent: {launcher} and later not timed", file=sys.stderr, flush=True)
            break
        t0 = time.time()
        try:
            rec = bench_one(launcher)
        except Exception:
            rec = {"launcher": launcher, "error": traceback.format_exc()[-1500:]}
        rec["seconds"] = round(time.time() - t0, 1)
        with path.open("a") as f:
            f.write(json.dumps(rec) + "\n")
        print(summary_line(rec), flush=True)
        gc.collect()
        torch.cuda.empty_cache()
    return 0


def summary_line(rec: dict) -> str:
    if "error" in rec:
        return f"{rec['launcher']:<34} ERROR {rec['error'].strip().splitlines()[-1][:90]}"

    def us(r):
        if not r or "error" in r:
            return "   -   "
        return f"{r.get('graph_us', float('nan')):7.1f}"
    parts = [f"{rec['launcher']:<34} err {max(rec['original']['rel_error_vs_float64']):.1e}",
             f"orig {us(rec['original'])}", f"eager {us(rec.get('eager'))}", f"compile {us(rec.get('torch_compile'))}"]
    for name, c in rec.get("candidates", {}).items():
        parts.append(f"{name} {us(c)}{'' if c.get('correct') else ' (WRONG)'}")
    return " | ".join(parts)


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=("profile", "bench"))
    p.add_argument("out", nargs="?", default=os.environ.get("OUT", "/tmp/rk"))
    p.add_argument("--only", default="")
    p.add_argument("--budget", type=float, default=1e9)
    p.add_argument("--with", dest="with_candidates", default="", help="profile: candidates to launch too")
    a = p.parse_args(argv)
    only = [s for s in a.only.split(",") if s] or None
    if a.mode == "profile":
        return profile(only, [s for s in a.with_candidates.split(",") if s])
    return bench(Path(a.out), only, a.budget)


if __name__ == "__main__":
    sys.exit(main())
