"""Where `tritonify profile`'s time goes on the H200, phase by phase, against ncu alone and a bare run.

    OUT=/tmp/out PYTHONPATH=<tritonify importable> python3 gpu/ncu/turnaround_probe.py

Every variant runs the same launcher (`stamp_app.py --only KERNEL`, which stamps its start,
its imports and its exit) SAMPLES times, interleaved with the others. For runs of ncu itself
the time each ncu line arrives is recorded too (Connected, Profiling, the passes line,
Disconnected, Report), so a run splits into: ncu's start and the app's start, the app's
imports, the profiled launch's passes, and after the app: the report's writing and ncu's exit.
`tritonify profile` runs are split by its sidecar timings. Then the `ncu_report` read of one
triage report is profiled call kind by call kind. Writes $OUT/probe.json.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = Path(os.environ.get("OUT", "/tmp/ncu_out"))
NCU = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
KERNEL = os.environ.get("PROBE_KERNEL", "planted_c_uncoalesced")
WORK = Path("/tmp/ncu_probe")
SAMPLES = int(os.environ.get("PROBE_SAMPLES", "3"))
MARKS = {"connected": "==PROF== Connected", "profiling": "==PROF== Profiling", "passes": " passes",
         "disconnected": "==PROF== Disconnected", "report": "==PROF== Report"}


# `tritonify profile` with nothing overlapping its ncu run: the ncu_report child starts only after
# ncu has finished, and NVML is not started at all
SEQUENTIAL = """
import sys
import tritonify.tools.ncu.profile_run as p
from tritonify.tools.ncu.report_reader import ReaderProcess
class Later:
    def __init__(self, ncu): self.ncu, self.proc = ncu, None
    def read(self, *a, **k): self.proc = ReaderProcess(self.ncu); return self.proc.read(*a, **k)
    def close(self): self.proc and self.proc.close()
p._start_reader = lambda ncu, warnings: Later(ncu)
p.gpu_info = lambda: {"available": True, "warnings": []}
from tritonify.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def run(argv, env, stamps: Path) -> dict:
    stamps.unlink(missing_ok=True)
    env = dict(env, STAMP_FILE=str(stamps))
    t0 = time.time()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    marks, tail = {}, []
    for line in proc.stdout:
        now = time.time()
        tail = (tail + [line])[-20:]
        for name, text in MARKS.items():
            if text in line and name not in marks:
                marks[name] = round(now - t0, 3)
    proc.wait()
    total = round(time.time() - t0, 3)
    app = {}
    try:
        for line in stamps.read_text().splitlines():
            name, t = line.split()
            app.setdefault(name, round(float(t) - t0, 3))
    except OSError:
        pass
    passes = [int(x) for x in re.findall(r"(\d+) passes", "".join(tail))]
    return {"s": total, "rc": proc.returncode, "ncu": marks, "app": app, "passes": passes,
            "tail": "".join(tail)[-600:] if proc.returncode else ""}


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir()
    env = dict(os.environ, PYTHONUNBUFFERED="1", TRITON_CACHE_DIR=str(WORK / "triton_cache"))
    app = [sys.executable, str(HERE / "stamp_app.py"), "--only", KERNEL]
    subprocess.run(app, env=env)  # compile once
    sys.path.insert(0, os.environ.get("PYTHONPATH", "").split(":")[0])
    from tritonify.tools.ncu.profile_run import ProfileRequest, build_ncu_argv

    def ncu_argv(i, name, extra=(), swap=None):
        req = ProfileRequest(file=str(HERE / "planted_triton.py"), kernel=KERNEL, command=app, nvtx_range="tritonify",
                             output=str(WORK / f"{name}_{i}"))
        argv = build_ncu_argv(req, NCU)
        cut = argv.index("-f")
        argv = argv[:cut] + list(extra) + argv[cut:]
        if swap:
            argv = [swap.get(a, a) for a in argv]
        return argv

    base = [NCU, "--target-processes", "all", "--import-source", "yes", "--clock-control", "none",
            "-k", f"regex:^{KERNEL}$", "--launch-count", "1", "--nvtx", "--nvtx-include", "tritonify/"]
    tri = [sys.executable, "-m", "tritonify", "profile", f"{HERE / 'planted_triton.py'}::{KERNEL}", "--nvtx-range",
           "tritonify", "--format", "json", "--timeout", "300"]
    variants = {
        "bare": lambda i: app,
        "ncu_floor_1metric": lambda i: base + ["--metrics", "gpu__time_duration.sum", "-f", "-o", str(WORK / f"floor_{i}")] + app,
        "ncu_triage": lambda i: ncu_argv(i, "triage"),
        "ncu_triage_cache_none": lambda i: ncu_argv(i, "nocache", ["--cache-control", "none"]),
        "ncu_triage_app_only": lambda i: ncu_argv(i, "apponly", swap={"all": "application-only"}),
        "tritonify": lambda i: tri + ["-o", str(WORK / f"tri_{i}"), "--"] + app,
        "tritonify_sequential": lambda i: [sys.executable, "-c", SEQUENTIAL, *tri[3:], "-o", str(WORK / f"seq_{i}"), "--"] + app,
        "ncu_set_full": lambda i: base + ["--set", "full", "-f", "-o", str(WORK / f"full_{i}")] + app,
        "ncu_set_full_app_only": lambda i: [("application-only" if a == "all" else a) for a in base]
        + ["--set", "full", "-f", "-o", str(WORK / f"fullapp_{i}")] + app,
    }
    only = [v for v in os.environ.get("PROBE_VARIANTS", "").split(",") if v]
    if only:
        variants = {k: v for k, v in variants.items() if k in only}
    res = {"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "kernel": KERNEL, "samples": SAMPLES,
           "ncu": subprocess.run([NCU, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1],
           "runs": {k: [] for k in variants}}
    for i in range(SAMPLES):
        for name, argv in variants.items():
            r = run(argv(i), env, WORK / "stamps.txt")
            if name.startswith("tritonify"):
                try:
                    side = "tri" if name == "tritonify" else "seq"
                    r["sidecar"] = json.loads((WORK / f"{side}_{i}.json").read_text()).get("timings")
                except (OSError, ValueError):
                    pass
            res["runs"][name].append(r)
            print(name, i, r["s"], r["ncu"], r["app"], r.get("sidecar", ""), r["tail"][-300:], flush=True)
    mean = lambda xs: round(sum(xs) / len(xs), 3) if xs else None  # noqa: E731
    res["mean_s"] = {k: mean([r["s"] for r in v]) for k, v in res["runs"].items()}
    if "bare" in res["mean_s"]:
        res["added_s"] = {k: round(v - res["mean_s"]["bare"], 3) for k, v in res["mean_s"].items()}
    (OUT / "probe.json").write_text(json.dumps(res, indent=1))
    print(json.dumps(res["mean_s"]), json.dumps(res.get("added_s")), flush=True)
    # the ncu_report read of one triage report, call kind by call kind, and under cProfile
    rep = WORK / "triage_0.ncu-rep"
    if rep.is_file():
        code = ("import cProfile, pstats, io, json, sys, time\n"
                "from tritonify.tools.ncu.report_reader import dump_report, load_module\n"
                f"mod = load_module({NCU!r}); pr = cProfile.Profile(); t = time.time(); pr.enable()\n"
                f"d = dump_report({str(rep)!r}, [{KERNEL!r}], module=mod)\n"
                "pr.disable(); dt = time.time() - t; s = io.StringIO()\n"
                "pstats.Stats(pr, stream=s).sort_stats('tottime').print_stats(18)\n"
                "a = d['actions'][0]\n"
                "print(json.dumps({'wall_s': dt, 'timings': d['timings'], 'metrics': len(a['metrics']),"
                " 'instanced': {k: len(v['pcs']) for k, v in a['instanced'].items()}, 'pcs': len(a['pcs']),"
                " 'json_bytes': len(json.dumps(d))}))\n"
                "print(s.getvalue())\n")
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
        (OUT / "reader_profile.txt").write_text(p.stdout + p.stderr)
        print(p.stdout[:4000], p.stderr[-1500:], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
