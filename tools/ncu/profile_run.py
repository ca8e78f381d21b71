"""Profile one kernel: run its launcher under `ncu` in a child process, then diagnose the report.

    req = ProfileRequest(file="k.py", kernel="my_kernel", command=["python", "bench.py"])
    result = run_profile(req, progress=lambda text, percent: ...)

What ncu is asked for, and why:
* `-k regex:^KERNEL$` and `-c/--launch-count`: only this kernel, only the launches asked for;
* `--nvtx --nvtx-include RANGE/` when the launcher marks its measured launch with an NVTX
  push/pop range, so warm-up and autotuning launches of the same kernel are skipped;
* `--import-source yes`: the Python/CUDA source goes into the report (line attribution, and the
  user can open the `.ncu-rep` in Nsight Compute's GUI, which is kept);
* `--clock-control none`: the GPU's clocks are left as they are;
* `--kill yes`: once the launches asked for are profiled, ncu stops the command (what it would
  do afterwards, its remaining iterations and its teardown, is only waiting; `keep_running`);
* `--target-processes application-only` when the command is a Python interpreter that launches
  the kernel itself (`target_processes`): ncu then does not inject itself into every process the
  launcher starts (Triton's and torch's helper subprocesses: 0.4-1.8 s on the H200 under
  `all`, results/ncu_turnaround_h200.md). If that run profiled nothing, the launch came from a child process: ncu runs again
  following every process, and a warning says so (`--target-processes all` skips the first try);
* the few sections the triage and the line attribution need (`TRIAGE_SECTIONS`) plus the
  metrics the pattern modules declare, not `--set full` unless asked (see `COLLECTIONS`);
* the report is then read once in this process through Nsight Compute's Python interface
  (`report_reader.py`), or, where that does not import, exported by parallel `ncu --import`
  processes (ncu_tool.py).
The launcher runs in its own process group; on timeout the whole group is killed.
"""
from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from tritonify.diagnostics.ncu.errors import ProfileError, classify, tail
from tritonify.infra.child_process import NOT_STARTED, TIMEOUT, run_process
from tritonify.tools.ncu.gpu_info import gpu_info
from tritonify.tools.ncu.ncu_tool import export_pages, require_ncu

if TYPE_CHECKING:
    from tritonify.diagnostics.ncu.diagnose import Diagnosis

# What ncu collects (`collect`):
# * "triage" (default): LaunchStats and Occupancy (launch facts, no replay of their own beyond the
#   achieved occupancy), SourceCounters (the per-instruction counters and warp samples the line
#   attribution needs), and by name every metric a pattern, the context or the roofline point reads
#   (`collection_metrics()`): not whole sections such as MemoryWorkloadAnalysis_Tables (30 replay
#   passes on the H200 alone), WarpStateStats or SpeedOfLight, whose other metrics nobody reads;
# * "targeted": the sections of earlier versions (34 passes) plus the same metrics;
# * "full": `--set full` (38 passes) plus the same metrics.
TRIAGE_SECTIONS = ("LaunchStats", "Occupancy", "SourceCounters")
SECTIONS = (
    "LaunchStats", "Occupancy", "SpeedOfLight", "WorkloadDistribution", "ComputeWorkloadAnalysis",
    "MemoryWorkloadAnalysis", "MemoryWorkloadAnalysis_Tables", "SourceCounters", "WarpStateStats",
    "SchedulerStats", "InstructionStats", "SpeedOfLight_RooflineChart",
)
COLLECTIONS = ("triage", "targeted", "full")
PROCESSES = ("auto", "application-only", "all")
# Python modules that start the processes which launch the kernels (the launcher itself launches none)
_SPAWNERS = ("torch.distributed.run", "torch.distributed.launch", "accelerate", "deepspeed", "torchrun",
             "multiprocessing", "concurrent")
_PYTHON = re.compile(r"python(\d+(\.\d+)*[td]?)?(\.exe)?")


def pattern_metrics() -> tuple[str, ...]:
    """Every metric a pattern reads (each module's METRICS: checked against real H200 raw pages)."""
    from tritonify.diagnostics.ncu.patterns import all_metrics

    return all_metrics()


def collection_metrics() -> tuple[str, ...]:
    """What `--metrics` asks for: the patterns' metrics, then the context's and the roofline's."""
    from tritonify.diagnostics.ncu.metrics import CONTEXT_METRICS
    from tritonify.diagnostics.ncu.roofline import METRICS as ROOFLINE

    return tuple(dict.fromkeys((*pattern_metrics(), *CONTEXT_METRICS, *ROOFLINE)))


Progress = Callable[[str, int], None]


@dataclass
class ProfileRequest:
    file: str                       # the kernel's source file (FILE of FILE::KERNEL)
    kernel: str                     # the kernel's function name
    command: list[str]              # the launcher, an argument list
    output: str | None = None       # where the .ncu-rep goes (default: .tritonify/profiles/)
    launch_count: int = 1
    launch_skip: int = 0
    nvtx_range: str | None = None
    full: bool = False              # --set full (same as collect="full")
    collect: str = "triage"         # one of COLLECTIONS
    processes: str = "auto"         # one of PROCESSES: which processes ncu follows (target_processes)
    keep_running: bool = False      # let the command run to its end after the profiled launches
    timeout: float = 600.0
    cwd: str | None = None

    def report_path(self) -> Path:
        """Absolute, so that whoever reads the result (the editor, from another folder) can open it."""
        if self.output:
            p = Path(self.output)
            return (p if p.suffix == ".ncu-rep" else p.with_name(p.name + ".ncu-rep")).resolve()
        stamp = time.strftime("%Y%m%d-%H%M%S")
        return (Path(self.cwd or ".") / ".tritonify" / "profiles" / f"{self.kernel}-{stamp}.ncu-rep").resolve()


@dataclass
class ProfileResult:
    report: str
    diagnoses: list[Diagnosis]
    gpu: dict
    argv: list[str]
    seconds: float
    warnings: list[str] = field(default_factory=list)
    timings: dict = field(default_factory=dict)    # ncu_s, read_and_diagnose_s, reader ("ncu_report" or "csv")


def kernel_filter(kernel: str) -> str:
    """ncu's `-k` value: the exact function name (Triton kernels and extern "C" CUDA kernels)."""
    return f"regex:^{re.escape(kernel)}$"


def _python_module(cmd: list[str]) -> str | None:
    """The module of `python [options] -m MODULE ...` (also `-mMODULE`), or None when the
    interpreter runs a script, `-c` code or nothing; options after the script are the script's."""
    for i, arg in enumerate(cmd[1:], start=1):
        if arg == "-m":
            return cmd[i + 1] if i + 1 < len(cmd) else ""
        if arg.startswith("-m") and not arg.startswith("--"):
            return arg[2:]
        if arg == "-c" or not arg.startswith("-"):
            return None
    return None


def target_processes(req: ProfileRequest) -> str:
    """ncu's `--target-processes`: what the user chose, or under "auto" `application-only` when
    the command is a Python interpreter running a script or a module that is not a known
    spawner of workers (torchrun, accelerate, ...), else `all` (a shell script, a wrapper)."""
    if req.processes != "auto":
        return req.processes
    cmd = list(req.command)
    if not cmd or not _PYTHON.fullmatch(Path(cmd[0]).name.lower()):
        return "all"
    module = _python_module(cmd)
    if module is not None and any(module == s or module.startswith(s + ".") for s in _SPAWNERS):
        return "all"
    return "application-only"


def build_ncu_argv(req: ProfileRequest, ncu: str = "ncu", report: Path | None = None,
                   processes: str | None = None) -> list[str]:
    report = report or req.report_path()
    processes = processes or target_processes(req)
    if processes not in PROCESSES[1:]:
        raise ProfileError("bad-input", f"unknown --target-processes {processes!r}", "use auto, application-only or all")
    argv = [ncu, "--target-processes", processes, "--import-source", "yes", "--clock-control", "none",
            "-k", kernel_filter(req.kernel), "--launch-count", str(max(1, req.launch_count))]
    if not req.keep_running:
        argv += ["--kill", "yes"]   # stop the command once its launches are profiled: the rest is waiting
    if req.launch_skip:
        argv += ["--launch-skip", str(req.launch_skip)]
    if req.nvtx_range:
        rng = req.nvtx_range if req.nvtx_range.endswith("/") else req.nvtx_range + "/"
        argv += ["--nvtx", "--nvtx-include", rng]
    collect = "full" if req.full else req.collect
    if collect not in COLLECTIONS:
        raise ProfileError("bad-input", f"unknown collection {collect!r}", f"use one of {', '.join(COLLECTIONS)}")
    if collect == "full":
        argv += ["--set", "full"]
    else:
        for section in TRIAGE_SECTIONS if collect == "triage" else SECTIONS:
            argv += ["--section", section]
    argv += ["--metrics", ",".join(collection_metrics())]
    argv += ["-f", "-o", str(report.with_suffix(""))]
    return argv + list(req.command)


# Finds the command that launches a kernel when none was named: (argv, NVTX range of its measured
# call) or None. The bench harness has one (`tritonify.kernels.bench.launch.contract_launcher`);
# the caller passes it in, so this package does not import the harness.
Launcher = Callable[[str, str], "tuple[list[str], str] | None"]


def _run_under_ncu(argv: list[str], deadline: float, cwd: str | None, progress: Progress,
                   while_running: Callable[[], None] | None = None, sweep: bool = False) -> tuple[int, str]:
    """Run in a new process group (`run_process`) and stream ncu's progress until `deadline`
    (time.time()); on timeout, on any exception (KeyboardInterrupt, the SIGTERM the profile
    command turns into one, an error in `while_running`) the whole group is killed before it
    propagates. `while_running` is called once ncu has started (work that may overlap the run).
    `sweep`: once ncu has exited, what it leaves in the group (processes of a command ncu stopped) is killed."""
    lines: list[str] = []

    def on_line(line: str) -> None:
        lines.append(line)
        m = re.search(r'==PROF== Profiling "([^"]+)"', line)
        if m:
            progress(f"profiling {m.group(1)}", 50)

    outcome = run_process(argv, what="ncu", timeout_s=max(0.0, deadline - time.time()), on_line=on_line, cwd=cwd,
                          merge_output=True, kill_grace_s=5, while_running=while_running, sweep=sweep)
    output = "".join(line + "\n" for line in lines)
    if outcome.status == NOT_STARTED:
        raise ProfileError("ncu-missing", f"could not start {argv[0]}: {outcome.message.rpartition(': ')[2]}")
    if outcome.status == TIMEOUT:
        raise ProfileError("timeout", "the launcher did not finish in the time given; its process group was killed",
                           "raise --timeout, or make the launcher run fewer iterations under ncu "
                           "(every profiled launch is replayed tens of times)",
                           tail(output) or None)
    return outcome.returncode, output


def _profiled_nothing(code: int, output: str) -> bool:
    return "No kernels were profiled" in output and "==PROF== Profiling" not in output


def run_profile(req: ProfileRequest, progress: Progress | None = None,
                launcher: Launcher | None = None) -> ProfileResult:
    """ncu starts first; what is not needed to build its argument list (NVML, the `ncu_report`
    child, the diagnosis modules) is started or imported while the launcher runs under it."""
    progress = progress or (lambda text, percent: None)
    if not req.command:
        found = launcher(req.file, req.kernel) if launcher else None
        if not found:
            raise ProfileError("no-launcher", f"nothing launches {req.kernel}",
                               f"name the command that runs it: tritonify profile {req.file}::{req.kernel} -- python script.py")
        req.command, nvtx_range = found
        if not req.nvtx_range and req.launch_skip == 0:
            req.nvtx_range = nvtx_range     # the launcher's measured call, after its warm-up calls
    progress("looking for ncu", 2)
    start = time.time()
    timings: dict[str, float] = {}
    ncu = require_ncu()
    report = req.report_path()
    report.parent.mkdir(parents=True, exist_ok=True)
    argv = build_ncu_argv(req, ncu, report)
    warnings: list[str] = []
    box: dict = {}

    def while_running() -> None:
        box["reader"] = _start_reader(ncu, warnings)
        try:
            box["gpu"] = gpu_info()
            import tritonify.diagnostics.ncu.diagnose  # noqa: F401  (its imports overlap the run)
        except Exception as exc:  # never leave ncu running unwatched
            warnings.append(f"could not read the GPU's facts while profiling: {exc}")

    try:
        progress(f"running the launcher under ncu: {' '.join(req.command)}", 10)
        t0 = time.time()
        deadline = t0 + req.timeout      # one budget for both runs below
        sweep = not req.keep_running
        code, output = _run_under_ncu(argv, deadline, req.cwd, progress, while_running, sweep)
        ran_twice = False
        if _profiled_nothing(code, output) and req.processes == "auto" and "application-only" in argv:
            # the kernel may have been launched by a child of the command: follow every process this time
            progress("nothing profiled in the command's own process: running again, following its child processes", 12)
            argv = build_ncu_argv(req, ncu, report, processes="all")
            code, output = _run_under_ncu(argv, deadline, req.cwd, progress, sweep=sweep)
            ran_twice = True
            if not _profiled_nothing(code, output):
                warnings.append(f"{req.kernel} was not launched by the command's own process; ncu ran it again "
                                "following its child processes (pass --target-processes all to skip the first run)")
        timings["ncu_s"] = time.time() - t0
        gpu = box.get("gpu") or gpu_info()
        if not gpu.get("available") and "NVML could not start" in str(gpu.get("reason", "")):
            raise ProfileError("no-gpu", "no usable NVIDIA GPU was found", str(gpu.get("reason")))
        error = classify(code, output, kernel=req.kernel)
        if error is not None:
            if ran_twice and error.code == "no-kernel":
                error.hint = (f"{error.hint}. The command ran twice: in its own process, then following its child "
                              "processes; --target-processes all runs it once")
            raise error
        if not report.is_file():
            raise ProfileError("no-kernel", f"ncu wrote no report: no launch of {req.kernel!r} matched",
                               "check the kernel name, --nvtx-range and --launch-skip", tail(output) or None)
        progress("reading the report", 75)
        t0 = time.time()
        warnings[:0] = list(gpu.get("warnings", []))
        texts = {}
        try:
            texts[str(Path(req.file).resolve())] = Path(req.file).read_text(encoding="utf-8", errors="replace")
        except OSError:
            pass
        diagnoses = _read_and_diagnose(str(report), req.kernel, ncu, texts, progress, warnings, box.get("reader"), timings)
        timings["read_and_diagnose_s"] = time.time() - t0
    finally:
        if box.get("reader") is not None:
            box["reader"].close()
    if "Running with unmodified GPU clocks" in output:
        warnings.append("ncu ran with the GPU's clocks unlocked (--clock-control none): numbers vary with boost")
    result = ProfileResult(str(report), diagnoses, gpu, argv, time.time() - start, warnings, timings)
    _write_sidecar(result)
    progress("done", 100)
    return result


def _read_and_diagnose(report: str, kernel: str, ncu: str, texts: dict, progress: Progress,
                       warnings: list[str], reader, timings: dict) -> list[Diagnosis]:
    """Through `ncu_report` (in the child `reader`, one load of the report) when it works, else
    through `ncu --import --csv` exports (`TRITONIFY_NCU_READER=csv` forces those)."""
    from tritonify.diagnostics.ncu.diagnose import diagnose_pages, diagnose_parsed
    from tritonify.tools.ncu.report_reader import ReaderUnavailable, read_report

    if reader is not None:
        try:
            launches, rules, pages, read_timings = read_report(report, [kernel], reader=reader)
        except ReaderUnavailable as exc:
            warnings.append(f"{exc}; reading the report through CSV exports instead (slower)")
        else:
            if launches:
                progress("diagnosing", 90)
                timings.update(reader="ncu_report", **{f"ncu_report_{k}": v for k, v in read_timings.items()})
                return diagnose_parsed(launches, rules, pages, texts)
            warnings.append("ncu_report found no launch in the report; reading it through CSV exports instead")
    progress("exporting the report", 80)
    raw, details, sources = export_pages(report, [kernel], ncu=ncu)
    progress("diagnosing", 90)
    timings["reader"] = "csv"
    return diagnose_pages(raw, details, sources, texts)


def _start_reader(ncu: str, warnings: list[str]):
    """The ncu_report child, started before the profiled run so its imports overlap it."""
    if os.environ.get("TRITONIFY_NCU_READER", "") == "csv":
        return None
    from tritonify.tools.ncu.report_reader import ReaderProcess

    try:
        return ReaderProcess(ncu)
    except OSError as exc:
        warnings.append(f"could not start the ncu_report reader ({exc}); reading the report through CSV exports")
        return None


def _write_sidecar(result: ProfileResult) -> None:
    """`<report>.json` beside the `.ncu-rep`: the GPU (name, driver, clocks, memory), the ncu
    command and the warnings, so a report found later can be traced to its machine."""
    import json

    side = Path(result.report).with_suffix(".json")
    try:
        side.write_text(json.dumps({"report": result.report, "gpu": result.gpu, "ncu_argv": result.argv,
                                    "seconds": round(result.seconds, 2), "warnings": result.warnings,
                                    "timings": {k: round(v, 3) if isinstance(v, float) else v
                                                for k, v in result.timings.items()},
                                    "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, indent=1))
    except OSError:
        pass
