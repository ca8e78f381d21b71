"""Time `tritonify profile` against `ncu --set full` and a bare run, on the same launches (H200).

    OUT=/tmp/out PYTHONPATH=<tritonify importable> python3 gpu/ncu/turnaround.py

For each kernel, interleaved, SAMPLES times: the launcher alone; `tritonify profile` as a user
runs it (defaults: triage collection, ncu following only the Python process, the command
stopped once its launch is profiled); `tritonify profile --keep-running` (the command runs to
its end, as under plain ncu); `ncu --set full` as a user runs it (ncu's default
`--target-processes all`) with the same kernel filter, launch, NVTX range, --import-source and
--clock-control none; and the same `--set full` following only the Python process
(`application-only`), which shows what the collection itself costs. The added time of a run is
its mean wall time minus the mean bare run. `tritonify profile`'s own split (ncu run, reading +
diagnosing, which reader, the reader's warm-up) comes from its sidecar JSON. Writes
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
SAMPLES = {k: int(v) for k, v in (kv.split("=") for kv in os.environ.get("TURN_SAMPLES", "planted_c_uncoalesced=4,control_matmul_fp16=3").split(","))}


def timed(argv, env):
    t0 = time.time()
    p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
    dt = round(time.time() - t0, 2)
    passes = [int(x) for x in re.findall(r"(\d+) passes", p.stdout + p.stderr)]
    return {"s": dt, "rc": p.returncode, "passes": passes, "tail": (p.stderr or p.stdout)[-800:] if p.returncode else ""}


def ncu_base(k):
    return [NCU, "--target-processes", "all", "--import-source", "yes", "--clock-control", "none",
            "-k", f"regex:^{k}$", "--launch-count", "1", "--nvtx", "--nvtx-include", "tritonify/"]


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
                                 capture_output=True, text=True).stdout.strip(), "samples": SAMPLES, "kernels": {}}

    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
    for k in KERNELS:
        tri = [sys.executable, "-m", "tritonify", "profile", f"{HERE / 'planted_triton.py'}::{k}", "--nvtx-range",
               "tritonify", "--format", "json", "--timeout", "300"]
        kinds = {
            "bare": lambda i: launcher(k),
            "tritonify": lambda i: tri + ["-o", str(WORK / f"tri_{k}_{i}"), "--"] + launcher(k),
            "tritonify_keep_running": lambda i: tri + ["--keep-running", "-o", str(WORK / f"keep_{k}_{i}"), "--"] + launcher(k),
            "ncu_set_full": lambda i: ncu_base(k) + ["--set", "full", "-f", "-o", str(WORK / f"full_{k}")] + launcher(k),
            "ncu_set_full_app_only": lambda i: [("application-only" if a == "all" else a) for a in ncu_base(k)]
            + ["--set", "full", "-f", "-o", str(WORK / f"fullapp_{k}")] + launcher(k),
        }
        row = {name: [] for name in kinds}
        row["sidecars"] = {"tritonify": [], "tritonify_keep_running": []}
        # interleaved, so that a drift of the machine touches every kind alike
        for i in range(SAMPLES.get(k, 3)):
            for name, argv in kinds.items():
                r = timed(argv(i), env)
                row[name].append(r)
                if name.startswith("tritonify"):
                    side = WORK / f"{'tri' if name == 'tritonify' else 'keep'}_{k}_{i}.json"
                    try:
                        doc = json.loads(side.read_text())
                        row["sidecars"][name].append({**doc.get("timings", {}), "total_s": doc.get("seconds"),
                                                      "warnings": doc.get("warnings"), "argv": doc.get("ncu_argv", [])[:12]})
                    except (OSError, ValueError):
                        row["sidecars"][name].append({"missing": str(side), "tail": r["tail"]})
                print(k, name, i, r["s"], r["rc"], r["tail"][-300:], flush=True)
        bare = mean([r["s"] for r in row["bare"]])
        row["mean_s"] = {name: round(mean([r["s"] for r in row[name]]), 2) for name in kinds}
        row["added_s"] = {name: round(row["mean_s"][name] - bare, 2) for name in kinds if name != "bare"}
        a = row["added_s"]
        row["ratios"] = {"tritonify_over_full": round(a["tritonify"] / a["ncu_set_full"], 3),
                         "tritonify_over_full_app_only": round(a["tritonify"] / a["ncu_set_full_app_only"], 3),
                         "keep_running_over_full": round(a["tritonify_keep_running"] / a["ncu_set_full"], 3)}
        res["kernels"][k] = row
        print(k, json.dumps(row["mean_s"]), json.dumps(row["added_s"]), json.dumps(row["ratios"]), flush=True)
    (OUT / "turnaround.json").write_text(json.dumps(res, indent=1))
    print(json.dumps({k: v["ratios"] for k, v in res["kernels"].items()}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
