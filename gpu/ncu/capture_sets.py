"""Capture every planted kernel and control with three kinds of report, and time the turnaround.

    OUT=/tmp/out python3 gpu/ncu/capture_sets.py      # from the repository root, on the H200

1. environment, nvcc build of planted_cuda.cu (-lineinfo), one warm run (Triton's cache);
2. one ncu run over all cases per capture kind: Tritonify's own sections (`profile_run.SECTIONS` +
   its extra metrics), `--set full`, `--set detailed`; each exported as raw CSV (base units),
   details CSV and one source page per kernel (exports run in threads while the next capture runs);
3. turnaround, same launches (run_cases.py --only K): a bare run, `ncu --set full` with the flags
   `tritonify profile` uses, and `tritonify profile` itself; plus single-section runs that show
   where the passes and seconds go, the CSV exports timed one by one, and ncu's Python report
   interface (extras/python/ncu_report) timed reading the same report;
4. everything packed into $OUT/fixtures_sets.tar.gz; the log of steps in $OUT/steps.json.
A step past the deadline is skipped (recorded), so the pack always happens.
"""
from __future__ import annotations

import concurrent.futures as cf
import glob
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
ROOT = HERE.parents[1]
OUT = Path(os.environ.get("OUT", "/tmp/ncu_out"))
WORK = Path("/tmp/ncu_sets")
FX = WORK / "fixtures_sets"
NCU = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
DEADLINE = float(os.environ.get("CAPTURE_DEADLINE_S", "530"))
T0 = time.time()
LOG: list[dict] = []


def _own_sections():
    sys.path.insert(0, "/tmp/tritonify_path")
    from tritonify.tools.ncu import profile_run

    return list(profile_run.SECTIONS), list(profile_run.pattern_metrics())


def step(name, argv, *, timeout=300, env=None, stdout_path=None, late_ok=False):
    rec = {"step": name, "argv": argv if isinstance(argv, list) else str(argv)}
    if not late_ok and time.time() - T0 > DEADLINE:
        rec.update(rc="skipped: deadline", seconds=0)
        LOG.append(rec)
        print(f"[skip] {name}", flush=True)
        return rec
    t0 = time.time()
    timeout = max(10, min(timeout, DEADLINE + 50 - (t0 - T0)))
    try:
        with open(stdout_path, "wb") if stdout_path else open(os.devnull, "wb") as sink:
            p = subprocess.run(argv, stdout=sink if stdout_path else subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=timeout, env=env)
        rec.update(rc=p.returncode, stderr_tail=p.stderr.decode(errors="replace")[-3000:])
        if not stdout_path:
            rec["stdout_tail"] = p.stdout.decode(errors="replace")[-20000:]
    except subprocess.TimeoutExpired:
        rec.update(rc="timeout")
    except Exception as exc:
        rec.update(rc=f"error: {exc}")
    rec["seconds"] = round(time.time() - t0, 2)
    LOG.append(rec)
    print(f"[{time.time() - T0:6.0f}s +{rec['seconds']:6.1f}s] {name}: rc={rec['rc']}", flush=True)
    return rec


def passes(rec) -> list[int]:
    return [int(x) for x in re.findall(r"(\d+) passes", (rec.get("stdout_tail") or "") + (rec.get("stderr_tail") or ""))]


def base_argv(report: Path, kernel: str | None = None, nvtx=True, import_source=True):
    argv = [NCU, "--target-processes", "all", "--clock-control", "none", "-f", "-o", str(report.with_suffix(""))]
    if import_source:
        argv += ["--import-source", "yes"]
    if nvtx:
        argv += ["--nvtx", "--nvtx-include", "tritonify/"]
    if kernel:
        argv += ["-k", f"regex:^{kernel}$", "--launch-count", "1"]
    return argv


def launcher(cases=None):
    argv = [sys.executable, str(HERE / "run_cases.py")]
    return argv + (["--only", ",".join(cases)] if cases else [])


def collection(kind, own):
    sections, extra = own
    if kind == "full":
        return ["--set", "full"]
    if kind == "detailed":
        return ["--set", "detailed"]
    if kind == "own":
        return [a for s in sections for a in ("--section", s)] + ["--metrics", ",".join(extra)]
    if kind.startswith("sec:"):
        return [a for s in kind[4:].split("+") for a in ("--section", s)]
    if kind == "extra":
        return ["--metrics", ",".join(extra)]
    raise ValueError(kind)


def export_all(pool, report: Path, kind: str, kernels: list[str]):
    imp = [NCU, "--import", str(report), "--csv"]
    (FX / kind / "source").mkdir(parents=True, exist_ok=True)
    futs = [pool.submit(step, f"{kind}: raw", imp + ["--page", "raw", "--print-units", "base"],
                        stdout_path=FX / kind / "raw.csv", late_ok=True),
            pool.submit(step, f"{kind}: details", imp + ["--page", "details"],
                        stdout_path=FX / kind / "details.csv", late_ok=True)]
    for k in kernels:
        futs.append(pool.submit(step, f"{kind}: source {k}", imp + ["--page", "source", "--print-source", "cuda,sass",
                                                                   "-k", f"regex:^{k}$"],
                                stdout_path=FX / kind / "source" / f"{k}.csv", late_ok=True))
    return futs


def probe_ncu_report(report: Path) -> dict:
    """Time ncu's Python report interface on one report, and record which calls work."""
    out: dict = {}
    dirs = sorted(glob.glob(str(Path(os.path.realpath(NCU)).parent / "extras" / "python")) +
                  glob.glob("/usr/local/cuda*/nsight-compute*/extras/python") +
                  glob.glob("/opt/nvidia/nsight-compute/*/extras/python"))
    out["dirs"] = dirs
    if not dirs:
        return out
    sys.path.insert(0, dirs[0])
    try:
        t0 = time.time()
        import ncu_report

        out["import_s"] = round(time.time() - t0, 3)
        t0 = time.time()
        ctx = ncu_report.load_report(str(report))
        out["load_s"] = round(time.time() - t0, 3)
        t0 = time.time()
        n = 0
        first = None
        for r in range(ctx.num_ranges()):
            rng = ctx.range_by_idx(r)
            for a in range(rng.num_actions()):
                act = rng.action_by_idx(a)
                vals = {}
                for name in act.metric_names():
                    m = act.metric_by_name(name)
                    try:
                        vals[name] = m.value() if m.num_instances() == 0 else ("instanced", m.num_instances())
                    except Exception as exc:
                        vals[name] = f"err {exc}"
                n += 1
                if first is None:
                    first = act
                    out["first_kernel"] = act.name()
                    out["first_metric_count"] = len(vals)
        out["read_all_metrics_s"] = round(time.time() - t0, 3)
        out["actions"] = n
        if first is not None:
            out["action_dir"] = [x for x in dir(first) if not x.startswith("_")]
            try:
                rules = first.rule_results_as_dicts()
                out["rules_count"] = len(rules)
                out["rule_keys"] = sorted(rules[0].keys()) if rules else []
            except Exception as exc:
                out["rules_err"] = str(exc)
            try:
                m = first.metric_by_name("inst_executed")
                out["inst_executed_instances"] = m.num_instances()
                cid = m.correlation_ids()
                out["corr_dir"] = [x for x in dir(cid) if not x.startswith("_")]
                pcs = [cid.as_uint64(i) for i in range(min(5, cid.num_instances()))]
                out["pcs"] = pcs
                try:
                    out["source_info"] = [str(first.source_info(pc)) for pc in pcs]
                    si = first.source_info(pcs[0])
                    out["source_info_dir"] = [x for x in dir(si) if not x.startswith("_")]
                    out["source_info_0"] = [si.file_name(), si.line()]
                except Exception as exc:
                    out["source_info_err"] = str(exc)
                try:
                    out["sass_0"] = [first.sass_by_pc(pc) for pc in pcs]
                except Exception as exc:
                    out["sass_err"] = str(exc)
            except Exception as exc:
                out["instanced_err"] = str(exc)
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
    return out


def ptx_kinds(cache: Path) -> dict:
    """mma.sync vs wgmma in the PTX Triton wrote for the dot kernels."""
    res = {}
    for ptx in glob.glob(str(cache / "**" / "*.ptx"), recursive=True):
        name = Path(ptx).stem
        if "dot" in name or "matmul" in name or "mm" in name or "pipelin" in name or "overstaged" in name:
            text = Path(ptx).read_text(errors="replace")
            res[name] = {"mma.sync": text.count("mma.sync"), "wgmma": text.count("wgmma.mma_async")}
    for cub in glob.glob(str(cache / "**" / "*.cubin"), recursive=True):
        if "hmma" in cub or "dot" in cub:
            r = subprocess.run(["cuobjdump", "-sass", cub], capture_output=True, text=True)
            res[Path(cub).stem + ".sass"] = {"HMMA": r.stdout.count("HMMA"), "HGMMA": r.stdout.count("HGMMA")}
    return res


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(WORK, ignore_errors=True)
    FX.mkdir(parents=True)
    env = dict(os.environ, PYTHONUNBUFFERED="1", TRITON_CACHE_DIR=str(WORK / "triton_cache"),
               PYTHONPATH="/tmp/tritonify_path")
    summary: dict = {"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    try:
        own = _own_sections()
        summary["own_sections"], summary["own_metrics"] = own
        summary["ncu"] = subprocess.run([NCU, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
        summary["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm",
                                                "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
        for mod in ("torch", "triton", "cupy"):
            try:
                summary[mod] = __import__(mod).__version__
            except Exception as exc:
                summary[mod] = f"unavailable: {exc}"
        print(json.dumps(summary), flush=True)
        cubin = WORK / "planted_cuda.cubin"
        r = step("nvcc", ["nvcc", "-cubin", "-lineinfo", "-arch=sm_90", "-Xptxas", "-v", "-o", str(cubin),
                          str(HERE / "planted_cuda.cu")])
        (FX / "ptxas.txt").write_text(r.get("stderr_tail", "") + r.get("stdout_tail", ""))
        if cubin.is_file():
            env["PLANTED_CUBIN"] = str(cubin)
        step("manifest", launcher() + ["--list", "--manifest", str(FX / "manifest.json")])
        warm = step("warm run (no ncu)", launcher(), env=env, timeout=300)
        (FX / "warm.log").write_text(warm.get("stdout_tail", "") + "\n--stderr--\n" + warm.get("stderr_tail", ""))
        summary["ptx"] = ptx_kinds(WORK / "triton_cache")
        kernels = [m["kernel"] for m in json.loads((FX / "manifest.json").read_text())]
        pool = cf.ThreadPoolExecutor(6)
        futs = []
        for kind in ("own", "full", "detailed"):
            rep = WORK / f"{kind}.ncu-rep"
            (FX / kind).mkdir(exist_ok=True)
            r = step(f"capture {kind}", base_argv(rep) + collection(kind, own) + launcher(), env=env, timeout=400)
            (FX / kind / "ncu.log").write_text(r.get("stdout_tail", "") + "\n--stderr--\n" + r.get("stderr_tail", ""))
            summary[f"capture_{kind}_s"] = r["seconds"]
            if rep.is_file():
                futs += export_all(pool, rep, kind, kernels)
            if kind == "own":
                cf.wait(futs)   # the turnaround below must not share the CPU with exports
                turnaround(env, own, summary)
        cf.wait(futs)
        pool.shutdown()
        explore(env, own, summary)
        if (WORK / "own.ncu-rep").is_file():
            summary["ncu_report"] = probe_ncu_report(WORK / "own.ncu-rep")
    except Exception as exc:
        import traceback

        summary["error"] = traceback.format_exc()
        print(summary["error"], flush=True)
    finally:
        summary["total_s"] = round(time.time() - T0, 1)
        (FX / "summary.json").write_text(json.dumps(summary, indent=1, default=str))
        (FX / "steps.json").write_text(json.dumps(LOG, indent=1, default=str))
        for p in FX.rglob("*.csv"):
            subprocess.run(["gzip", "-9", "-f", str(p)])
        with tarfile.open(OUT / "fixtures_sets.tar.gz", "w:gz") as tar:
            tar.add(FX, arcname="fixtures_sets")
        shutil.copy(FX / "summary.json", OUT / "summary.json")
        print(json.dumps({k: v for k, v in summary.items() if k.startswith(("turn", "explore", "capture"))}, default=str),
              flush=True)
        print(f"done in {time.time() - T0:.0f}s", flush=True)
    return 0


TURN_KERNELS = ("planted_c_uncoalesced", "control_matmul_fp16", "planted_l_fp64")


def turnaround(env, own, summary):
    res = {}
    for k in TURN_KERNELS:
        row = {}
        bare = [step(f"turn {k}: bare {i}", launcher([k]), env=env)["seconds"] for i in range(2)]
        row["bare_s"] = bare
        r = step(f"turn {k}: ncu --set full", base_argv(WORK / f"t_full_{k}.ncu-rep", k) + ["--set", "full"] + launcher([k]),
                 env=env)
        row["ncu_full_s"], row["ncu_full_passes"] = r["seconds"], passes(r)
        tri = [sys.executable, "-m", "tritonify", "profile", f"{HERE / 'planted_triton.py'}::{k}",
               "--nvtx-range", "tritonify", "--format", "json", "-o", str(WORK / f"t_tri_{k}"), "--timeout", "300",
               "--", *launcher([k])]
        r = step(f"turn {k}: tritonify profile", tri, env=env)
        row["tritonify_s"], row["tritonify_rc"] = r["seconds"], r["rc"]
        try:
            doc = json.loads(r.get("stdout_tail") or "{}")
            row["tritonify_patterns"] = [p["pattern"] for L in doc.get("launches", []) for p in L.get("patterns", [])]
        except Exception:
            row["tritonify_stdout_tail"] = (r.get("stdout_tail") or "")[-500:]
            row["tritonify_stderr_tail"] = (r.get("stderr_tail") or "")[-1500:]
        res[k] = row
    summary["turnaround"] = res


EXPLORE = ("sec:LaunchStats+Occupancy+SpeedOfLight", "sec:SourceCounters", "sec:WarpStateStats", "extra",
           "sec:MemoryWorkloadAnalysis_Tables", "sec:ComputeWorkloadAnalysis+InstructionStats",
           "sec:LaunchStats+Occupancy+SpeedOfLight+WarpStateStats+SourceCounters", "own")


def explore(env, own, summary):
    k = "planted_c_uncoalesced"
    res = {}
    for kind in EXPLORE:
        rep = WORK / f"x_{len(res)}.ncu-rep"
        r = step(f"explore {kind}", base_argv(rep, k) + collection(kind, own) + launcher([k]), env=env)
        res[kind] = {"s": r["seconds"], "passes": passes(r)}
    r = step("explore own, --import-source no", base_argv(WORK / "x_nosrc.ncu-rep", k, import_source=False)
             + collection("own", own) + launcher([k]), env=env)
    res["own_no_import_source"] = {"s": r["seconds"], "passes": passes(r)}
    r = step("explore own, --cache-control none", base_argv(WORK / "x_cc.ncu-rep", k) + ["--cache-control", "none"]
             + collection("own", own) + launcher([k]), env=env)
    res["own_cache_control_none"] = {"s": r["seconds"], "passes": passes(r)}
    rep = WORK / f"x_{len(EXPLORE) - 1}.ncu-rep"
    if rep.is_file():
        imp = [NCU, "--import", str(rep), "--csv"]
        res["export_raw_s"] = step("export raw", imp + ["--page", "raw", "--print-units", "base"])["seconds"]
        res["export_details_s"] = step("export details", imp + ["--page", "details"])["seconds"]
        res["export_source_s"] = step("export source", imp + ["--page", "source", "--print-source", "cuda,sass",
                                                               "-k", f"regex:^{k}$"])["seconds"]
        res["ncu_report_one_kernel"] = probe_ncu_report(rep)
    summary["explore"] = res


if __name__ == "__main__":
    sys.exit(main())
