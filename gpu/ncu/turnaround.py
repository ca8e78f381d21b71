"""Time `tritonify profile` against `ncu --set full` and a bare run, on the same launches (H200).

    OUT=/tmp/out PYTHONPATH=<tritonify importable> python3 gpu/ncu/turnaround.py

For each kernel: the launcher alone (twice), `ncu --set full` with the flags `tritonify profile`
passes (kernel filter, one launch, NVTX range, --import-source, --clock-control none), then
`tritonify profile` with its default collection (triage), with --collect targeted. The added time of a run is its wall time minus the mean bare run. Writes
$OUT/turnaround.json.
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
KERNELS = ("planted_c_uncoalesced", "control_matmul_fp16")
WORK = Path("/tmp/ncu_turn")


def timed(argv, env):
    t0 = time.time()
    p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
    dt = round(time.time() - t0, 2)
    passes = [int(x) for x in re.findall(r"(\d+) passes", p.stdout + p.stderr)]
    return {"s": dt, "rc": p.returncode, "passes": passes, "tail": (p.stderr or p.stdout)[-800:] if p.returncode else ""}


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir()
    env = dict(os.environ, PYTHONUNBUFFERED="1", TRITON_CACHE_DIR=str(WORK / "triton_cache"))
    launcher = lambda k: [sys.executable, str(HERE / "run_cases.py"), "--only", k]  # noqa: E731
    subprocess.run([sys.executable, str(HERE / "run_cases.py"), "--only", ",".join(KERNELS)], env=env)  # compile
    res = {"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "ncu": subprocess.run([NCU, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1],
           "gpu": subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                                 capture_output=True, text=True).stdout.strip(), "kernels": {}}
    for k in KERNELS:
        row = {"bare": [timed(launcher(k), env)["s"] for _ in range(2)]}
        full = [NCU, "--target-processes", "all", "--import-source", "yes", "--clock-control", "none",
                "-k", f"regex:^{k}$", "--launch-count", "1", "--nvtx", "--nvtx-include", "tritonify/",
                "--set", "full", "-f", "-o", str(WORK / f"full_{k}")] + launcher(k)
        row["ncu_set_full"] = timed(full, env)
        tri = [sys.executable, "-m", "tritonify", "profile", f"{HERE / 'planted_triton.py'}::{k}", "--nvtx-range",
               "tritonify", "--format", "json", "--timeout", "300"]
        for label, extra in (("tritonify_triage", []), ("tritonify_targeted", ["--collect", "targeted"])):
            row[label] = timed(tri + extra + ["-o", str(WORK / f"{label}_{k}"), "--"] + launcher(k), env)
        row["bare"].append(timed(launcher(k), env)["s"])
        bare = sum(row["bare"]) / len(row["bare"])
        row["added_s"] = {name: round(row[name]["s"] - bare, 2)
                          for name in ("ncu_set_full", "tritonify_triage", "tritonify_targeted")}
        row["triage_over_full_added"] = round(row["added_s"]["tritonify_triage"] / row["added_s"]["ncu_set_full"], 3)
        res["kernels"][k] = row
        print(k, json.dumps(row["added_s"]), row["triage_over_full_added"], flush=True)
    # the triage capture's passes
    for k in KERNELS[:1]:
        argv = [NCU, "--target-processes", "all", "--import-source", "yes", "--clock-control", "none",
                "-k", f"regex:^{k}$", "--launch-count", "1", "--nvtx", "--nvtx-include", "tritonify/", "-f",
                "-o", str(WORK / "triage_probe")]
        sys.path.insert(0, os.environ.get("PYTHONPATH", "").split(":")[0])
        from tritonify.diagnostics.ncu.profile_run import TRIAGE_SECTIONS, pattern_metrics

        for sec in TRIAGE_SECTIONS:
            argv += ["--section", sec]
        argv += ["--metrics", ",".join(pattern_metrics())]
        res["triage_ncu_only"] = timed(argv + launcher(k), env)
    (OUT / "turnaround.json").write_text(json.dumps(res, indent=1))
    print(json.dumps({k: (v["added_s"], v["triage_over_full_added"]) for k, v in res["kernels"].items()}), flush=True)
    print("triage passes", res["triage_ncu_only"]["passes"], res["triage_ncu_only"]["s"], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
