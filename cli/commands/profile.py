"""`tritonify profile FILE::KERNEL -- COMMAND...`: run a kernel's launcher under Nsight Compute.

Only KERNEL is profiled (`-k`), only `--launch-count` launches, inside `--nvtx-range` when the
launcher marks its measured launch. The `.ncu-rep` is kept (`--output`) for Nsight Compute's GUI.
With `--format json`, stdout is one JSON object `{"schema": "tritonify.profile/1", "status": "ok",
"summary", "report", "gpu", "launches": [...]}` where `launches` is diagnose's JSON list (each
launch also carries `report` and `gpu`), and the exit code is 0 (a profile that names patterns
succeeded); stderr carries progress as `{"progress": "...", "percent": N}` lines, and a failure is
one JSON object `{"error": CODE, "message", "hint", "stderr_tail"}` with exit code 2.
The text format exits 1 when a pattern is named, as `check` does with findings.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading

NAME = "profile"
HELP = "profile one kernel with Nsight Compute and name its bottleneck patterns"
ORDER = 41


def add_arguments(p):
    p.add_argument("target", metavar="FILE::KERNEL", help="the kernel's file and function name")
    p.add_argument("launcher", nargs=argparse.REMAINDER, metavar="-- COMMAND",
                   help="the command that launches the kernel (after --), e.g. -- python bench.py")
    _add_options(p)


def _add_options(p):
    p.add_argument("--launch-count", type=int, default=1, help="launches of KERNEL to profile (default 1)")
    p.add_argument("--launch-skip", type=int, default=0, help="matching launches to skip first (warm-up)")
    p.add_argument("--nvtx-range", help="profile only inside this NVTX push/pop range")
    p.add_argument("--full", action="store_true", help="collect --set full (same as --collect full)")
    p.add_argument("--collect", choices=["triage", "targeted", "full"], default="triage",
                   help="what ncu collects: triage (default: the sections and metrics the patterns read), "
                        "targeted (the wider section list of earlier versions), full (--set full)")
    p.add_argument("--target-processes", choices=["auto", "application-only", "all"], default="auto",
                   help="which processes ncu follows: auto (default: only the command's own process when it is a "
                        "Python interpreter, every process otherwise; again with all if that profiled nothing), "
                        "application-only, or all (every child process too)")
    p.add_argument("--keep-running", action="store_true",
                   help="let the command run to its end (default: ncu stops it once the launches are profiled)")
    p.add_argument("--output", "-o", help="where to keep the .ncu-rep (default .tritonify/profiles/)")
    p.add_argument("--timeout", type=float, default=600, help="seconds before the launcher is killed")
    p.add_argument("--format", choices=["text", "json"], default="text")


def _split_target(target: str) -> tuple[str, str] | None:
    if "::" not in target:
        return None
    file, _, kernel = target.rpartition("::")
    return (file, kernel) if file and kernel.isidentifier() else None


def _split_launcher(args) -> None:
    """Options may follow FILE::KERNEL (argparse's REMAINDER takes them): parse what comes before
    `--` as options, and keep what follows as the launcher's own argument list."""
    rest = list(args.launcher or [])
    if "--" in rest:
        i = rest.index("--")
        opts, command = rest[:i], rest[i + 1:]
    else:
        opts, command = rest, []
    sub = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    _add_options(sub)
    try:
        _, unknown = sub.parse_known_args(opts, namespace=args)
    except (argparse.ArgumentError, SystemExit) as exc:
        raise ValueError(f"bad option: {exc}") from None
    if unknown and command:
        raise ValueError(f"unknown options before --: {' '.join(unknown)}")
    args.launcher = command or unknown


@contextlib.contextmanager
def _sigterm_as_interrupt():
    """SIGTERM raises KeyboardInterrupt while profiling, so run_profile's cleanup kills ncu's process
    group (it runs in a session of its own, out of reach of a signal to this one's group)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def summary_line(diagnoses) -> str:
    """One line for the code lens: the top patterns of the slowest launch, and its time."""
    if not diagnoses:
        return "no launch of the kernel was profiled"
    d = max(diagnoses, key=lambda d: d.launch.get("gpu__time_duration.sum") or 0)
    ns = d.launch.get("gpu__time_duration.sum")
    time = f"{ns / 1e6:.3f} ms" if isinstance(ns, (int, float)) else "time unknown"
    if not d.hits:
        return f"{time}, no bottleneck pattern named"
    names = ", ".join(f"{h.pattern.letter} {h.pattern.title}" for h in d.hits[:2])
    more = f" (+{len(d.hits) - 2})" if len(d.hits) > 2 else ""
    return f"{time}, {names}{more}"


def run(args) -> int:
    from tritonify.diagnostics.ncu.errors import ProfileError
    from tritonify.tools.ncu.profile_run import ProfileRequest, run_profile
    from tritonify.diagnostics.ncu.render import to_json_list, to_text
    from tritonify.kernels.bench.launch import contract_launcher

    split_error = None
    try:
        _split_launcher(args)
    except ValueError as exc:
        split_error = str(exc)
    as_json = args.format == "json"

    def fail(err: ProfileError) -> int:
        if as_json:
            print(json.dumps(err.to_dict()))
        else:
            print(f"tritonify: error: {err}", file=sys.stderr)
        return 2

    if split_error:
        return fail(ProfileError("bad-arguments", split_error))
    parts = _split_target(args.target)
    if parts is None:
        return fail(ProfileError("bad-target", f"{args.target!r} is not FILE::KERNEL",
                                 "e.g. tritonify profile kernels.py::my_kernel -- python bench.py"))

    def progress(text: str, percent: int) -> None:
        if as_json:
            print(json.dumps({"progress": text, "percent": percent}), file=sys.stderr, flush=True)
        else:
            print(f"[{percent:3d}%] {text}", file=sys.stderr, flush=True)

    req = ProfileRequest(file=parts[0], kernel=parts[1], command=list(args.launcher), output=args.output,
                         launch_count=args.launch_count, launch_skip=args.launch_skip,
                         nvtx_range=args.nvtx_range, full=args.full, collect=args.collect, timeout=args.timeout,
                         processes=args.target_processes, keep_running=args.keep_running)
    try:
        with _sigterm_as_interrupt():   # a cancelled job (SIGTERM) stops ncu and the launcher too
            result = run_profile(req, progress, launcher=contract_launcher)
    except ProfileError as exc:
        return fail(exc)
    for w in result.warnings:
        print(json.dumps({"warning": w}) if as_json else f"warning: {w}", file=sys.stderr)
    if as_json:
        launches = to_json_list(result.diagnoses, extra={"report": result.report, "gpu": result.gpu})
        print(json.dumps({"schema": "tritonify.profile/1", "status": "ok", "summary": summary_line(result.diagnoses),
                          "report": result.report, "gpu": result.gpu, "launches": launches}, indent=1))
        return 0
    else:
        print(to_text(result.diagnoses))
        print(f"\nreport: {result.report} (open it in Nsight Compute for the full picture)")
    return 1 if any(d.hits for d in result.diagnoses) else 0
