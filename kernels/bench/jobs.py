"""Jobs: JSON specs, each run in its own child process, with progress, cancel and a timeout.

A sweep (shapes x candidates x configs) is a list of independent job specs; ``run_queue`` runs them
one after another here, and a multi-GPU or multi-host scheduler can hand the same specs to other
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

This runner is self-contained (it does not use ``tritonify.jobs``): it needs a result file and a
process group per job, which is all it does.
"""
from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

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
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"the benchmark process was killed by {name} (a crash in the kernel, its launcher or a native library)"
    return f"the benchmark process exited with status {returncode} before writing a result"


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def run_job(spec: dict, *, python: str | None = None, timeout: float | None = None,
            on_progress: Callable[[dict], None] | None = None, on_log: Callable[[str], None] | None = None,
            cancel: threading.Event | None = None, env: dict | None = None, cwd: str | None = None) -> dict:
    """Run one job in a child process of ``python`` (default: this interpreter) and return its result.

    ``on_progress`` gets each ``{"progress", "percent", "job"}`` line; ``on_log`` every other output
    line. ``cancel.set()`` or the timeout kills the child's whole process group.
    """
    python = python or sys.executable
    child_env = dict(os.environ)
    child_env.update({k: str(v) for k, v in (spec.get("env") or {}).items()})
    child_env.update({k: str(v) for k, v in (env or {}).items()})
    child_env.setdefault("PYTHONUNBUFFERED", "1")
    log: deque[str] = deque(maxlen=200)
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="tritonify-job-") as tmp:
        spec_path, result_path = Path(tmp, "spec.json"), Path(tmp, "result.json")
        spec_path.write_text(json.dumps(spec))
        try:
            proc = subprocess.Popen([python, "-m", "tritonify.kernels.bench.worker", str(spec_path), str(result_path)],
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    env=child_env, cwd=cwd, start_new_session=True, text=True, errors="replace")
        except OSError as exc:
            return {"status": "error", "job": spec.get("id"), "target": spec.get("target"), "shapes": [],
                    "message": f"cannot start {python}: {exc}", "summary": f"error: cannot start {python}"}

        def pump():
            for line in proc.stdout:
                line = line.rstrip("\n")
                if line.startswith("{\"progress\""):
                    try:
                        msg = json.loads(line)
                        if on_progress:
                            on_progress(msg)
                        continue
                    except ValueError:
                        pass
                log.append(line)
                if on_log:
                    on_log(line)

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        outcome = None
        try:
            while proc.poll() is None:
                if cancel is not None and cancel.is_set():
                    outcome = "cancelled"
                elif timeout is not None and time.time() - started > timeout:
                    outcome = "timeout"
                if outcome:
                    _kill_group(proc)
                    break
                time.sleep(0.05)
        except BaseException:  # KeyboardInterrupt / SystemExit in the parent: never leave the child running
            _kill_group(proc)
            raise
        reader.join(timeout=5)
        base = {"job": spec.get("id"), "target": spec.get("target"), "shapes": [],
                "elapsed_s": round(time.time() - started, 2), "log_tail": list(log)[-40:]}
        if outcome == "timeout":
            return {**base, "status": "timeout",
                    "message": f"stopped after {timeout:g} s: the kernel (or its compilation) hung or is too slow; "
                               "its process group was killed and nothing was recorded as a measurement",
                    "summary": f"TIMEOUT after {timeout:g} s"}
        if outcome == "cancelled":
            return {**base, "status": "cancelled", "message": "cancelled; the benchmark process was killed",
                    "summary": "cancelled"}
        if result_path.is_file():
            try:
                result = json.loads(result_path.read_text())
                result.setdefault("log_tail", list(log)[-40:])
                return result
            except ValueError:
                pass
        message = _crash_message(proc.returncode, list(log))
        return {**base, "status": "crashed", "returncode": proc.returncode, "message": message,
                "summary": f"CRASHED: {message}"}


def run_queue(specs: Iterable[dict], *, runner: Callable[..., dict] = run_job, **options) -> Iterator[dict]:
    """Run job specs one after another (each in its own child); yields each result as it ends.

    A crash, hang or OOM in one job ends that job only; the queue goes on.
    """
    for spec in specs:
        yield runner(spec, **options)
