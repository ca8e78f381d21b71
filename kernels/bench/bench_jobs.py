"""Jobs: JSON specs, each run in its own child process, with progress, cancel and a timeout.

A sweep (shapes x candidates x configs) is a list of independent job specs; ``run_job`` runs one,
and the sweep's pool (``tritonify.kernels.sweep``) or any multi-GPU or multi-host scheduler hands the specs to
workers (give each job its own ``env``, e.g. ``{"CUDA_VISIBLE_DEVICES": "3"}``) without changing them.

Job spec (a plain JSON object):
  kind         "bench" (default) or "perf_report"
  id           a string naming the job (echoed in progress lines and the result)
  target       "path/to/kernel.py::KERNEL" (or a file, for perf_report jobs)
  shapes       list of shapes (lists of ints), or null for the contract's own
  baselines    list of baseline names, or null for eager, compile, liger and the contract's own
  timer        "gpu" (default), "wallclock" (host clock, not a GPU measurement) or "none"
  seed         int (0: a new one each run); checks: fresh draws for the kernel's check (default 2)
  device       "cuda", "cuda:1", "cpu" or null (cuda when available)
  config       free-form dict a candidate generator may use (recorded, not interpreted here)
  env          extra environment variables for the child (CUDA_VISIBLE_DEVICES, TRITON_INTERPRET)
  refresh_ceilings  measure the GPU's ceilings again instead of using the cache

``run_job(spec)`` returns the worker's result dict, or one that says why there is none:
status "timeout", "cancelled" or "crashed" (with ``message`` and ``log_tail``).

The child process itself (its process group, progress lines, log tail, timeout, cancel, kill) is
handled by ``tritonify.infra.child_process.run_process``, as for the language server's jobs; this module adds what is
the harness's own: the spec and result files and the result dicts for a timeout, a cancel or a crash.
"""
from __future__ import annotations

import itertools
import json
import os
import sys
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path

from tritonify.infra.child_process import CANCELLED, NOT_STARTED, TIMEOUT, run_process, signal_name

LOG_LINES = 200   # the output kept to explain a crash; results carry the last 40

SPEC_FIELDS = ("kind", "id", "target", "shapes", "baselines", "timer", "seed", "checks", "device", "config",
               "env", "refresh_ceilings")


def job_spec(target: str, *, shapes=None, baselines=None, timer: str = "gpu", seed: int = 0, checks: int = 2,
             device: str | None = None, config: dict | None = None, env: dict | None = None,
             kind: str = "bench", id: str | None = None, refresh_ceilings: bool = False) -> dict:
    """A job spec with every field present (see the module docstring)."""
    return {"kind": kind, "id": id or uuid.uuid4().hex[:12], "target": target,
            "shapes": [list(s) for s in shapes] if shapes else None, "baselines": list(baselines) if baselines else None,
            "timer": timer, "seed": seed, "checks": checks, "device": device, "config": config or {},
            "env": env or {}, "refresh_ceilings": refresh_ceilings}


def expand_sweep(targets: Iterable[str], shapes: Iterable[tuple] | None = None,
                 configs: Iterable[dict] | None = None, **common) -> list[dict]:
    """One job per (candidate target, shape, config): the unit a scheduler spreads over GPUs."""
    shape_list = [[list(s)] for s in shapes] if shapes else [None]
    config_list = list(configs) if configs else [{}]
    return [job_spec(t, shapes=s, config=c, **common)
            for t, s, c in itertools.product(list(targets), shape_list, config_list)]


_FATAL_HINTS = (
    ("no module named 'tritonify'", "the chosen interpreter cannot import tritonify: install it there "
                                    "(pip install 'tritonify[gpu]') or pick another with --python"),
    ("illegal memory access", "the kernel made an illegal memory access (out-of-bounds read or write); "
                              "the CUDA context is lost. Check masks and offsets, or run compute-sanitizer"),
    ("out of memory", "the GPU ran out of memory; try smaller shapes"),
    ("misaligned address", "the kernel used a misaligned address (a pointer cast or an offset that breaks alignment)"),
    ("device-side assert", "a device-side assert fired inside the kernel"),
)


def _crash_message(returncode: int, log: list[str]) -> str:
    text = "\n".join(log).lower()
    for needle, message in _FATAL_HINTS:
        if needle in text:
            return message
    if returncode < 0:
        return (f"the benchmark process was killed by {signal_name(-returncode)} (a crash in the kernel, its launcher "
                "or a native library)")
    return f"the benchmark process exited with status {returncode} before writing a result"


def run_job(spec: dict, *, python: str | None = None, timeout: float | None = None,
            on_progress: Callable[[dict], None] | None = None, on_log: Callable[[str], None] | None = None,
            cancel: threading.Event | None = None, env: dict | None = None, cwd: str | None = None) -> dict:
    """Run one job in a child process of ``python`` (default: this interpreter) and return its result.

    ``on_progress`` gets each ``{"progress", "percent", "job"}`` line; ``on_log`` every other output
    line. ``cancel.set()`` or the timeout kills the child's whole process group at once (no grace: the
    result file, not the child's last words, is what counts). The process itself is run by
    ``tritonify.infra.child_process.run_process``; this adds the spec and result files and the result dicts.
    """
    python = python or sys.executable
    child_env = dict(os.environ)
    child_env.update({k: str(v) for k, v in (spec.get("env") or {}).items()})
    child_env.update({k: str(v) for k, v in (env or {}).items()})
    child_env.setdefault("PYTHONUNBUFFERED", "1")
    with tempfile.TemporaryDirectory(prefix="tritonify-job-") as tmp:
        spec_path, result_path = Path(tmp, "spec.json"), Path(tmp, "result.json")
        spec_path.write_text(json.dumps(spec))
        ended = run_process([python, "-m", "tritonify.kernels.bench.bench_child", str(spec_path), str(result_path)],
                            what="the benchmark", timeout_s=timeout, on_progress=on_progress, on_line=on_log,
                            cancelled=cancel.is_set if cancel is not None else None, cwd=cwd, env=child_env,
                            merge_output=True, tail_lines=LOG_LINES, kill_grace_s=0)
        if ended.status == NOT_STARTED:
            return {"status": "error", "job": spec.get("id"), "target": spec.get("target"), "shapes": [],
                    "message": ended.message, "summary": f"error: cannot start {python}"}
        log = ended.stderr_tail
        base = {"job": spec.get("id"), "target": spec.get("target"), "shapes": [],
                "elapsed_s": round(ended.duration_s, 2), "log_tail": log[-40:]}
        if ended.status == TIMEOUT:
            return {**base, "status": "timeout",
                    "message": f"stopped after {timeout:g} s: the kernel (or its compilation) hung or is too slow; "
                               "its process group was killed and nothing was recorded as a measurement",
                    "summary": f"TIMEOUT after {timeout:g} s"}
        if ended.status == CANCELLED:
            return {**base, "status": "cancelled", "message": "cancelled; the benchmark process was killed",
                    "summary": "cancelled"}
        if result_path.is_file():
            try:
                result = json.loads(result_path.read_text())
                result.setdefault("log_tail", log[-40:])
                return result
            except ValueError:
                pass
        message = _crash_message(ended.returncode, log)
        return {**base, "status": "crashed", "returncode": ended.returncode, "message": message,
                "summary": f"CRASHED: {message}"}
