"""Run the compile worker in a child process with the user's interpreter, under a timeout.

The child gets a copy of the editor's text (so unsaved edits compile, and line numbers are the
user's), a JSON request, and an environment that pins what changes the code: no interpreter
mode, `TRITON_DEFAULT_FP_FUSION` explicit (its default flips in 3.10), and the ptxas log on.
It writes each cubin beside the copy and names the `cuobjdump` / `nvdisasm` of its Triton; the
parent runs them on the cubins (`disassemble`). Every process starts through
`tritonify.infra.child_process` in its own process group: on timeout the group is killed (ptxas
included), and `stop_all_workers()` kills every running one (the language server calls it at
shutdown, so no compile outlives it).
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
from pathlib import Path

from tritonify.infra.child_process import OK, TIMEOUT, kill_job, run_process

WORKER = Path(__file__).with_name("compile_child.py")
TOOL_TIMEOUT_S = 60.0
_RUNNING: set[int] = set()          # process groups of the running workers and their tools
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


def _run(argv: list[str], *, what: str, timeout_s: float, cwd: str | None = None, env: dict | None = None):
    """`run_process` with the child's group registered for `stop_all_workers` while it runs."""
    pids: list[int] = []

    def started(pid: int) -> None:
        pids.append(pid)
        with _RUNNING_LOCK:
            _RUNNING.add(pid)

    try:
        return run_process(argv, what=what, timeout_s=timeout_s, cwd=cwd, env=env, on_started=started,
                           kill_grace_s=0, tail_lines=80)
    finally:
        with _RUNNING_LOCK:
            _RUNNING.difference_update(pids)


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
        outcome = _run([python, str(WORKER), str(req_file)], what="the compile worker", timeout_s=timeout,
                       cwd=tmp, env=child_env())
        err = outcome.stderr
        if outcome.status == "not-started":
            raise WorkerError(f"cannot start {python}: {outcome.message.rpartition(': ')[2]}", kind="no-python")
        if outcome.status == TIMEOUT:
            raise WorkerError(f"compiling took longer than {timeout:g} s and was stopped "
                              "(a large BLOCK with few warps can keep ptxas busy for minutes)",
                              kind="timeout", stderr=err[-2000:])
        last = next((line for line in reversed(outcome.stdout.splitlines()) if line.startswith("{")), None)
        if last is None:
            tail = err.strip()[-1500:]
            if "No module named 'triton'" in err:
                raise WorkerError(f"{python} cannot import triton: pick the interpreter that has it",
                                  kind="no-triton", stderr=tail)
            raise WorkerError(f"the compile worker exited with code {outcome.returncode} and no result", stderr=tail)
        result = json.loads(last)
        disassemble(result, request.get("want", []))
        result["compiled_path"] = str(source)
        return result


def disassemble(result: dict, want: list[str]) -> None:
    """Fill each compiled job's `res_usage` (`cuobjdump -res-usage`) and, when wanted, `sass`
    (`nvdisasm -g -c`) from the cubin the child wrote, with the tools the child named; "" without
    the tool, `<failed: ...>` when it fails."""
    tools = result.pop("tools", None) or {}
    for job in result.get("jobs") or []:
        cubin = job.pop("cubin", None)
        if not cubin:
            continue
        job["res_usage"] = _run_tool(tools.get("cuobjdump"), ["-res-usage", cubin])
        if "sass" in want:
            job["sass"] = _run_tool(tools.get("nvdisasm"), ["-g", "-c", cubin])


def _run_tool(tool: str | None, args: list[str]) -> str:
    if not tool:
        return ""
    outcome = _run([tool, *args], what=Path(tool).name, timeout_s=TOOL_TIMEOUT_S)
    if outcome.status == OK:
        return outcome.stdout
    return f"<failed: {(outcome.stderr.strip() or outcome.message)[:300]}>"


def stop_all_workers() -> int:
    """Kill every compile worker still running (with its ptxas) and the tools reading its cubins;
    the number killed."""
    with _RUNNING_LOCK:
        running = list(_RUNNING)
    for pid in running:
        kill_job(pid)
    return len(running)
