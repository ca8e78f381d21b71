"""What `ncu_report`'s SASS lookups cost, and which processes ncu injects into (H200).

    OUT=/tmp/out PYTHONPATH=<tritonify importable> python3 gpu/ncu/reader_probe.py

1. Captures the triage collection of two kernels (63 and ~450 SASS instructions) with
   `--target-processes all`, keeping every `==PROF== Connected to process` line (the processes
   ncu injected into, and when).
2. For each report, in a fresh process: `sass_by_pc` call by call (the first calls against the
   rest), `source_info` likewise; then the same after a first report was read in that process
   (is the cost per process, per report or per call?).
3. The PCs split over 4 processes, each loading the report itself.
Writes $OUT/reader_probe.json.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = Path(os.environ.get("OUT", "/tmp/ncu_out"))
NCU = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
WORK = Path("/tmp/ncu_reader_probe")
KERNELS = ("planted_c_uncoalesced", "control_matmul_fp16")

TIMER = r"""
import json, sys, time
from tritonify.tools.ncu.report_reader import load_module
mod = load_module(sys.argv[1])
out = {}
def pcs_of(action):
    m = action.metric_by_name("inst_executed")
    ids = m.correlation_ids()
    return [ids.as_uint64(i) for i in range(m.num_instances())]
for n, path in enumerate(sys.argv[2:]):
    t = time.time(); ctx = mod.load_report(path); action = ctx.range_by_idx(0).action_by_idx(0)
    load = time.time() - t
    pcs = pcs_of(action)
    sass = []
    for pc in pcs:
        t = time.time(); action.sass_by_pc(pc); sass.append(time.time() - t)
    info = []
    for pc in pcs:
        t = time.time(); action.source_info(pc); info.append(time.time() - t)
    again = []
    for pc in pcs[:10]:
        t = time.time(); action.sass_by_pc(pc); again.append(time.time() - t)
    out[f"{n}:{path}"] = {"load_s": round(load, 4), "pcs": len(pcs), "sass_first5_s": [round(x, 4) for x in sass[:5]],
                          "sass_rest_mean_s": round(sum(sass[5:]) / max(1, len(sass) - 5), 5), "sass_total_s": round(sum(sass), 4),
                          "sass_again_mean_s": round(sum(again) / max(1, len(again)), 5),
                          "info_first_s": round(info[0], 4) if info else None, "info_total_s": round(sum(info), 4)}
print(json.dumps(out))
"""

SLICE = r"""
import json, sys, time
from tritonify.tools.ncu.report_reader import load_module
t0 = time.time(); mod = load_module(sys.argv[1]); imp = time.time() - t0
k, n = int(sys.argv[3]), int(sys.argv[4])
sys.stdin.readline()                      # go: the import is done before the clock starts
t = time.time(); action = mod.load_report(sys.argv[2]).range_by_idx(0).action_by_idx(0)
m = action.metric_by_name("inst_executed"); ids = m.correlation_ids()
pcs = [ids.as_uint64(i) for i in range(m.num_instances())][k::n]
texts = {str(pc): action.sass_by_pc(pc) for pc in pcs}
print(json.dumps({"import_s": imp, "s": time.time() - t, "n": len(texts)}))
"""


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir()
    env = dict(os.environ, PYTHONUNBUFFERED="1", TRITON_CACHE_DIR=str(WORK / "triton_cache"))
    sys.path.insert(0, os.environ.get("PYTHONPATH", "").split(":")[0])
    from tritonify.tools.ncu.profile_run import ProfileRequest, build_ncu_argv

    res = {"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "captures": {}}
    app = [sys.executable, str(HERE / "run_cases.py"), "--only"]
    subprocess.run(app + [",".join(KERNELS)], env=env)  # compile once
    reports = []
    for k in KERNELS:
        req = ProfileRequest(file=str(HERE / "planted_triton.py"), kernel=k, command=app + [k], nvtx_range="tritonify",
                             output=str(WORK / k))
        t0 = time.time()
        proc = subprocess.Popen(build_ncu_argv(req, NCU), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        lines = []
        for line in proc.stdout:
            if line.startswith("==PROF==") or "passes" in line:
                lines.append(f"{time.time() - t0:.3f} {line.strip()}")
        proc.wait()
        res["captures"][k] = {"s": round(time.time() - t0, 3), "rc": proc.returncode, "lines": lines}
        print(k, res["captures"][k]["s"], "\n  " + "\n  ".join(lines), flush=True)
        reports.append(str(WORK / f"{k}.ncu-rep"))
    for order in (reports, reports[::-1]):
        p = subprocess.run([sys.executable, "-c", TIMER, NCU, *order], capture_output=True, text=True, env=env, timeout=300)
        res.setdefault("sass_calls", []).append(json.loads(p.stdout) if p.returncode == 0 else p.stderr[-1500:])
        print(json.dumps(res["sass_calls"][-1], indent=1), flush=True)
    for rep in reports:
        procs = [subprocess.Popen([sys.executable, "-c", SLICE, NCU, rep, str(k), "4"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, env=env) for k in range(4)]
        time.sleep(3)                     # every child has imported ncu_report
        t0 = time.time()
        outs = [p.communicate("go\n", timeout=300)[0] for p in procs]
        res.setdefault("four_slices", {})[rep] = {"wall_s": round(time.time() - t0, 3),
                                                   "children": [json.loads(o) if o.strip() else None for o in outs]}
        print("4 slices", rep, json.dumps(res["four_slices"][rep]), flush=True)
    (OUT / "reader_probe.json").write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
