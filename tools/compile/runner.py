"""Run the compile worker in a child process with the user's interpreter, under a timeout.

The child gets a copy of the editor's text (so unsaved edits compile, and line numbers are the
user's), a JSON request, and an environment that pins what changes the code: no interpreter
mode, `TRITON_DEFAULT_FP_FUSION` explicit (its default flips in 3.10), and the ptxas log on.
On timeout the child's whole process group is killed (ptxas included), and `stop_all_workers()`
kills every running one (the language server calls it at shutdown, so no compile outlives it).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from tritonify.infra.child_process import stop_group

WORKER = Path(__file__).with_name("compile_child.py")
_RUNNING: set[subprocess.Popen] = set()
_RUNNING_LOCK = threading.Lock()


class WorkerError(RuntimeError):
    """The child did not produce a result (timeout, crash, no Triton)."""

    def __init__(self, message: str, *, kind: str = "failed", stderr: str = ""):
        super().__init__(message)
        self.kind = kind
        self.stderr = stderr


def child_env(base: dict | None = None) -> dict:
    env = dict(os.environ if base is None else base)
    env.pop("TRITON_INTERPRET", None)
    env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    env["TRITON_DUMP_PTXAS_LOG"] = "1"
    # A compile served from Triton's own cache has no ptxas log, and the spill counts are read from
    # it: compile every time (tritonify's cache keeps the results).
    env["TRITON_ALWAYS_COMPILE"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run_worker(text: str, path: str, request: dict, *, python: str | None = None, timeout: float = 120.0) -> dict:
    """Compile per `request` in a child; return the worker's JSON result."""
    python = python or sys.executable
    stem = Path(path).stem if path else "kernel"
    stem = "".join(c if c.isalnum() or c == "_" else "_" for c in stem) or "kernel"
    with tempfile.TemporaryDirectory(prefix="tritonify-inspect-") as tmp:
        source = Path(tmp) / f"{stem}.py"
        source.write_text(text, encoding="utf-8")
        req = dict(request, path=str(source), original_path=str(Path(path).resolve()) if path else str(source),
                   module_name=f"tritonify_inspect_{stem}")
        req_file = Path(tmp) / "request.json"
        req_file.write_text(json.dumps(req), encoding="utf-8")
        try:
            proc = subprocess.Popen([python, str(WORKER), str(req_file)], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, env=child_env(), cwd=tmp,
                                    start_new_session=True)
        except OSError as exc:
            raise WorkerError(f"cannot start {python}: {exc}", kind="no-python") from exc
        with _RUNNING_LOCK:
            _RUNNING.add(proc)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop_group(proc, 0)
            out, err = proc.communicate()
            raise WorkerError(f"compiling took longer than {timeout:g} s and was stopped "
                              "(a large BLOCK with few warps can keep ptxas busy for minutes)",
                              kind="timeout", stderr=err[-2000:])
        finally:
            with _RUNNING_LOCK:
                _RUNNING.discard(proc)
        last = next((line for line in reversed(out.splitlines()) if line.startswith("{")), None)
        if last is None:
            tail = err.strip()[-1500:]
            if "No module named 'triton'" in err:
                raise WorkerError(f"{python} cannot import triton: pick the interpreter that has it",
                                  kind="no-triton", stderr=tail)
            raise WorkerError(f"the compile worker exited with code {proc.returncode} and no result", stderr=tail)
        result = json.loads(last)
        result["compiled_path"] = str(source)
        return result


def stop_all_workers() -> int:
    """Kill every compile worker still running (with its ptxas); the number killed."""
    with _RUNNING_LOCK:
        running = list(_RUNNING)
    for proc in running:
        stop_group(proc, 0)
    return len(running)
