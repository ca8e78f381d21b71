"""How the server reads what a bench/profile child printed: a result about the kernel is kept even
when its verdict is bad; a run that never reached the kernel is a failure with the engine's reason."""
from __future__ import annotations

import json

from tritonify.infra.child_process import FAILED, OK, JobResult
from tritonify.server.jobs_feature import BENCHMARK, PROFILE, interpret


def job(status, payload, code=0, stderr=()):
    return JobResult(status, f"job ended: {status}", code, json.dumps(payload), list(stderr))


def test_a_benchmark_that_could_not_import_torch_says_so_and_is_not_a_result():
    payload = {"schema": "tritonify.bench/1", "status": "error", "shapes": [],
               "message": "torch is not installed in /usr/bin/python3: run bench with the Python that has torch and triton",
               "summary": "error: torch is not installed in /usr/bin/python3"}
    out = interpret(BENCHMARK, job(FAILED, payload, 1), "/usr/bin/python3")
    assert not out.ok and out.summary is None
    assert out.message.startswith("benchmark failed: torch is not installed in /usr/bin/python3")
    assert out.actions == ["chooseInterpreter", "openLog"]


def test_beside_a_choose_interpreter_button_the_by_hand_fix_is_left_out():
    payload = {"schema": "tritonify.bench/1", "status": "error", "shapes": [], "environment": True,
               "message": "torch is not installed in /usr/bin/python3: benchmarks run the kernel with torch and triton",
               "hint": "run it with the Python that has both: bench --python PY, or the editor's tritonify.interpreter setting",
               "summary": "error: torch is not installed in /usr/bin/python3"}
    plain = interpret(BENCHMARK, job(FAILED, payload, 1), "/usr/bin/python3")
    assert plain.message.endswith("(" + payload["hint"] + ")")   # an editor without buttons still hears how
    shown = interpret(BENCHMARK, job(FAILED, payload, 1), "/usr/bin/python3", buttons=True)
    assert shown.actions[0] == "chooseInterpreter"
    assert shown.message == "benchmark failed: " + payload["message"]


def test_a_profile_error_object_gives_its_message_and_hint():
    payload = {"error": "ncu-missing", "message": "Nsight Compute (ncu) was not found",
               "hint": "install Nsight Compute or set tritonify.ncuPath", "stderr_tail": ""}
    out = interpret(PROFILE, job(FAILED, payload, 2), "python3")
    assert not out.ok and out.status == "ncu-missing"
    assert out.message == "profile failed: Nsight Compute (ncu) was not found (install Nsight Compute or set tritonify.ncuPath)"
    assert out.actions == ["setNcuPath", "openLog"]


def test_an_incorrect_kernel_is_a_result_the_lens_can_show():
    payload = {"status": "incorrect", "summary": "incorrect at 4096x4096 (max abs err 3.1)",
               "shapes": [{"label": "4096x4096", "results": {"kernel": {"correct": False}}}]}
    out = interpret(BENCHMARK, job(FAILED, payload, 1), "python3")
    assert not out.ok and out.summary == "incorrect at 4096x4096 (max abs err 3.1)" and out.result == payload
    assert out.message == "benchmark finished, incorrect: incorrect at 4096x4096 (max abs err 3.1)"


def test_a_good_run_is_ok():
    payload = {"status": "ok", "summary": "0.41 ms", "shapes": [{"label": "4096"}]}
    out = interpret(BENCHMARK, job(OK, payload), "python3")
    assert out.ok and out.message == "benchmark finished: 0.41 ms" and out.actions == []


def test_a_usage_error_gives_the_commands_reason_and_the_editor_way_out(tmp_path):
    """The real `tritonify bench --format json` on a file without a contract: its reason arrives as
    data on stdout (nothing is read from stderr), with the editor's way out added."""
    import subprocess
    import sys

    kernel = tmp_path / "k.py"
    kernel.write_text("import triton\n\n@triton.jit\ndef k(x):\n    pass\n")
    argv = [sys.executable, "-m", "tritonify", "bench", f"{kernel}::k", "--format", "json"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    result = JobResult(FAILED, "benchmark of k failed with exit status 2", 2, done.stdout, [])   # no stderr given
    out = interpret(BENCHMARK, result, "python3")
    assert not out.ok and out.status == "usage" and out.result["error"] == "no-contract"
    assert out.message.startswith("benchmark failed: no benchmark contract for k.py")
    assert "Write a benchmark contract" in out.message
    assert out.actions == ["writeContract", "openLog"]
    shown = interpret(BENCHMARK, result, "python3", buttons=True)   # VS Code: the button, not advice
    assert shown.message.startswith("benchmark failed: no benchmark contract for k.py")
    assert "Ctrl+." not in shown.message and "tritonify bench" not in shown.message


def test_a_profile_with_nothing_to_launch_the_kernel_offers_a_launch_command():
    payload = {"error": "no-launcher", "message": "nothing launches k",
               "hint": "name the command that runs it: tritonify profile k.py::k -- python script.py"}
    out = interpret(PROFILE, job(FAILED, payload, 2), "python3")
    assert out.status == "no-launcher" and out.actions == ["setLaunchCommand", "openLog"]
    assert out.to_dict()["actions"] == ["setLaunchCommand", "openLog"]
    assert "tritonify profile" in out.message     # a client without buttons gets the command line
    # a client that shows the actions as buttons gets the reason only: the button does the rest
    shown = interpret(PROFILE, job(FAILED, payload, 2), "python3", buttons=True)
    assert shown.message == "profile failed: nothing launches k" and shown.actions == out.actions


def test_with_buttons_a_missing_ncu_says_so_and_the_button_sets_its_path():
    payload = {"error": "ncu-missing", "message": "Nsight Compute (ncu) was not found",
               "hint": "install Nsight Compute, add it to PATH or set TRITONIFY_NCU; `tritonify diagnose` reads CSV exports",
               "stderr_tail": ""}
    out = interpret(PROFILE, job(FAILED, payload, 2), "python3", buttons=True)
    assert out.message == "profile failed: Nsight Compute (ncu) was not found" and out.actions == ["setNcuPath", "openLog"]


def test_with_buttons_advice_no_button_does_stays():
    payload = {"status": "error", "error": "bad-input", "message": "unknown collection 'x'",
               "hint": "use one of triage, default, full"}
    out = interpret(PROFILE, job(FAILED, payload, 2), "python3", buttons=True)
    assert out.actions == ["openLog"] and out.message.endswith("(use one of triage, default, full)")


def test_the_action_ids_are_the_ones_the_client_knows():
    from tritonify.server.jobs_feature import JOB_ACTIONS

    assert set(JOB_ACTIONS) == {"writeContract", "chooseInterpreter", "setNcuPath", "setLaunchCommand", "runWithInterpreter",
                                "openLog"}


def test_without_a_gpu_a_benchmark_offers_to_run_with_the_interpreter_and_that_runs_bench_interpret():
    from pathlib import Path

    from tritonify.kernels.bench.runner import NO_GPU_MESSAGE, no_gpu_result
    from tritonify.server.jobs_feature import job_argv
    from tritonify.server.settings import EditorSettings

    payload = no_gpu_result({"schema": "tritonify.bench/1", "shapes": []}, NO_GPU_MESSAGE, 0.0)
    plain = interpret(BENCHMARK, job(FAILED, payload, 1), "python3")
    assert plain.actions[0] == "runWithInterpreter" and "--interpret" in plain.message   # no buttons: the flag is named
    shown = interpret(BENCHMARK, job(FAILED, payload, 1), "python3", buttons=True)
    assert shown.actions == ["runWithInterpreter", "openLog"]
    assert "--interpret" not in shown.message and "Run With the Interpreter" in shown.message
    settings = EditorSettings().updated({"interpreter": ["/usr/bin/python3"]})
    assert "--interpret" in job_argv(BENCHMARK, settings, Path("/w/k.py"), "k", interpret=True)
    assert "--interpret" not in job_argv(BENCHMARK, settings, Path("/w/k.py"), "k")


def test_a_launch_command_goes_after_the_separator():
    from pathlib import Path

    from tritonify.server.jobs_feature import job_argv
    from tritonify.server.settings import EditorSettings

    settings = EditorSettings().updated({"interpreter": ["/usr/bin/python3"]})
    argv = job_argv(PROFILE, settings, Path("/w/k.py"), "k", ["python", "bench.py", "--n", "4096"])
    assert argv[-5:] == ["--", "python", "bench.py", "--n", "4096"] and argv[:4] == ["/usr/bin/python3", "-m", "tritonify", "profile"]
    assert "--" not in job_argv(BENCHMARK, settings, Path("/w/k.py"), "k", ["python", "x.py"])


def test_without_tritonify_in_the_interpreter_the_button_replaces_the_setting_advice():
    result = JobResult(FAILED, "benchmark failed with exit status 1", 1, "",
                       ["/usr/bin/python3: No module named tritonify"])
    out = interpret(BENCHMARK, result, "/usr/bin/python3")
    assert out.status == "missing-engine" and out.actions == ["chooseInterpreter", "openLog"]
    assert "pip install tritonify" in out.message and "tritonify.interpreter" in out.message
    shown = interpret(BENCHMARK, result, "/usr/bin/python3", buttons=True)   # the Choose Interpreter button
    assert shown.message.endswith("pip install tritonify into it") and "tritonify.interpreter" not in shown.message
