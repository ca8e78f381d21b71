"""Capture every planted kernel and control with the triage collection, read the report both ways
(CSV exports and ncu_report), and compare what the detectors see (H200).

    OUT=/tmp/out PYTHONPATH=<tritonify importable> python3 gpu/ncu/check_reader.py

1. nvcc build of planted_cuda.cu (-lineinfo), one warm run (Triton's cache);
2. one ncu run over all cases with `tritonify profile`'s triage collection (passes per kernel
   from ncu's log);
3. the CSV pages (raw, details, one source page per kernel) and the ncu_report dump of the same
   report, kept as fixtures (`$WORK/fixtures_triage`, packed into $OUT/fixtures_triage.tar.gz);
4. per kernel: the diagnosis from the CSV pages and from the dump (patterns, lines, not assessed,
   limiter), the metrics whose values differ, ncu's rules on both sides, the per-line counters;
   written to $OUT/check.json.
"""
from __future__ import annotations

import concurrent.futures as cf
import gzip
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
WORK = Path("/tmp/ncu_check")
FX = WORK / "fixtures_triage"
NCU = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
T0 = time.time()


def log(msg):
    print(f"[{time.time() - T0:6.1f}s] {msg}", flush=True)


def run(argv, env=None, timeout=400, stdout=None):
    t0 = time.time()
    p = subprocess.run(argv, capture_output=stdout is None, stdout=stdout, text=True, env=env, timeout=timeout)
    return p, round(time.time() - t0, 2)


def main() -> int:
    from tritonify.diagnostics.ncu.diagnose import diagnose_pages, diagnose_parsed
    from tritonify.tools.ncu.profile_run import TRIAGE_SECTIONS, collection_metrics
    from tritonify.tools.ncu.report_reader import dump_report, parse_dump
    from tritonify.diagnostics.ncu.raw_page import parse_raw
    from tritonify.diagnostics.ncu.details_page import parse_details
    from tritonify.diagnostics.ncu.source_page import parse_source
    from tritonify.diagnostics.ncu.lines import attribute

    OUT.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(WORK, ignore_errors=True)
    (FX / "source").mkdir(parents=True)
    env = dict(os.environ, PYTHONUNBUFFERED="1", TRITON_CACHE_DIR=str(WORK / "triton_cache"))
    res: dict = {"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    cubin = WORK / "planted_cuda.cubin"
    p, s = run(["nvcc", "-cubin", "-lineinfo", "-arch=sm_90", "-o", str(cubin), str(HERE / "planted_cuda.cu")])
    if cubin.is_file():
        env["PLANTED_CUBIN"] = str(cubin)
    log(f"nvcc rc={p.returncode} {s}s")
    launcher = [sys.executable, str(HERE / "run_cases.py")]
    run(launcher + ["--list", "--manifest", str(FX / "manifest.json")], env=env)
    p, s = run(launcher, env=env)
    log(f"warm run rc={p.returncode} {s}s")
    kernels = [m["kernel"] for m in json.loads((FX / "manifest.json").read_text())]
    metrics = collection_metrics()
    rep = WORK / "triage.ncu-rep"
    argv = [NCU, "--target-processes", "all", "--import-source", "yes", "--clock-control", "none", "--nvtx",
            "--nvtx-include", "tritonify/", "-f", "-o", str(rep.with_suffix(""))]
    for sec in TRIAGE_SECTIONS:
        argv += ["--section", sec]
    argv += ["--metrics", ",".join(metrics)] + launcher
    p, s = run(argv, env=env)
    out = (p.stdout or "") + (p.stderr or "")
    (FX / "ncu.log").write_text(out[-200000:])
    res["capture_s"] = s
    res["passes"] = {m.group(1): int(m.group(2)) for m in re.finditer(r'Profiling "([^"]+)".*?(\d+) passes', out)}
    res["ncu_warnings"] = [ln for ln in out.splitlines() if "==WARNING==" in ln or "==ERROR==" in ln][:20]
    log(f"capture rc={p.returncode} {s}s passes={res['passes']}")
    if not rep.is_file():
        (OUT / "check.json").write_text(json.dumps(res, indent=1))
        return 1
    imp = [NCU, "--import", str(rep), "--csv"]
    t0 = time.time()
    with cf.ThreadPoolExecutor(8) as pool:
        jobs = {"raw": pool.submit(run, imp + ["--page", "raw", "--print-units", "base"]),
                "details": pool.submit(run, imp + ["--page", "details"])}
        for k in kernels:
            jobs[k] = pool.submit(run, imp + ["--page", "source", "--print-source", "cuda,sass", "-k", f"regex:^{k}$"])
        texts = {k: f.result()[0].stdout for k, f in jobs.items()}
    res["csv_exports_s"] = round(time.time() - t0, 2)
    (FX / "raw.csv").write_text(texts["raw"])
    (FX / "details.csv").write_text(texts["details"])
    for k in kernels:
        if texts[k].startswith('"File Path"'):
            (FX / "source" / f"{k}.csv").write_text(texts[k])
    t0 = time.time()
    one = dump_report(str(rep), [kernels[0]], ncu=NCU)
    res["ncu_report_one_kernel_s"] = round(time.time() - t0, 3)
    t0 = time.time()
    dump = dump_report(str(rep), ncu=NCU)
    res["ncu_report_all_s"] = round(time.time() - t0, 3)
    with gzip.open(FX / "dump.json.gz", "wt") as f:
        json.dump(dump, f)
    log(f"exports {res['csv_exports_s']}s, ncu_report one {res['ncu_report_one_kernel_s']}s all {res['ncu_report_all_s']}s")
    # what ncu_report gives that the mapping relies on
    first = dump["actions"][0] if dump["actions"] else {}
    res["missing_requested"] = [m for m in metrics if m not in first.get("metrics", {})]
    res["instanced_names"] = sorted({n for a in dump["actions"] for n in a["instanced"]})
    res["rule_types"] = sorted({str(r.get("type")) for a in dump["actions"] for r in a["rules"]})
    res["string_samples"] = {n: sorted({str(v) for a in dump["actions"] for v in a["instanced"].get(n, {}).get("values", [])})[:12]
                             for n in ("memory_type", "memory_access_type", "memory_access_size_type")}
    csv_launches = {L.kernel: L for L in parse_raw(texts["raw"])}
    csv_rules = parse_details(texts["details"])
    res["kernels"] = {}
    for k in kernels:
        row: dict = {}
        try:
            src = [texts[k]] if texts[k].startswith('"File Path"') else []
            a = diagnose_pages(texts["raw"], texts["details"], src)
            a = [d for d in a if d.launch.kernel == k]
            sub = {"actions": [x for x in dump["actions"] if x["kernel"] == k]}
            launches, rules, pages = parse_dump(sub)
            b = diagnose_parsed(launches, rules, pages)
            summ = lambda ds: [{"letters": d.letters, "lines": [h.lines[:3] for h in d.hits],  # noqa: E731
                                "not_assessed": [n.pattern.letter for n in d.not_assessed],
                                "limiter": d.limiter.evidence.get("limiter") if d.limiter else None,
                                "hot": [h["line"] for h in d.hot_lines(5)]} for d in ds]
            row["csv"], row["ncu_report"] = summ(a), summ(b)
            row["same"] = row["csv"] == row["ncu_report"]
            if launches and k in csv_launches:
                L1, L2 = csv_launches[k], launches[0]
                diff = {n: [L1.metrics[n], L2.metrics[n]] for n in L1.metrics.keys() & L2.metrics.keys()
                        if abs(L1.metrics[n] - L2.metrics[n]) > 1e-3 * max(1.0, abs(L1.metrics[n]))}
                row["metric_diffs"] = dict(list(diff.items())[:15])
                row["metric_diff_count"] = len(diff)
                row["only_csv"] = sorted(L1.metrics.keys() - L2.metrics.keys())[:15]
                row["only_report"] = sorted(L2.metrics.keys() - L1.metrics.keys())[:15]
                row["identity"] = [[L1.kernel, L1.block, L1.grid, L1.cc], [L2.kernel, L2.block, L2.grid, L2.cc]]
                r1 = sorted((r.name, r.type, r.speedup_type, round(r.speedup or 0, 2)) for r in csv_rules if r.kernel == k)
                r2 = sorted((r.name, r.type, r.speedup_type, round(r.speedup or 0, 2)) for r in rules.get(L2.id, []))
                row["rules_same"] = r1 == r2
                if r1 != r2:
                    row["rules"] = [r1[:12], r2[:12]]
            if src and pages:
                p1 = attribute(parse_source(src[0]))
                p2 = attribute(pages[0])
                if p1 and p2:
                    keys = ("samples", "inst", "thread_inst", "excessive_load_sectors", "excessive_store_sectors",
                            "shared_excessive_wavefronts", "local_inst", "divergent_branches", "barrier_wait")
                    bad = {}
                    for n in sorted(set(p1.lines) | set(p2.lines)):
                        s1, s2 = p1.lines.get(n), p2.lines.get(n)
                        v1 = [getattr(s1, x) for x in keys] if s1 else None
                        v2 = [getattr(s2, x) for x in keys] if s2 else None
                        if v1 != v2:
                            bad[n] = [v1, v2]
                    row["line_diffs"] = dict(list(bad.items())[:6])
                    row["line_diff_count"] = len(bad)
                    row["paths"] = [p1.path, p2.path]
        except Exception:
            import traceback

            row["error"] = traceback.format_exc()[-2000:]
        res["kernels"][k] = row
        print(k, "same" if row.get("same") else "DIFF", json.dumps({x: row.get(x) for x in ("csv", "ncu_report")})[:400],
              "metric_diffs", row.get("metric_diff_count"), "line_diffs", row.get("line_diff_count"),
              "rules_same", row.get("rules_same"), row.get("error", "")[-300:], flush=True)
    res["same_count"] = sum(1 for r in res["kernels"].values() if r.get("same"))
    (OUT / "check.json").write_text(json.dumps(res, indent=1, default=str))
    for pth in list(FX.rglob("*.csv")):
        subprocess.run(["gzip", "-9", "-f", str(pth)])
    with tarfile.open(OUT / "fixtures_triage.tar.gz", "w:gz") as tar:
        tar.add(FX, arcname="triage")
    log(f"same {res['same_count']}/{len(kernels)}; done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
