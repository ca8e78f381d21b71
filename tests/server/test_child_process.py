"""tritonify.infra.child_process: the child-process runner used by the server (and the CLI's bench/profile)."""
from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from tritonify.infra import child_process as jobs
from tritonify.infra.child_process import run_job

PY = sys.executable


def run_job_blocking(argv, **kwargs):
    """The server's `run_job`, driven to the end on an event loop of its own."""
    return asyncio.run(run_job(argv, **kwargs))


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def test_ok_job_returns_stdout_and_forwards_progress_lines():
    seen = []
    code = ("import json,sys; print(json.dumps({'progress':'half','percent':50}), file=sys.stderr);"
            "print('plain stderr', file=sys.stderr); print(json.dumps({'progress':'x','percent':250}), file=sys.stderr);"
            "print('{\"summary\": \"1 ms\"}')")
    result = run_job_blocking([PY, "-c", code], what="bench", on_progress=lambda m, p: seen.append((m, p)))
    assert result.ok and result.returncode == 0
    assert result.stdout.strip() == '{"summary": "1 ms"}'
    assert seen == [("half", 50), ("x", 100)]          # percent clamped to 0..100
    assert result.stderr_tail == ["plain stderr"]       # progress lines are not kept as errors


@pytest.mark.parametrize("line,expected", [
    ('{"progress": "a", "percent": 3}', ("a", 3)),
    ('{"progress": "a"}', ("a", None)),
    ('{"progress": "a", "percent": true}', ("a", None)),
    ('{"progress": 5}', None),
    ('{"progress": "a"', None),
    ("progress", None),
])
def test_progress_lines_read_as_message_and_percent(line, expected):
    record = jobs.progress_record(line)
    assert (None if record is None else jobs.message_and_percent(record)) == expected


def test_failure_names_exit_status_and_last_error_line():
    result = run_job_blocking([PY, "-c", "import sys; print('boom: no kernel', file=sys.stderr); sys.exit(3)"], what="bench of k")
    assert result.status == jobs.FAILED and result.returncode == 3
    assert result.message == "bench of k failed with exit status 3: boom: no kernel"


def test_segfault_is_a_crash():
    result = run_job_blocking([PY, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"], what="bench")
    assert result.status == jobs.CRASHED
    assert "SIGSEGV" in result.message and "segmentation fault" in result.message


def test_sigkill_we_did_not_send_reads_as_out_of_memory():
    result = run_job_blocking([PY, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"], what="bench")
    assert result.status == jobs.OOM and "out-of-memory" in result.message


def test_memory_error_in_the_child_reads_as_out_of_memory():
    result = run_job_blocking([PY, "-c", "raise MemoryError('cannot allocate 80 GiB')"], what="bench")
    assert result.status == jobs.OOM and "ran out of memory" in result.message


def test_hang_ends_at_the_timeout():
    start = time.monotonic()
    result = run_job_blocking([PY, "-c", "import time; time.sleep(60)"], what="profile", timeout_s=0.5)
    assert result.status == jobs.TIMEOUT and "within 0.5 s" in result.message
    assert time.monotonic() - start < 5


def test_cancel_kills_the_whole_process_group(tmp_path):
    pidfile = tmp_path / "pids"
    code = ("import subprocess, sys, time, os\n"
            "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            f"open({str(pidfile)!r}, 'w').write(f'{{os.getpid()}} {{c.pid}}')\n"
            "time.sleep(60)\n")

    def cancelled():
        return pidfile.exists() and pidfile.read_text().count(" ") == 1

    result = run_job_blocking([PY, "-c", code], what="bench", cancelled=cancelled, timeout_s=30)
    assert result.status == jobs.CANCELLED
    parent, child = map(int, pidfile.read_text().split())
    deadline = time.monotonic() + 3
    while (_alive(parent) or _alive(child)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(parent) and not _alive(child)


def test_a_child_ignoring_sigterm_is_killed_after_the_grace(monkeypatch):
    monkeypatch.setattr(jobs, "KILL_GRACE_S", 0.3)
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('{\"progress\":\"ready\"}', file=__import__('sys').stderr, flush=True); time.sleep(60)"
    ready = []
    start = time.monotonic()
    result = run_job_blocking([PY, "-c", code], on_progress=lambda m, p: ready.append(m), cancelled=lambda: bool(ready))
    assert result.status == jobs.CANCELLED
    assert time.monotonic() - start < 5


def test_missing_interpreter_is_not_started():
    result = run_job_blocking(["/nonexistent/python3", "-m", "tritonify"], what="bench")
    assert result.status == jobs.NOT_STARTED
    assert "/nonexistent/python3" in result.message


@pytest.mark.parametrize("argv", ["python -c 1", [], [PY, 3]])
def test_argv_must_be_a_list_of_strings(argv):
    with pytest.raises(TypeError):
        run_job_blocking(argv)


def test_the_event_loop_stays_free_while_a_job_runs():
    async def main():
        job = asyncio.ensure_future(run_job([PY, "-c", "import time; time.sleep(0.5)"]))
        ticks = 0
        while not job.done():
            await asyncio.sleep(0.01)
            ticks += 1
        return job.result(), ticks

    result, ticks = asyncio.run(main())
    assert result.ok and ticks >= 20
