"""Time `tritonify profile` against `ncu --set full` and a bare run, on the same launches (H200).

    OUT=/tmp/out PYTHONPATH=<tritonify importable> python3 gpu/ncu/turnaround.py

For each kernel, interleaved, SAMPLES times: the launcher alone, `tritonify profile` with its
default collection (triage), and (one fewer time) `ncu --set full` with the flags `tritonify
profile` passes (kernel filter, one launch, NVTX range, --import-source, --clock-control none).
The added time of a run is its mean wall time minus the mean bare run. `tritonify profile`'s
own split (ncu run, reading + diagnosing, which reader) comes from its sidecar JSON. Then ncu
alone with the triage collection and with the previous triage's sections (passes). Writes
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
SAMPLES = int(os.environ.get("TURN_SAMPLES", "3"))   # bare and tritonify runs per kernel (full: one fewer)


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
    sys.path.insert(0, os.environ.get("PYTHONPATH", "").split(":")[0])
    from tritonify.diagnostics.ncu.profile_run import TRIAGE_SECTIONS, collection_metrics

    for k in KERNELS:
        row = {"bare": [], "ncu_set_full": [], "tritonify_triage": [], "tritonify_timings": []}
        full = ncu_base(k) + ["--set", "full", "-f", "-o", str(WORK / f"full_{k}")] + launcher(k)
        tri = [sys.executable, "-m", "tritonify", "profile", f"{HERE / 'planted_triton.py'}::{k}", "--nvtx-range",
               "tritonify", "--format", "json", "--timeout", "300"]
        # interleaved, so that a drift of the machine touches every kind alike
        for i in range(SAMPLES):
            row["bare"].append(timed(launcher(k), env)["s"])
            r = timed(tri + ["-o", str(WORK / f"tri_{k}_{i}"), "--"] + launcher(k), env)
            row["tritonify_triage"].append(r)
            try:
                side = json.loads((WORK / f"tri_{k}_{i}.json").read_text())
                row["tritonify_timings"].append({**side.get("timings", {}), "total_s": side.get("seconds"),
                                                 "warnings": side.get("warnings")})
            except (OSError, ValueError):
                pass
            if i < SAMPLES - 1:
                row["ncu_set_full"].append(timed(full, env))
        mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
        bare = mean(row["bare"])
        row["mean_s"] = {"bare": round(bare, 2), "ncu_set_full": round(mean([r["s"] for r in row["ncu_set_full"]]), 2),
                         "tritonify_triage": round(mean([r["s"] for r in row["tritonify_triage"]]), 2)}
        row["added_s"] = {name: round(row["mean_s"][name] - bare, 2) for name in ("ncu_set_full", "tritonify_triage")}
        row["triage_over_full_added"] = round(row["added_s"]["tritonify_triage"] / row["added_s"]["ncu_set_full"], 3)
        res["kernels"][k] = row
        print(k, json.dumps(row["mean_s"]), json.dumps(row["added_s"]), row["triage_over_full_added"], flush=True)
    # ncu alone on the first kernel: the triage collection, then variants that show what the
    # remaining cost is made of (passes, ncu's rules, the injection into child processes)
    k = KERNELS[0]
    tri_args = [a for sec in TRIAGE_SECTIONS for a in ("--section", sec)] + ["--metrics", ",".join(collection_metrics())]
    variants = {
        "triage": tri_args,
        "triage, --apply-rules no": tri_args + ["--apply-rules", "no"],
        "SourceCounters only": ["--section", "SourceCounters"],
    }
    res["ncu_only"] = {}
    for i, (name, extra) in enumerate(variants.items()):
        res["ncu_only"][name] = timed(ncu_base(k) + extra + ["-f", "-o", str(WORK / f"probe_{i}")] + launcher(k), env)
    try:  # every metric the triage asks for by name is in its report
        from tritonify.diagnostics.ncu.report_reader import dump_report

        dump = dump_report(str(WORK / "probe_0.ncu-rep"), ncu=NCU)
        have = set(dump["actions"][0]["metrics"]) if dump["actions"] else set()
        res["triage_missing_metrics"] = [m for m in collection_metrics() if m not in have]
        res["ncu_report_timings"] = dump.get("timings")
    except Exception as exc:
        res["triage_missing_metrics"] = f"could not check: {exc}"
    (OUT / "turnaround.json").write_text(json.dumps(res, indent=1))
    print(json.dumps({k: (v["added_s"], v["triage_over_full_added"]) for k, v in res["kernels"].items()}), flush=True)
    for name, r in res["ncu_only"].items():
        print("ncu only:", name, r["s"], "s", r["passes"], "passes", r["tail"][-200:], flush=True)
    print("missing", res.get("triage_missing_metrics"), res.get("ncu_report_timings"), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
