"""Run a long job (benchmark, profile) in a child process that can be watched and stopped.

Used by the language server and by the command line. Why a child process: a benchmark runs
the user's kernels, which may crash the interpreter, exhaust memory or hang; none of that may
take the caller down with it. So the child:

* is started from an argument list (never a shell string), in its own process group
  (`start_new_session`), so cancelling or timing out kills it *and* whatever it started;
* reports progress as JSON lines on stderr, `{"progress": "message", "percent": N}`, which are
  handed to a callback; every other stderr line is kept (the tail) for error messages;
* writes its result on stdout, returned as text for the caller to parse.

Every way a job can end gets a one-line message a person can act on (`JobResult.message`).
"""
from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Sequence

# How the job ended.
OK = "ok"                 # exit status 0
FAILED = "failed"         # non-zero exit status
CRASHED = "crashed"       # killed by a signal we did not send
OOM = "out-of-memory"     # killed by SIGKILL we did not send, or a MemoryError in the child
TIMEOUT = "timeout"       # ran past its time limit; we stopped it
CANCELLED = "cancelled"   # the caller asked to stop it
NOT_STARTED = "not-started"

STDERR_TAIL_LINES = 40
STDOUT_LIMIT = 64 * 1024 * 1024   # a result larger than this is cut (and then fails to parse)
KILL_GRACE_S = 2.0                # SIGTERM first, SIGKILL after this
POLL_S = 0.05                     # how often the cancel callback is asked

ProgressCallback = Callable[[str, "int | None"], None]


@dataclass
class JobResult:
    status: str
    message: str
    returncode: int | None = None
    stdout: str = ""
    stderr_tail: list[str] = field(default_factory=list)
    duration_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == OK

    @property
    def stderr(self) -> str:
        return "\n".join(self.stderr_tail)


def parse_progress_line(line: str) -> tuple[str, int | None] | None:
    """`{"progress": "message", "percent": N}` -> (message, N); anything else -> None."""
    line = line.strip()
    if not (line.startswith("{") and '"progress"' in line):
        return None
    try:
        data = json.loads(line)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("progress"), str):
        return None
    percent = data.get("percent")
    if isinstance(percent, bool) or not isinstance(percent, (int, float)):
        percent = None
    else:
        percent = max(0, min(100, int(percent)))
    return data["progress"], percent


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _last_error_line(tail: Sequence[str]) -> str:
    for line in reversed(tail):
        if line.strip():
            return line.strip()
    return ""


def describe_exit(returncode: int, tail: Sequence[str], what: str) -> tuple[str, str]:
    """(status, message) for a child that ended by itself with `returncode`."""
    last = _last_error_line(tail)
    if returncode == 0:
        return OK, f"{what} finished"
    if returncode < 0:
        sig = -returncode
        if sig == signal.SIGKILL:
            return OOM, (f"{what} was killed by SIGKILL, most likely by the out-of-memory killer; "
                         "try a smaller problem size")
        hint = {signal.SIGSEGV: " (segmentation fault)", signal.SIGABRT: " (aborted)",
                signal.SIGBUS: " (bus error)"}.get(sig, "")
        return CRASHED, f"{what} crashed: killed by {_signal_name(sig)}{hint}" + (f"; last output: {last}" if last else "")
    if any("MemoryError" in line or "OutOfMemoryError" in line for line in tail):
        return OOM, f"{what} ran out of memory: {last}"
    return FAILED, f"{what} failed with exit status {returncode}" + (f": {last}" if last else "")


def _kill_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


async def _read_stderr(stream: asyncio.StreamReader, tail: deque, on_progress: ProgressCallback | None) -> None:
    while True:
        raw = await stream.readline()
        if not raw:
            return
        line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        progress = parse_progress_line(line)
        if progress is not None:
            if on_progress is not None:
                try:
                    on_progress(*progress)
                except Exception:  # a broken callback must not stop the job's bookkeeping
                    pass
            continue
        tail.append(line)


async def _read_stdout(stream: asyncio.StreamReader, chunks: list[bytes]) -> None:
    size = 0
    while True:
        chunk = await stream.read(65536)
        if not chunk:
            return
        if size < STDOUT_LIMIT:
            chunks.append(chunk[: STDOUT_LIMIT - size])
            size += len(chunk)


async def run_job(
    argv: Sequence[str],
    *,
    what: str = "job",
    timeout_s: float = 600.0,
    on_progress: ProgressCallback | None = None,
    cancelled: Callable[[], bool] | None = None,
    cwd: str | None = None,
    env: dict | None = None,
    on_started: Callable[[int], None] | None = None,
) -> JobResult:
    """Run `argv` as a child process and wait for it, its timeout, or `cancelled()`.

    `what` names the job in messages ("benchmark of add_kernel"). `on_started(pid)` receives
    the child's pid, which is also its process group id (for `kill_job` at shutdown). Never
    raises for anything the child does; raises TypeError only for a caller's mistake (a
    string instead of a list).
    """
    if isinstance(argv, (str, bytes)) or not argv or not all(isinstance(a, str) for a in argv):
        raise TypeError("run_job takes a non-empty list of strings (never a shell string)")
    start = time.monotonic()
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, cwd=cwd, env=env, start_new_session=True,
        )
    except (FileNotFoundError, PermissionError, NotADirectoryError, OSError) as exc:
        return JobResult(NOT_STARTED, f"cannot start {what}: {argv[0]}: {exc.strerror or exc}")

    if on_started is not None:
        _safe_call(lambda: on_started(proc.pid) or True)
    tail: deque = deque(maxlen=STDERR_TAIL_LINES)
    chunks: list[bytes] = []
    readers = asyncio.gather(_read_stderr(proc.stderr, tail, on_progress), _read_stdout(proc.stdout, chunks))
    waiter = asyncio.ensure_future(proc.wait())
    stopped_by_us: str | None = None
    try:
        while not waiter.done():
            if cancelled is not None and _safe_call(cancelled):
                stopped_by_us = CANCELLED
                break
            if time.monotonic() - start > timeout_s:
                stopped_by_us = TIMEOUT
                break
            await asyncio.wait({waiter}, timeout=POLL_S)
    except asyncio.CancelledError:
        stopped_by_us = CANCELLED
        await _stop(proc, waiter)
        readers.cancel()
        raise
    if stopped_by_us:
        await _stop(proc, waiter)
    else:
        _kill_group(proc.pid, signal.SIGKILL)  # grandchildren the job left behind
    try:
        await asyncio.wait_for(readers, timeout=5)
    except (asyncio.TimeoutError, Exception):
        readers.cancel()
    duration = time.monotonic() - start
    stdout = b"".join(chunks).decode("utf-8", errors="replace")
    rc = proc.returncode
    if stopped_by_us == CANCELLED:
        status, message = CANCELLED, f"{what} cancelled; its process group was stopped"
    elif stopped_by_us == TIMEOUT:
        status, message = TIMEOUT, (f"{what} gave no result within {timeout_s:g} s (it may hang); "
                                    "its process group was stopped")
    else:
        status, message = describe_exit(rc if rc is not None else -1, list(tail), what)
    return JobResult(status, message, rc, stdout, list(tail), duration)


def kill_job(pid: int) -> None:
    """Kill a job's whole process group at once (for a caller that is about to exit)."""
    _kill_group(pid, signal.SIGKILL)


def _safe_call(fn: Callable[[], bool]) -> bool:
    try:
        return bool(fn())
    except Exception:
        return False


async def _stop(proc: asyncio.subprocess.Process, waiter: asyncio.Future) -> None:
    """SIGTERM the whole process group, then SIGKILL it if it is still there after a grace."""
    _kill_group(proc.pid, signal.SIGTERM)
    try:
        await asyncio.wait_for(asyncio.shield(waiter), timeout=KILL_GRACE_S)
    except asyncio.TimeoutError:
        pass
    _kill_group(proc.pid, signal.SIGKILL)
    try:
        await asyncio.wait_for(asyncio.shield(waiter), timeout=KILL_GRACE_S)
    except asyncio.TimeoutError:  # pragma: no cover - SIGKILL cannot be ignored
        pass


def run_job_blocking(argv: Sequence[str], **kwargs) -> JobResult:
    """`run_job` for callers without an event loop (the command line)."""
    return asyncio.run(run_job(argv, **kwargs))
