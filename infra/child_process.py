"""Run a long job (benchmark, profile) in a child process that can be watched and stopped.

The one place where Tritonify starts, watches, stops and classifies a child process: the language
server (`run_job`, async), the benchmark harness (with the CLI's `bench`) and its sweeps
(`run_process`, from threads; `tritonify.kernels.bench.bench_jobs`), the ncu runs and the compile
children (`tritonify.tools`), the git and interpreter probes all come here. Why a child
process: a benchmark runs the user's kernels, which may crash the interpreter, exhaust memory or
hang; none of that may take the caller down with it. So the child:

* is started from an argument list (never a shell string), in its own process group
  (`start_new_session`), so cancelling or timing out kills it *and* whatever it started;
* reports progress as JSON lines on stderr, `{"progress": "message", "percent": N}`, which are
  handed to a callback; every other stderr line is kept (the tail) for error messages;
* writes its result on stdout, returned as text for the caller to parse.

Every way a job can end gets a one-line message a person can act on (`JobResult.message`).

The core (`run_process`) is synchronous: threads read the pipes and the calling thread waits,
polling the cancel probe. `run_job` runs that core on a thread of its own, so the server's event
loop stays free, and hands the callbacks back to the loop. `PipedChild` is a child started early
and sent its one request later on stdin (ncu's report reader).

No other module of Tritonify imports `subprocess`, forks or execs (tests/test_import_graph.py).
"""
from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO

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
READER_WAIT_S = 5.0               # how long the pipes may stay open after the child ended

ProgressCallback = Callable[[str, "int | None"], None]
RecordCallback = Callable[[dict], None]


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


# ---- progress lines ---------------------------------------------------------------------------

def progress_record(line: str) -> dict | None:
    """The JSON object of a progress line (`{"progress": "message", ...}`, every field kept); None otherwise."""
    line = line.strip()
    if not (line.startswith("{") and '"progress"' in line):
        return None
    try:
        data = json.loads(line)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("progress"), str):
        return None
    return data


def message_and_percent(record: dict) -> tuple[str, int | None]:
    """A progress record's (message, percent clamped to 0..100, None without a number)."""
    percent = record.get("percent")
    if isinstance(percent, bool) or not isinstance(percent, (int, float)):
        percent = None
    else:
        percent = max(0, min(100, int(percent)))
    return record["progress"], percent


def _as_records(on_progress: ProgressCallback | None) -> RecordCallback | None:
    """A (message, percent) callback as one that takes the whole progress record."""
    if on_progress is None:
        return None
    return lambda record: on_progress(*message_and_percent(record))


# ---- how it ended -----------------------------------------------------------------------------

def signal_name(number: int) -> str:
    """`SIGSEGV` for 11; `signal 99` for a number with no name."""
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
        return CRASHED, f"{what} crashed: killed by {signal_name(sig)}{hint}" + (f"; last output: {last}" if last else "")
    if any("MemoryError" in line or "OutOfMemoryError" in line for line in tail):
        return OOM, f"{what} ran out of memory: {last}"
    return FAILED, f"{what} failed with exit status {returncode}" + (f": {last}" if last else "")


# ---- stopping ---------------------------------------------------------------------------------

def signal_group(pid: int, sig: int) -> None:
    """Send `sig` to the process group `pid` (a child started with `start_new_session`); a group
    that is gone already is not an error. The one process-group killer of Tritonify."""
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def kill_job(pid: int) -> None:
    """Kill a job's whole process group at once (for a caller that is about to exit)."""
    signal_group(pid, signal.SIGKILL)


def stop_jobs(pids: list[int], grace_s: float = 1.0) -> None:
    """Stop the process groups of jobs for a caller that is about to exit: SIGTERM, up to
    `grace_s` for them to go (a job that started processes in a session of its own, as
    `tritonify profile` starts ncu, stops them on SIGTERM), then SIGKILL whatever is left."""
    for pid in pids:
        signal_group(pid, signal.SIGTERM)
    end = time.monotonic() + grace_s
    left = list(pids)
    while left and time.monotonic() < end:
        left = [pid for pid in left if _group_alive(pid)]
        if left:
            time.sleep(0.02)
    for pid in left:
        signal_group(pid, signal.SIGKILL)


def _group_alive(pid: int) -> bool:
    # no waitpid here: the job's own runner reaps its leader (reaping it from here would race
    # with Popen.wait); an unreaped leader only keeps the wait going until the grace ends
    try:
        os.killpg(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _wait(proc: subprocess.Popen, timeout_s: float) -> None:
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        pass


def stop_group(proc: subprocess.Popen, grace_s: float) -> None:
    """SIGTERM the whole process group of `proc` (started with `start_new_session`), then SIGKILL
    it if it is still there after `grace_s` (at once when `grace_s` is 0)."""
    if grace_s > 0:
        signal_group(proc.pid, signal.SIGTERM)
        _wait(proc, grace_s)
    signal_group(proc.pid, signal.SIGKILL)
    _wait(proc, 10.0)


# ---- reading the pipes ------------------------------------------------------------------------

def _safe_call(fn: Callable[..., object], *args) -> bool:
    """`fn(*args)` as a bool; a broken callback must not stop the job's bookkeeping."""
    try:
        return bool(fn(*args))
    except Exception:  # noqa: BLE001 - whatever a caller's callback raises
        return False


def _read_lines(stream: IO[bytes], tail: deque, on_progress: RecordCallback | None,
                on_line: Callable[[str], None] | None) -> None:
    for raw in iter(stream.readline, b""):
        line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        record = progress_record(line)
        if record is not None:
            if on_progress is not None:
                _safe_call(on_progress, record)
            continue
        tail.append(line)
        if on_line is not None:
            _safe_call(on_line, line)


def _read_stdout(stream: IO[bytes], chunks: list[bytes]) -> None:
    size = 0
    for chunk in iter(lambda: stream.read1(65536), b""):
        if size < STDOUT_LIMIT:
            chunks.append(chunk[: STDOUT_LIMIT - size])
            size += len(chunk)


def _reader(target: Callable, *args) -> threading.Thread:
    thread = threading.Thread(target=target, args=args, name="tritonify-job-reader", daemon=True)
    thread.start()
    return thread


def _check_argv(argv: Sequence[str]) -> None:
    if isinstance(argv, (str, bytes)) or not argv or not all(isinstance(a, str) for a in argv):
        raise TypeError("run_job takes a non-empty list of strings (never a shell string)")


# ---- the core ---------------------------------------------------------------------------------

def run_process(
    argv: Sequence[str],
    *,
    what: str = "job",
    timeout_s: float | None = 600.0,
    on_progress: RecordCallback | None = None,
    on_line: Callable[[str], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    cwd: str | None = None,
    env: dict | None = None,
    on_started: Callable[[int], None] | None = None,
    merge_output: bool = False,
    tail_lines: int = STDERR_TAIL_LINES,
    kill_grace_s: float | None = None,
    while_running: Callable[[], None] | None = None,
    sweep: bool = True,
) -> JobResult:
    """Run `argv` as a child process and wait (blocking this thread) for it, its timeout, or `cancelled()`.

    `on_progress` receives each progress line's whole JSON object; `on_line` every other line, which
    is also kept in the tail (the last `tail_lines`). `merge_output` sends the child's stdout into the
    same stream as its stderr (for a child whose result travels in a file), and `stdout` is then empty.
    A stop (timeout, cancel) sends SIGTERM and SIGKILL after `kill_grace_s` (default `KILL_GRACE_S`;
    0: SIGKILL at once). `timeout_s=None` waits as long as it takes. `while_running()` is called
    once, on this thread, as soon as the child runs (work that overlaps it); what it raises stops the
    group and propagates. Once the child has exited, what it left in its group is killed, unless
    `sweep=False`. Never raises for anything the child does; raises TypeError for a string instead
    of a list, and re-raises an exception of the waiting thread (KeyboardInterrupt, or one of
    `while_running`) after killing the process group.
    """
    _check_argv(argv)
    grace_s = KILL_GRACE_S if kill_grace_s is None else kill_grace_s
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if merge_output else subprocess.PIPE, cwd=cwd, env=env, start_new_session=True,
        )
    except OSError as exc:
        return JobResult(NOT_STARTED, f"cannot start {what}: {argv[0]}: {exc.strerror or exc}")

    tail: deque = deque(maxlen=tail_lines)
    chunks: list[bytes] = []
    line_stream = proc.stdout if merge_output else proc.stderr
    readers = {line_stream: _reader(_read_lines, line_stream, tail, on_progress, on_line)}
    if not merge_output:
        readers[proc.stdout] = _reader(_read_stdout, proc.stdout, chunks)
    stopped_by_us: str | None = None
    try:
        if on_started is not None:
            _safe_call(on_started, proc.pid)
        if while_running is not None:
            while_running()
        while proc.poll() is None:
            if cancelled is not None and _safe_call(cancelled):
                stopped_by_us = CANCELLED
                break
            if timeout_s is not None and time.monotonic() - start > timeout_s:
                stopped_by_us = TIMEOUT
                break
            _wait(proc, POLL_S)
    except BaseException:  # KeyboardInterrupt / SystemExit here: never leave the child running
        stop_group(proc, 0)
        raise
    if stopped_by_us:
        stop_group(proc, grace_s)
    elif sweep:
        signal_group(proc.pid, signal.SIGKILL)  # grandchildren the job left behind
    deadline = time.monotonic() + READER_WAIT_S
    for reader in readers.values():
        reader.join(timeout=max(0.0, deadline - time.monotonic()))
    for stream, reader in readers.items():
        if not reader.is_alive():  # else a grandchild outside the group still holds the pipe
            stream.close()
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


# ---- a child started early and asked once -----------------------------------------------------

class PipedChild:
    """A child started now and sent its one request later, on stdin; its answer is what it writes on
    stdout before it exits (ncu's report reader: it imports ncu_report while the profiled run is
    still going). In its own process group like every job; `close()` kills the group."""

    def __init__(self, argv: Sequence[str], *, what: str = "child", env: dict | None = None,
                 cwd: str | None = None):
        _check_argv(argv)
        self.what = what
        self.proc = subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env, cwd=cwd, start_new_session=True)

    def ask(self, request: str, timeout_s: float) -> JobResult:
        """Send `request`, close stdin, wait up to `timeout_s` for the child to exit (then its group
        is killed: status TIMEOUT); stdout is the answer, the stderr tail the error lines."""
        start = time.monotonic()
        try:
            out, err = self.proc.communicate(request.encode("utf-8"), timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.close()
            return JobResult(TIMEOUT, f"{self.what} gave no answer within {timeout_s:g} s; its process group was stopped",
                             duration_s=time.monotonic() - start)
        except BaseException:
            self.close()
            raise
        signal_group(self.proc.pid, signal.SIGKILL)   # what it left behind
        tail = err.decode("utf-8", errors="replace").splitlines()[-STDERR_TAIL_LINES:]
        status, message = describe_exit(self.proc.returncode, tail, self.what)
        return JobResult(status, message, self.proc.returncode, out.decode("utf-8", errors="replace"), tail,
                         time.monotonic() - start)

    def close(self) -> None:
        """Kill the child's process group (nothing when it is gone) and reap it."""
        if self.proc.poll() is None:
            stop_group(self.proc, 0)


# ---- the event loop's view --------------------------------------------------------------------

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
    """Run `argv` as a child process and wait for it, its timeout, or `cancelled()`, without blocking the loop.

    `what` names the job in messages ("benchmark of add_kernel"). `on_started(pid)` receives
    the child's pid, which is also its process group id (for `kill_job` at shutdown). The callbacks
    and `cancelled` run on the event loop; the process is watched by `run_process` on a thread of its
    own. Cancelling the awaiting task stops the process group before `CancelledError` goes on. Never
    raises for anything the child does; raises TypeError only for a caller's mistake (a string
    instead of a list).
    """
    _check_argv(argv)
    loop = asyncio.get_running_loop()
    stop = threading.Event()
    done: asyncio.Future = loop.create_future()

    def on_loop(callback: Callable | None) -> Callable | None:
        if callback is None:
            return None
        return lambda *args: _call_soon(loop, _safe_call, callback, *args)

    progress = _as_records(on_progress)

    def watch() -> None:
        try:
            outcome = run_process(argv, what=what, timeout_s=timeout_s, on_progress=on_loop(progress),
                                  cancelled=stop.is_set, cwd=cwd, env=env, on_started=on_loop(on_started))
        except BaseException as exc:  # noqa: BLE001 - a bug in the core: the awaiting task sees it
            _call_soon(loop, _settle, done, None, exc)
        else:
            _call_soon(loop, _settle, done, outcome, None)

    threading.Thread(target=watch, name="tritonify-job", daemon=True).start()
    try:
        while not done.done():
            if cancelled is not None and _safe_call(cancelled):
                stop.set()
            await asyncio.wait({done}, timeout=POLL_S)
    except asyncio.CancelledError:
        stop.set()
        await asyncio.wait({done})
        raise
    return done.result()


def _call_soon(loop: asyncio.AbstractEventLoop, fn: Callable[..., object], *args) -> None:
    """Run `fn(*args)` on `loop` (from another thread); nothing when the loop is closed (nobody is waiting)."""
    try:
        loop.call_soon_threadsafe(fn, *args)
    except RuntimeError:
        pass


def _settle(done: asyncio.Future, outcome: JobResult | None, error: BaseException | None) -> None:
    if done.done():
        return
    if error is not None:
        done.set_exception(error)
    else:
        done.set_result(outcome)


# ---- a long-lived child that talks over its pipes (the language server's lint worker) ------------
# (kept apart from the jobs above: the lint worker is not a job that ends with a result; it serves
# requests on stdin/stdout until its stdin closes, and its stderr goes where the caller's goes)

async def start_piped(argv: Sequence[str]) -> asyncio.subprocess.Process:
    """Start `argv` (a list, never a shell string) with its stdin and stdout as pipes for the
    caller to speak over, and its stderr the caller's."""
    _check_argv(argv)
    return await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=None)
