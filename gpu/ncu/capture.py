"""Capture the ncu fixtures on the H200 machine in one go; everything lands in $OUT.

    python3 gpu/ncu/capture.py            # run from the repository root on the device

Steps (each timed, each logged; a failing step is recorded and the next one still runs):
1. environment (GPU, driver, clocks via nvidia-ml-py; ncu, triton, torch, cupy versions);
2. nvcc builds planted_cuda.cu into a cubin with -lineinfo;
3. one run without ncu (fills Triton's cache, so compilation stays out of the profiled run);
4. one ncu run over every case with the targeted sections (the measured launch of each case is
   selected by its NVTX range), exported as raw CSV (with and without --print-units base),
   details CSV and one source-page CSV per kernel;
5. the same kernel profiled with the targeted sections and with --set full, timed, for the
   section-vs-full cost ratio;
6. the messages ncu prints when no kernel matches and when the launcher crashes.
The exports are packed into $OUT/fixtures.tar.gz.
"""
from __future__ import annotations

import concurrent.futures as cf
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = Path(os.environ.get("OUT", "/tmp/ncu_out"))
WORK = Path("/tmp/ncu_capture")
NCU = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"

SECTIONS = [
    "LaunchStats", "Occupancy", "SpeedOfLight", "WorkloadDistribution", "ComputeWorkloadAnalysis",
    "MemoryWorkloadAnalysis", "MemoryWorkloadAnalysis_Tables", "SourceCounters", "WarpStateStats",
    "SchedulerStats", "InstructionStats", "SpeedOfLight_RooflineChart",
]
# Metrics the detectors read that the sections above may not collect (all checked against
# `ncu --query-metrics --chip gh100`, see shared/ncu/metrics-gh100-ncu2025.3.1.txt).
EXTRA_METRICS = [
    "lts__t_sectors_op_atom.sum", "lts__t_sectors_op_red.sum",
    "smsp__sass_inst_executed_op_global_atom.sum", "smsp__sass_inst_executed_op_global_red.sum",
    "smsp__sass_thread_inst_executed_op_fp64_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
    "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio",
    "smsp__average_thread_inst_executed_per_inst_executed.ratio",
    "smsp__average_thread_inst_executed_pred_on_per_inst_executed.ratio",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active",
    "sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__inst_executed_pipe_tensor_op_gmma.sum",
    "smsp__sass_inst_executed_op_shared_ld.sum", "smsp__sass_inst_executed_op_shared_st.sum",
    "smsp__sass_inst_executed_op_local_ld.sum", "smsp__sass_inst_executed_op_local_st.sum",
    "smsp__sass_inst_executed_op_global_ld.sum", "smsp__sass_inst_executed_op_global_st.sum",
    "smsp__sass_inst_executed_op_ldgsts.sum",
    "smsp__inst_executed.sum", "smsp__sass_thread_inst_executed.sum",
    "smsp__sass_thread_inst_executed_op_fp32_pred_on.sum",
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_membar_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_gmma_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio",
    "smsp__average_warp_latency_per_inst_issued.ratio",
    "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "sm__cycles_active.max", "sm__cycles_active.avg", "sm__cycles_active.min",
]
# The sections the detectors need when the metrics below are collected explicitly: the lean set.
LEAN_SECTIONS = ["LaunchStats", "Occupancy", "SpeedOfLight", "MemoryWorkloadAnalysis",
                 "MemoryWorkloadAnalysis_Tables", "SourceCounters", "WarpStateStats"]
LEAN_EXTRA = ["lts__throughput.avg.pct_of_peak_sustained_elapsed",
              "l1tex__throughput.avg.pct_of_peak_sustained_active",
              "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
              "smsp__issue_active.avg.per_cycle_active",
              "smsp__average_warps_issue_stalled_drain_per_issue_active.ratio"]
LOG: list[dict] = []


def step(name, argv, *, timeout=300, env=None, stdout_path=None):
    """Run one command (argument list), record its time and exit status, never raise."""
    t0 = time.time()
    rec = {"step": name, "argv": argv}
    try:
        with open(stdout_path, "wb") if stdout_path else open(os.devnull, "wb") as sink:
            p = subprocess.run(argv, stdout=sink if stdout_path else subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=timeout, env=env)
        rec.update(rc=p.returncode, stderr_tail=p.stderr.decode(errors="replace")[-4000:])
        if not stdout_path:
            rec["stdout_tail"] = p.stdout.decode(errors="replace")[-30000:]
    except subprocess.TimeoutExpired:
        rec.update(rc="timeout")
    except Exception as exc:  # recorded, the capture goes on
        rec.update(rc=f"error: {exc}")
    rec["seconds"] = round(time.time() - t0, 2)
    LOG.append(rec)
    print(f"[{rec['seconds']:7.1f}s] {name}: rc={rec['rc']}", flush=True)
    return rec


def environment() -> dict:
    info = {"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    try:
        from tritonify.infra.nvml import device_state

        state = device_state(0)
        info["gpu"] = state.pop("name")
        info.update(state)
    except Exception as exc:
        info["nvml_error"] = f"{type(exc).__name__}: {exc}"
    for mod in ("torch", "triton", "cupy"):
        try:
            info[mod] = __import__(mod).__version__
        except Exception as exc:
            info[mod] = f"unavailable: {exc}"
    try:
        info["ncu"] = subprocess.run([NCU, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    except Exception as exc:
        info["ncu"] = f"unavailable: {exc}"
    return info


def ncu_profile(report: Path, cases: list[str] | None, *, full=False, kernel=None, env=None, name="profile",
                sections=None):
    argv = [NCU, "--nvtx", "--nvtx-include", "tritonify/", "--import-source", "yes",
            "--clock-control", "none", "--target-processes", "all", "-f", "-o", str(report)]
    if full:
        argv += ["--set", "full"]
    else:
        for sec in sections or SECTIONS:
            argv += ["--section", sec]
        extra = EXTRA_METRICS + (LEAN_EXTRA if sections == LEAN_SECTIONS else [])
        argv += ["--metrics", ",".join(extra)]
    if kernel:
        argv += ["-k", f"regex:^{kernel}$"]
    argv += [sys.executable, str(HERE / "run_cases.py")]
    if cases:
        argv += ["--only", ",".join(cases)]
    return step(name, argv, timeout=300, env=env)


def passes(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"(\d+) passes", text or "")]


def lean_main() -> int:
    """Second capture: every case with the lean sections (to check the detectors on them), and the
    cost of lean vs targeted vs --set full on one kernel."""
    OUT.mkdir(parents=True, exist_ok=True)
    if WORK.exists():
        shutil.rmtree(WORK)
    fx = WORK / "fixtures_lean"
    fx.mkdir(parents=True)
    env = dict(os.environ, PYTHONUNBUFFERED="1", TRITON_CACHE_DIR=str(WORK / "triton_cache"))
    t_start = time.time()
    cubin = WORK / "planted_cuda.cubin"
    step("nvcc", ["nvcc", "-cubin", "-lineinfo", "-arch=sm_90", "-o", str(cubin), str(HERE / "planted_cuda.cu")])
    if cubin.is_file():
        env["PLANTED_CUBIN"] = str(cubin)
    step("warm run (no ncu)", [sys.executable, str(HERE / "run_cases.py")], env=env, timeout=300)
    rep = WORK / "lean.ncu-rep"
    prof = ncu_profile(rep, None, env=env, name="ncu lean, all cases", sections=LEAN_SECTIONS)
    (fx / "ncu_lean_all.log").write_text(prof.get("stdout_tail", "") + "\n--stderr--\n" + prof.get("stderr_tail", ""))
    if rep.is_file():
        imp = [NCU, "--import", str(rep), "--csv"]
        step("raw base units", imp + ["--page", "raw", "--print-units", "base"], stdout_path=fx / "raw_lean.csv")
        step("details", imp + ["--page", "details"], stdout_path=fx / "details_lean.csv")
    cost = {}
    kern = "planted_c_uncoalesced"
    for label, full, sections in (("lean", False, LEAN_SECTIONS), ("targeted", False, SECTIONS), ("full", True, None)):
        r = ncu_profile(WORK / f"cost_{label}.ncu-rep", [kern], full=full, kernel=kern, env=env,
                        name=f"{kern}: {label}", sections=sections)
        cost[f"{label}_s"] = r["seconds"]
        cost[f"{label}_passes"] = passes(r.get("stdout_tail", "") + r.get("stderr_tail", ""))
    only = step(f"{kern}: no ncu", [sys.executable, str(HERE / "run_cases.py"), "--only", kern], env=env)
    cost["no_ncu_s"] = only["seconds"]
    (fx / "cost_lean.json").write_text(json.dumps(cost, indent=1))
    (fx / "steps_lean.json").write_text(json.dumps({"total_s": round(time.time() - t_start, 1), "steps": LOG}, indent=1))
    with tarfile.open(OUT / "fixtures_lean.tar.gz", "w:gz") as tar:
        tar.add(fx, arcname="fixtures_lean")
    print(json.dumps(cost), flush=True)
    return 0


def main() -> int:
    if "--lean" in sys.argv:
        return lean_main()
    OUT.mkdir(parents=True, exist_ok=True)
    if WORK.exists():
        shutil.rmtree(WORK)
    fx = WORK / "fixtures"
    (fx / "source").mkdir(parents=True)
    env = dict(os.environ, PYTHONUNBUFFERED="1", TRITON_CACHE_DIR=str(WORK / "triton_cache"))
    t_start = time.time()

    envinfo = environment()
    (fx / "env.json").write_text(json.dumps(envinfo, indent=1))
    print(json.dumps(envinfo), flush=True)
    cubin = WORK / "planted_cuda.cubin"
    step("nvcc", ["nvcc", "-cubin", "-lineinfo", "-arch=sm_90", "-o", str(cubin), str(HERE / "planted_cuda.cu")])
    if cubin.is_file():
        env["PLANTED_CUBIN"] = str(cubin)
    step("manifest", [sys.executable, str(HERE / "run_cases.py"), "--list", "--manifest", str(fx / "manifest.json")])
    base = step("warm run (no ncu)", [sys.executable, str(HERE / "run_cases.py")], env=env, timeout=300)

    rep = WORK / "planted.ncu-rep"
    prof = ncu_profile(rep, None, env=env, name="ncu targeted, all cases")
    (fx / "ncu_targeted_all.log").write_text((prof.get("stdout_tail", "") + "\n--stderr--\n" + prof.get("stderr_tail", "")))
    if not rep.is_file():
        print("no report; retrying without the extra metrics", flush=True)
        EXTRA_METRICS.clear()
        EXTRA_METRICS.append("smsp__inst_executed.sum")
        prof = ncu_profile(rep, None, env=env, name="ncu targeted, all cases (retry)")
        (fx / "ncu_targeted_retry.log").write_text(prof.get("stdout_tail", "") + "\n--stderr--\n" + prof.get("stderr_tail", ""))
    if rep.is_file():
        imp = [NCU, "--import", str(rep), "--csv"]
        step("raw base units", imp + ["--page", "raw", "--print-units", "base"], stdout_path=fx / "raw_base.csv")
        step("raw", imp + ["--page", "raw"], stdout_path=fx / "raw.csv")
        step("details", imp + ["--page", "details"], stdout_path=fx / "details.csv")
        step("details ids", imp + ["--page", "details", "--print-metric-name", "name"], stdout_path=fx / "details_names.csv")
        kernels = [r["kernel"] for r in json.loads((fx / "manifest.json").read_text())]
        with cf.ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda k: step(f"source {k}", imp + ["--page", "source", "--print-source", "cuda,sass",
                                                              "-k", f"regex:^{k}$"],
                                         stdout_path=fx / "source" / f"{k}.csv"), kernels))
        (fx / "report_bytes.txt").write_text(str(rep.stat().st_size))

    # Cost of the targeted sections against --set full, same kernel, same process shape.
    cost = {}
    for kern in ("planted_c_uncoalesced",):
        runs = {}
        only = step(f"{kern}: no ncu", [sys.executable, str(HERE / "run_cases.py"), "--only", kern], env=env)
        runs["no_ncu_s"] = only["seconds"]
        for label, full in (("targeted", False), ("full", True)):
            r = ncu_profile(WORK / f"cost_{label}_{kern}.ncu-rep", [kern], full=full, kernel=kern, env=env,
                            name=f"{kern}: {label}")
            runs[f"{label}_s"] = r["seconds"]
            runs[f"{label}_passes"] = passes(r.get("stdout_tail", "") + r.get("stderr_tail", ""))
            (fx / f"cost_{label}_{kern}.log").write_text(r.get("stdout_tail", "") + "\n--stderr--\n" + r.get("stderr_tail", ""))
        cost[kern] = runs
    fullrep = WORK / "cost_full_planted_c_uncoalesced.ncu-rep"
    if fullrep.is_file():
        step("raw full", [NCU, "--import", str(fullrep), "--csv", "--page", "raw", "--print-units", "base"],
             stdout_path=fx / "raw_full_planted_c_uncoalesced.csv")
        step("details full", [NCU, "--import", str(fullrep), "--csv", "--page", "details"],
             stdout_path=fx / "details_full_planted_c_uncoalesced.csv")
    (fx / "cost.json").write_text(json.dumps(cost, indent=1))

    # What ncu prints on the errors the profile command classifies.
    errs = {}
    r = step("no kernel matched", [NCU, "-k", "regex:^no_such_kernel$", sys.executable, "-c", "print('no kernels here')"])
    errs["no_kernel"] = r
    r = step("launcher crash", [NCU, sys.executable, "-c", "import sys; sys.stderr.write('boom: planted crash\\n'); sys.exit(3)"])
    errs["crash"] = r
    (fx / "ncu_messages.json").write_text(json.dumps(errs, indent=1))

    (fx / "steps.json").write_text(json.dumps({"total_s": round(time.time() - t_start, 1), "steps": LOG,
                                              "baseline_rc": base.get("rc")}, indent=1))
    with tarfile.open(OUT / "fixtures.tar.gz", "w:gz") as tar:
        tar.add(fx, arcname="fixtures")
    if rep.is_file() and rep.stat().st_size < 15 * (1 << 20):
        shutil.copy(rep, OUT / "planted.ncu-rep")
    print(json.dumps(cost), flush=True)
    print(f"done in {time.time() - t_start:.0f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
