"""`tritonify bench FILE::KERNEL`: correctness first, then time against eager, torch.compile and Liger.

The kernel runs in a child process (``tritonify.kernels.bench.bench_jobs``) with the chosen interpreter; this
process only reads its JSON result, appends it to the lineage (``candidates.jsonl`` beside the kernel)
and writes the reports (HTML + PNG). ``--format json`` prints one JSON object on stdout (the language
server reads it) and progress as JSON lines on stderr.
"""
from __future__ import annotations

import json
import os
import signal
import sys
import threading
from pathlib import Path

from tritonify.infra import exit_codes

NAME = "bench"
HELP = "check a kernel against its reference, then time it against eager, torch.compile and Liger"
ORDER = 30



def add_arguments(p):
    p.add_argument("target", help="FILE::KERNEL (a kernel with a contract) or FILE (its only contract, "
                                  "or its triton.testing.perf_report benchmarks)")
    p.add_argument("--shapes", help="shapes to run instead of the contract's, e.g. 4096x4096,16384x4096")
    p.add_argument("--baselines", help="comma-separated: eager,compile,liger and/or the contract's own (default: all)")
    p.add_argument("--format", choices=["table", "json"], default="table", help="output format (default: table)")
    p.add_argument("--timer", choices=["gpu", "wallclock", "none"], default="gpu",
                   help="gpu (default; needs CUDA), wallclock (host clock, NOT a GPU measurement), none (correctness only)")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds before the run is killed (default: 900)")
    p.add_argument("--python", help="interpreter for the child process (default: this one)")
    p.add_argument("--name", help="candidate name in the lineage (default: the target)")
    p.add_argument("--parent", help="the candidate this one derives from (lineage)")
    p.add_argument("--lineage", help="lineage file (default: candidates.jsonl beside the kernel)")
    p.add_argument("--no-lineage", action="store_true", help="do not record this run")
    p.add_argument("--report-dir", default=".tritonify/bench", help="where the HTML/PNG reports go")
    p.add_argument("--no-report", action="store_true", help="do not write HTML/PNG reports")
    p.add_argument("--seed", type=int, default=0, help="input seed (default: a new one per run)")
    p.add_argument("--interpret", action="store_true", help="run Triton kernels on the CPU (TRITON_INTERPRET=1)")
    p.add_argument("--device", help="cuda, cuda:N or cpu (default: cuda when available)")
    p.add_argument("--refresh-ceilings", action="store_true", help="measure the GPU's ceilings again")
    p.add_argument("--write-contract", action="store_true",
                   help="write <file>_contract.py for KERNEL from its signature (static: runs nothing), then stop")
    p.add_argument("--gpus", help="sweep: one job per shape spread over GPUs: all, 0,1 (busy GPUs skipped, one "
                                  "GPU model only) or cpu:N (N CPU slots, with --interpret)")
    p.add_argument("--ray", metavar="ADDRESS", help="sweep: one job per shape as Ray tasks, one GPU each, on the "
                                                    "cluster at ADDRESS (auto, ray://HOST:10001, local)")


def _cancel_on_sigterm(signum, frame):
    """A cancel from the editor is a SIGTERM to this process: raise KeyboardInterrupt, which
    ``run_job`` answers by killing the child's process group before the exception leaves it."""
    raise KeyboardInterrupt


def _job_kind(file: Path, kernel: str | None) -> str | None:
    from tritonify.kernels.bench.discovery import static_contracts, static_perf_reports

    contracts = static_contracts(file)
    if contracts and (kernel is None or any(c.name == kernel for c in contracts) or not static_perf_reports(file)):
        return "bench"
    if static_perf_reports(file):
        return "perf_report"
    return "bench" if contracts else None


def _usage_error(args, error: str, message: str, hint: str = "") -> int:
    """A usage error: one line on stderr and, with `--format json`, a result object on stdout
    (`status: "usage"`, `error` naming it, the reason in `message` and the fix by hand in `hint`;
    contract/bench.schema.json), so the editor reads both as data instead of parsing text."""
    print(f"tritonify: error: {message}" + (f": {hint}" if hint else ""), file=sys.stderr)
    if getattr(args, "format", None) == "json":
        result = {"schema": "tritonify.bench/1", "status": "usage", "error": error, "message": message, "shapes": []}
        if hint:
            result["hint"] = hint
        print(json.dumps(result))
    return exit_codes.ERROR


def _progress_printer(fmt: str):
    def show(msg: dict) -> None:
        if fmt == "json":
            sys.stderr.write(json.dumps({"progress": msg.get("progress"), "percent": msg.get("percent")}) + "\n")
        else:
            sys.stderr.write(f"[{msg.get('percent', 0):5.1f}%] {msg.get('progress')}\n")
        sys.stderr.flush()
    return show


def _print_perf_report(result: dict) -> None:
    for rep in result.get("reports", []):
        print(f"{rep['name']}:")
        cols = rep["columns"]
        print("  " + "  ".join(cols))
        for row in rep["rows"]:
            print("  " + "  ".join(str(row.get(c)) for c in cols))
    print(f"method: {result.get('method')}")


def _write_contract(file: Path, kernel: str | None) -> int:
    """`--write-contract`: the scaffold beside the kernel file, never over an existing one."""
    from tritonify.kernels.bench.scaffold import new_contract

    if not kernel:
        print("tritonify: error: --write-contract needs FILE::KERNEL", file=sys.stderr)
        return exit_codes.ERROR
    try:
        dest, text = new_contract(file, kernel)
    except ValueError as exc:
        print(f"tritonify: error: {exc}", file=sys.stderr)
        return exit_codes.ERROR
    dest.write_text(text, encoding="utf-8")
    print(f"wrote {dest}: fill in its TODOs (the reference, the shapes), then run "
          f"`tritonify bench {file}::{kernel}`")
    return exit_codes.OK


def run(args) -> int:
    from tritonify.kernels.bench import bench_jobs, lineage, report
    from tritonify.kernels.bench.discovery import parse_target
    from tritonify.kernels.bench.environment import git_state

    file_text, kernel = parse_target(args.target)
    file = Path(file_text)
    if not file.is_file():
        return _usage_error(args, "no-file", f"{file}: no such file")
    if args.write_contract:
        return _write_contract(file, kernel)
    from tritonify.kernels.bench.shapes import parse_shapes

    try:
        shapes = parse_shapes(args.shapes)
    except ValueError as exc:
        return _usage_error(args, "bad-shapes", f"--shapes: {exc}")
    kind = _job_kind(file, kernel)
    if kind is None:
        start = f"tritonify bench {file}::{kernel} --write-contract" if kernel else f"tritonify bench {file}::KERNEL --write-contract"
        return _usage_error(args, "no-contract", f"no benchmark contract for {file.name}",
                            f"`{start}` writes one to fill in ({file.stem}_contract.py; see references/guides/benchmarking.md)")
    baselines = [b.strip() for b in args.baselines.split(",") if b.strip()] if args.baselines else None
    target = f"{file.resolve()}::{kernel}" if kernel else str(file.resolve())
    spec = bench_jobs.job_spec(target, shapes=shapes, baselines=baselines, timer=args.timer, seed=args.seed,
                         device=args.device, kind=kind, refresh_ceilings=args.refresh_ceilings,
                         env={"TRITON_INTERPRET": "1"} if args.interpret else None)

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _cancel_on_sigterm)
    if args.gpus or args.ray:
        from tritonify.kernels.sweep.cli import run_sweep

        return run_sweep(args, spec, file, kernel)
    result = bench_jobs.run_job(spec, python=args.python, timeout=args.timeout, on_progress=_progress_printer(args.format),
                          on_log=(lambda line: print(line, file=sys.stderr)) if args.format == "table" else None)
    # Named relative to the kernel's folder, where the lineage lives, so any working directory agrees.
    result["target"] = f"{file.name}::{kernel}" if kernel else file.name

    if kind == "bench" and not args.no_report and result.get("shapes"):
        try:
            result["reports"] = report.write(result, Path(args.report_dir), name=args.name or result.get("contract"))
        except Exception as exc:  # a report failure must not lose the measurement
            result["reports"] = {"error": f"{type(exc).__name__}: {exc}"}
    if kind == "bench" and not args.no_lineage and lineage.measured_nothing(result):
        # no GPU, a missing package, an unfinished contract: nothing was learned about the kernel
        result["lineage"] = {"skipped": lineage.measured_nothing(result)}
    elif kind == "bench" and not args.no_lineage:
        path = Path(args.lineage) if args.lineage else lineage.default_path(file)
        record = lineage.record_run(path, result, name=args.name, parent=args.parent, git=git_state(file))
        result["lineage"] = {"path": str(path), "id": record["id"], "status": record["status"]}

    if args.format == "json":
        if result.get("status") == "ok":
            result.pop("log_tail", None)
        json.dump(result, sys.stdout, default=str)
        sys.stdout.write("\n")
    elif kind == "perf_report" and result.get("status") == "ok":
        _print_perf_report(result)
    else:
        print(report.text(result))
        if result.get("status") in ("crashed", "timeout", "error") and result.get("log_tail"):
            print("last output of the benchmark process:", file=sys.stderr)
            for line in result["log_tail"][-15:]:
                print("  " + line, file=sys.stderr)
        if result.get("reports", {}).get("html"):
            print(f"report: {result['reports']['html']}")
        if result.get("lineage", {}).get("skipped"):
            print(f"lineage: {result['lineage']['skipped']}")
        elif result.get("lineage"):
            print(f"lineage: {result['lineage']['path']} (run {result['lineage']['id']}, {result['lineage']['status']})")
    return exit_codes.OK if result.get("status") == "ok" else exit_codes.FINDINGS


if os.name == "nt":  # pragma: no cover - process groups and SIGTERM as used here are POSIX
    HELP += " (POSIX only)"
