"""Isolation: each job runs in a child process; crashes, hangs, errors and cancels end with a message."""
from __future__ import annotations

import threading
import time

from tritonify.kernels.bench import bench_jobs

from tests.bench.conftest import write_case

INTERPRET = {"TRITON_INTERPRET": "1"}


def _spec(kernel, **kw):
    return bench_jobs.job_spec(f"{kernel}::affine_kernel", baselines=["eager"], timer="none", env=INTERPRET,
                         shapes=[[2, 8]], **kw)


def test_a_good_job_reports_progress_and_keeps_user_stdout_out_of_the_result(tmp_path):
    kernel = write_case(tmp_path, "print", module="affine_print")
    progress, logs = [], []
    result = bench_jobs.run_job(_spec(kernel, id="job-1"), timeout=120, on_progress=progress.append, on_log=logs.append)
    assert result["status"] == "ok", result
    assert result["job"] == "job-1"
    assert progress[0]["progress"] == "loading the contract" and progress[-1]["percent"] == 100.0
    assert all(p["job"] == "job-1" for p in progress)
    assert any("user output on stdout" in line for line in logs)


def test_a_crashing_kernel_ends_with_a_clear_message(tmp_path):
    kernel = write_case(tmp_path, "abort", module="affine_abort")
    result = bench_jobs.run_job(_spec(kernel), timeout=120)
    assert result["status"] == "crashed"
    assert "SIGABRT" in result["message"] and result["summary"].startswith("CRASHED")


def test_a_hanging_kernel_is_killed_at_the_timeout(tmp_path):
    kernel = write_case(tmp_path, "hang", module="affine_hang")
    started = time.time()
    result = bench_jobs.run_job(_spec(kernel), timeout=5)
    assert result["status"] == "timeout"
    assert time.time() - started < 30
    assert "hung" in result["message"]


def test_cancel_kills_the_child(tmp_path):
    kernel = write_case(tmp_path, "hang", module="affine_cancel")
    cancel = threading.Event()
    threading.Timer(3.0, cancel.set).start()
    result = bench_jobs.run_job(_spec(kernel), timeout=60, cancel=cancel)
    assert result["status"] == "cancelled"


def test_a_bad_target_is_an_error_result_not_a_traceback(tmp_path):
    (tmp_path / "empty.py").write_text("x = 1\n")
    result = bench_jobs.run_job(bench_jobs.job_spec(f"{tmp_path / 'empty.py'}::k", timer="none", env=INTERPRET), timeout=60)
    assert result["status"] == "error" and "no contract found" in result["message"]


def test_crash_messages_name_the_cause():
    assert "illegal memory access" in bench_jobs._crash_message(1, ["RuntimeError: CUDA error: an illegal memory access"])
    assert "ran out of memory" in bench_jobs._crash_message(1, ["torch.OutOfMemoryError: CUDA out of memory."])
    assert "SIGSEGV" in bench_jobs._crash_message(-11, [])
    assert "status 3" in bench_jobs._crash_message(3, [])
    assert "--python" in bench_jobs._crash_message(1, ["ModuleNotFoundError: No module named 'tritonify'"])


def test_sweep_expands_to_independent_json_jobs():
    specs = bench_jobs.expand_sweep(["a.py::k", "b.py::k"], shapes=[(1, 2), (3, 4)], configs=[{"BLOCK": 64}, {"BLOCK": 128}],
                              timer="none")
    assert len(specs) == 8 and len({s["id"] for s in specs}) == 8
    assert specs[0]["shapes"] == [[1, 2]] and specs[0]["config"] == {"BLOCK": 64}
    assert set(specs[0]) == set(bench_jobs.SPEC_FIELDS)
