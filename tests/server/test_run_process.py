"""tritonify.infra.child_process.run_process, the one process runner under the server's jobs and the bench harness's:
what the harness asks of it (merged output, whole progress records, no kill grace) and how the
server's async wrapper hands the work to a thread without leaving its callbacks there."""
from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest
from tritonify.infra import child_process as jobs
from tritonify.infra.child_process import PipedChild, run_job, run_process

from tests.server.test_child_process import _alive

PY = sys.executable
IGNORE_SIGTERM = ("import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN);"
                  "print('{\"progress\": \"ready\"}', file=sys.stderr, flush=True); time.sleep(60)")


def test_merged_output_sends_stdout_lines_to_the_log_and_progress_records_whole():
    records, lines = [], []
    code = ("import json, sys; print('user print'); sys.stdout.flush();"
            "print(json.dumps({'progress': 'half', 'percent': 50.0, 'job': 'j1'}), file=sys.stderr)")
    result = run_process([PY, "-c", code], merge_output=True, on_progress=records.append, on_line=lines.append)
    assert result.ok and result.stdout == ""
    assert records == [{"progress": "half", "percent": 50.0, "job": "j1"}]
    assert lines == ["user print"] and result.stderr_tail == ["user print"]


def test_separate_output_keeps_stdout_as_the_result_and_out_of_the_log():
    lines = []
    result = run_process([PY, "-c", "import sys; print('result'); print('note', file=sys.stderr)"], on_line=lines.append)
    assert result.stdout == "result\n" and lines == ["note"]


def test_the_tail_keeps_the_last_lines_asked_for():
    result = run_process([PY, "-c", "import sys\nfor i in range(50): print(i, file=sys.stderr)"], tail_lines=5)
    assert result.stderr_tail == ["45", "46", "47", "48", "49"]


def test_no_grace_kills_a_child_ignoring_sigterm_at_once(monkeypatch):
    monkeypatch.setattr(jobs, "KILL_GRACE_S", 30.0)
    ready = threading.Event()
    start = time.monotonic()
    result = run_process([PY, "-c", IGNORE_SIGTERM], on_progress=lambda record: ready.set(), cancelled=ready.is_set,
                         kill_grace_s=0)
    assert result.status == jobs.CANCELLED and result.returncode == -9
    assert time.monotonic() - start < 10


def test_no_timeout_waits_for_the_end():
    result = run_process([PY, "-c", "import time; time.sleep(0.3)"], timeout_s=None)
    assert result.ok and result.duration_s >= 0.3


def test_a_broken_line_callback_does_not_stop_the_reading():
    def broken(line):
        raise RuntimeError("callback bug")

    result = run_process([PY, "-c", "import sys\nfor i in range(3): print(i, file=sys.stderr)"], on_line=broken)
    assert result.ok and result.stderr_tail == ["0", "1", "2"]


def test_async_callbacks_run_on_the_event_loop_thread():
    code = "import sys; print('{\"progress\": \"p\", \"percent\": 10}', file=sys.stderr)"

    async def main():
        loop_thread = threading.get_ident()
        seen = []
        result = await run_job([PY, "-c", code], on_progress=lambda m, p: seen.append((m, p, threading.get_ident())),
                               on_started=lambda pid: seen.append(("started", pid, threading.get_ident())))
        return loop_thread, seen, result

    loop_thread, seen, result = asyncio.run(main())
    assert result.ok
    assert [s[0] for s in seen] == ["started", "p"] and seen[1][1] == 10
    assert {s[2] for s in seen} == {loop_thread}


def test_cancelling_the_awaiting_task_stops_the_process_group_first():
    async def main():
        pids = []
        job = asyncio.ensure_future(run_job([PY, "-c", "import time; time.sleep(60)"], on_started=pids.append))
        while not pids:
            await asyncio.sleep(0.01)
        job.cancel()
        with pytest.raises(asyncio.CancelledError):
            await job
        return pids[0]

    pid = asyncio.run(main())
    assert not _alive(pid)


def _wait_gone(pid: int, seconds: float = 5.0) -> bool:
    end = time.monotonic() + seconds
    while _alive(pid) and time.monotonic() < end:
        time.sleep(0.02)
    return not _alive(pid)


# A child that starts a grandchild sleeping in its group, writes its pid, and exits or sleeps.
_PARENT = ("import subprocess, sys, time; g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)']);"
           "open(sys.argv[1], 'w').write(str(g.pid)); time.sleep(float(sys.argv[2]))")


def _grandchild(pid_file: Path) -> int:
    end = time.monotonic() + 10
    while time.monotonic() < end:
        if pid_file.exists() and pid_file.read_text().strip():
            return int(pid_file.read_text())
        time.sleep(0.02)
    raise AssertionError("the child wrote no pid")


@pytest.mark.skipif(sys.platform != "linux", reason="process groups and /proc")
def test_an_error_in_while_running_stops_the_group_and_propagates(tmp_path):
    pid_file = tmp_path / "pid"

    def broken():
        _grandchild(pid_file)
        raise RuntimeError("overlapping work failed")

    start = time.monotonic()
    with pytest.raises(RuntimeError, match="overlapping work failed"):
        run_process([PY, "-c", _PARENT, str(pid_file), "30"], timeout_s=60, while_running=broken)
    assert time.monotonic() - start < 15
    assert _wait_gone(_grandchild(pid_file))


@pytest.mark.skipif(sys.platform != "linux", reason="process groups and /proc")
@pytest.mark.parametrize("sweep", [True, False])
def test_what_the_child_left_in_its_group_is_killed_unless_sweep_is_off(tmp_path, sweep):
    pid_file = tmp_path / "pid"
    result = run_process([PY, "-c", _PARENT, str(pid_file), "0"], timeout_s=30, sweep=sweep)
    grandchild = _grandchild(pid_file)
    try:
        assert result.ok
        assert _wait_gone(grandchild, 2.0) is sweep
    finally:
        if _alive(grandchild):
            os.kill(grandchild, signal.SIGKILL)


def test_a_piped_child_answers_its_one_request():
    child = PipedChild([PY, "-c", "import sys; print(sys.stdin.readline().strip().upper())"], what="echo")
    answer = child.ask("hello\n", timeout_s=20)
    assert answer.ok and answer.stdout.strip() == "HELLO" and answer.returncode == 0


def test_a_piped_child_that_crashes_or_hangs_says_so():
    crash = PipedChild([PY, "-c", "import os, signal, sys; sys.stdin.readline(); print('dying', file=sys.stderr); "
                            "sys.stderr.flush(); os.kill(os.getpid(), signal.SIGSEGV)"], what="the reader")
    outcome = crash.ask("go\n", timeout_s=20)
    assert outcome.status == jobs.CRASHED and "SIGSEGV" in outcome.message and outcome.stderr_tail == ["dying"]
    hang = PipedChild([PY, "-c", "import time; time.sleep(60)"], what="the reader")
    start = time.monotonic()
    outcome = hang.ask("go\n", timeout_s=0.5)
    assert outcome.status == jobs.TIMEOUT and "no answer within 0.5 s" in outcome.message
    assert time.monotonic() - start < 10 and hang.proc.poll() is not None
