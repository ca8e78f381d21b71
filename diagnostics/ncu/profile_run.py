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
* the few sections the triage and the line attribution need (`TRIAGE_SECTIONS`) plus the
  metrics the pattern modules declare, not `--set full` unless asked (see `COLLECTIONS`);
* the report's pages are then exported by parallel `ncu --import` processes (ncu_tool.py).
The launcher runs in its own process group; on timeout the whole group is killed.
"""
from __future__ import annotations

import re
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from tritonify.diagnostics.ncu.diagnose import Diagnosis, diagnose_pages
from tritonify.diagnostics.ncu.errors import ProfileError, classify, tail
from tritonify.diagnostics.ncu.gpu_info import gpu_info
from tritonify.diagnostics.ncu.ncu_tool import export_pages, require_ncu
from tritonify.infra.child_process import stop_group

# What ncu collects (`collect`):
# * "triage" (default): the six sections below plus the metrics the pattern modules declare
#   (`patterns.all_metrics()`); not MemoryWorkloadAnalysis_Tables, which alone took 30 replay
#   passes on the H200 (its few metrics the patterns need are asked for by name instead);
# * "targeted": the sections of earlier versions (34 passes) plus the same metrics;
# * "full": `--set full` (38 passes) plus the same metrics.
TRIAGE_SECTIONS = ("LaunchStats", "Occupancy", "SpeedOfLight", "SpeedOfLight_RooflineChart", "WarpStateStats",
                   "SourceCounters")
SECTIONS = (
    "LaunchStats", "Occupancy", "SpeedOfLight", "WorkloadDistribution", "ComputeWorkloadAnalysis",
    "MemoryWorkloadAnalysis", "MemoryWorkloadAnalysis_Tables", "SourceCounters", "WarpStateStats",
    "SchedulerStats", "InstructionStats", "SpeedOfLight_RooflineChart",
)
COLLECTIONS = ("triage", "targeted", "full")


def pattern_metrics() -> tuple[str, ...]:
    """Every metric a pattern reads (each module's METRICS: checked against real H200 raw pages)."""
    from tritonify.diagnostics.ncu.patterns import all_metrics

    return all_metrics()


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


def kernel_filter(kernel: str) -> str:
    """ncu's `-k` value: the exact function name (Triton kernels and extern "C" CUDA kernels)."""
    return f"regex:^{re.escape(kernel)}$"


def build_ncu_argv(req: ProfileRequest, ncu: str = "ncu", report: Path | None = None) -> list[str]:
    report = report or req.report_path()
    argv = [ncu, "--target-processes", "all", "--import-source", "yes", "--clock-control", "none",
            "-k", kernel_filter(req.kernel), "--launch-count", str(max(1, req.launch_count))]
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
    argv += ["--metrics", ",".join(pattern_metrics())]
    argv += ["-f", "-o", str(report.with_suffix(""))]
    return argv + list(req.command)


# Finds the command that launches a kernel when none was named: (argv, NVTX range of its measured
# call) or None. The bench harness has one (`tritonify.kernels.bench.launch.contract_launcher`);
# the caller passes it in, so this package does not import the harness.
Launcher = Callable[[str, str], "tuple[list[str], str] | None"]


def _run_under_ncu(argv: list[str], timeout: float, cwd: str | None, progress: Progress) -> tuple[int, str]:
    """Run in a new process group, stream ncu's progress, kill the whole group on timeout."""
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=cwd,
                                start_new_session=True, text=True, errors="replace")
    except FileNotFoundError as exc:
        raise ProfileError("ncu-missing", f"could not start {argv[0]}: {exc}") from None
    chunks: list[str] = []

    def pump():
        for line in proc.stdout:  # type: ignore[union-attr]
            chunks.append(line)
            m = re.search(r'==PROF== Profiling "([^"]+)"', line)
            if m:
                progress(f"profiling {m.group(1)}", 50)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop_group(proc, 5)
        reader.join(2)
        raise ProfileError("timeout", f"the launcher did not finish within {timeout:.0f}s; its process group was killed",
                           "raise --timeout, or make the launcher run fewer iterations under ncu "
                           "(every profiled launch is replayed tens of times)",
                           tail("".join(chunks)) or None) from None
    reader.join(5)
    return proc.returncode, "".join(chunks)


def run_profile(req: ProfileRequest, progress: Progress | None = None,
                launcher: Launcher | None = None) -> ProfileResult:
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
    ncu = require_ncu()
    gpu = gpu_info()
    if not gpu.get("available") and "NVML could not start" in str(gpu.get("reason", "")):
        raise ProfileError("no-gpu", "no usable NVIDIA GPU was found", str(gpu.get("reason")))
    report = req.report_path()
    report.parent.mkdir(parents=True, exist_ok=True)
    argv = build_ncu_argv(req, ncu, report)
    progress(f"running the launcher under ncu: {' '.join(req.command)}", 10)
    start = time.time()
    code, output = _run_under_ncu(argv, req.timeout, req.cwd, progress)
    error = classify(code, output, kernel=req.kernel)
    if error is not None:
        raise error
    if not report.is_file():
        raise ProfileError("no-kernel", f"ncu wrote no report: no launch of {req.kernel!r} matched",
                           "check the kernel name, --nvtx-range and --launch-skip", tail(output) or None)
    progress("exporting the report", 75)
    raw, details, sources = export_pages(str(report), [req.kernel], ncu=ncu)
    progress("diagnosing", 90)
    texts = {}
    try:
        texts[str(Path(req.file).resolve())] = Path(req.file).read_text(encoding="utf-8", errors="replace")
    except OSError:
        pass
    diagnoses = diagnose_pages(raw, details, sources, texts)
    warnings = list(gpu.get("warnings", []))
    if "Running with unmodified GPU clocks" in output:
        warnings.append("ncu ran with the GPU's clocks unlocked (--clock-control none): numbers vary with boost")
    result = ProfileResult(str(report), diagnoses, gpu, argv, time.time() - start, warnings)
    _write_sidecar(result)
    progress("done", 100)
    return result


def _write_sidecar(result: ProfileResult) -> None:
    """`<report>.json` beside the `.ncu-rep`: the GPU (name, driver, clocks, memory), the ncu
    command and the warnings, so a report found later can be traced to its machine."""
    import json

    side = Path(result.report).with_suffix(".json")
    try:
        side.write_text(json.dumps({"report": result.report, "gpu": result.gpu, "ncu_argv": result.argv,
                                    "seconds": round(result.seconds, 2), "warnings": result.warnings,
                                    "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, indent=1))
    except OSError:
        pass
