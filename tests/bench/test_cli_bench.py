"""`tritonify bench` and `tritonify lineage` end to end (child process, interpreter, no GPU timing)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tritonify.kernels.bench.shapes import parse_shapes

from tests.bench.conftest import write_case

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "bench" / "rmsnorm.py"


def _cuda_visible() -> bool:
    import torch

    return torch.cuda.is_available()


def tritonify(*args, cwd=None, timeout=180):
    return subprocess.run([sys.executable, "-m", "tritonify", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, check=False)


def test_parse_shapes():
    assert parse_shapes("4096x4096, 16384x4096") == [[4096, 4096], [16384, 4096]]
    assert parse_shapes(None) is None
    for bad in ("4096xA", "0x3"):
        try:
            parse_shapes(bad)
        except ValueError as exc:
            assert bad.lower() in str(exc)
        else:
            raise AssertionError(bad)


def test_bench_json_on_the_example_kernel(tmp_path):
    lineage_file = tmp_path / "candidates.jsonl"
    proc = tritonify("bench", f"{EXAMPLE}::rmsnorm_kernel", "--interpret", "--timer", "none", "--baselines", "eager",
                     "--shapes", "8x64,4x100", "--format", "json", "--lineage", str(lineage_file),
                     "--report-dir", str(tmp_path / "reports"))
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)                 # exactly one JSON object on stdout
    assert result["status"] == "ok" and result["summary"].startswith("correct at 2 shape(s)")
    assert [s["label"] for s in result["shapes"]] == ["8x64", "4x100"]
    assert all(s["results"]["kernel"]["correct"] and s["results"]["eager"]["correct"] for s in result["shapes"])
    assert Path(result["reports"]["html"]).is_file()
    assert result["lineage"]["path"] == str(lineage_file) and result["lineage"]["status"] == "baseline"
    progress = [json.loads(line) for line in proc.stderr.splitlines() if line.startswith('{"progress"')]
    assert progress and progress[-1] == {"progress": "done", "percent": 100.0}
    view = tritonify("lineage", str(lineage_file), "--format", "json")
    runs = json.loads(view.stdout)
    assert len(runs) == 1 and runs[0]["target"] == "rmsnorm.py::rmsnorm_kernel" and runs[0]["correct"] is True
    if (ROOT / ".git").exists():                    # the example sits in this repository's checkout
        assert len(runs[0]["git"]["commit"]) == 40 and isinstance(runs[0]["git"]["dirty"], bool)
    assert tritonify("lineage", str(lineage_file), "--promote", runs[0]["id"]).returncode == 0
    table = tritonify("lineage", str(lineage_file)).stdout
    assert "promoted" in table


def test_bench_table_reports_an_incorrect_kernel_and_exits_1(tmp_path):
    kernel = write_case(tmp_path, "skip_last", module="affine_cli")
    proc = tritonify("bench", f"{kernel}::affine_kernel", "--interpret", "--timer", "wallclock",
                     "--baselines", "eager", "--shapes", "2x8", "--no-report")
    assert proc.returncode == 1
    assert "INCORRECT at 2x8" in proc.stdout and "never written" in proc.stdout
    lines = (tmp_path / "candidates.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["status"] == "rejected"


def test_bench_usage_errors_are_messages_not_tracebacks(tmp_path):
    (tmp_path / "plain.py").write_text("x = 1\n")
    for args, needle in ((["nope.py::k"], "no such file"),
                         ([f"{tmp_path / 'plain.py'}::k"], "no benchmark contract for plain.py"),
                         ([f"{EXAMPLE}::rmsnorm_kernel", "--shapes", "12xq"], "bad shape")):
        proc = tritonify("bench", *args)
        assert proc.returncode == 2 and needle in proc.stderr and "Traceback" not in proc.stderr
    assert tritonify("lineage", str(tmp_path)).returncode == 2


def test_existing_perf_report_benchmarks_run_as_they_are(tmp_path):
    (tmp_path / "tutorial.py").write_text(
        "import triton\n"
        "@triton.testing.perf_report(triton.testing.Benchmark(x_names=['N'], x_vals=[2, 4], line_arg='provider',\n"
        "    line_vals=['a', 'b'], line_names=['A', 'B'], plot_name='toy', args={}))\n"
        "def toy(N, provider):\n    return N * (2 if provider == 'b' else 1)\n")
    proc = tritonify("bench", str(tmp_path / "tutorial.py"), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["kind"] == "perf_report" and result["reports"][0]["name"] == "toy"
    assert result["reports"][0]["rows"] == [{"N": 2, "A ()": 2, "B ()": 4}, {"N": 4, "A ()": 4, "B ()": 8}]


def test_sigterm_to_bench_kills_the_benchmark_process(tmp_path):
    """The editor cancels by terminating `tritonify bench`; the kernel's process must not outlive it."""
    kernel = write_case(tmp_path, "hang_pid", module="affine_term")
    pid_file = tmp_path / "worker.pid"
    proc = subprocess.Popen([sys.executable, "-m", "tritonify", "bench", f"{kernel}::affine_kernel", "--interpret",
                             "--timer", "none",
                             "--baselines", "eager", "--no-report", "--format", "json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "HANG_PID_FILE": str(pid_file)})
    deadline = time.time() + 60
    while not (pid_file.is_file() and pid_file.read_text()) and time.time() < deadline:
        time.sleep(0.1)
    worker = int(pid_file.read_text())
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 130
    for _ in range(50):
        try:
            os.kill(worker, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        raise AssertionError(f"worker {worker} outlived tritonify bench")


@pytest.mark.skipif(_cuda_visible(), reason="this machine has a CUDA GPU")
def test_without_a_gpu_bench_says_so_in_one_sentence_and_records_nothing(tmp_path):
    """No GPU and no --interpret: one sentence naming --interpret, exit 1, no verdict, no lineage, fast."""
    kernel = write_case(tmp_path, "good", module="affine_nogpu")
    started = time.time()
    proc = tritonify("bench", f"{kernel}::affine_kernel", "--report-dir", str(tmp_path / "reports"))
    elapsed = time.time() - started
    assert proc.returncode == 1, proc.stdout + proc.stderr
    first, *rest = proc.stdout.strip().splitlines()
    assert "no CUDA GPU is visible" in first and "--interpret" in first and first.count(". ") == 0
    assert rest == ["lineage: not recorded: no CUDA GPU was visible, so nothing was measured"]
    for verdict in ("INCORRECT", "correct at", "rejected", "baseline", "speedup", "Traceback"):
        assert verdict not in proc.stdout + proc.stderr
    assert not (tmp_path / "candidates.jsonl").exists() and not (tmp_path / "reports").exists()
    assert elapsed < 30, f"took {elapsed:.1f} s"      # it took 53 s (the CPU checked every shape) before

    as_json = tritonify("bench", f"{kernel}::affine_kernel", "--format", "json", "--no-report")
    assert as_json.returncode == 1
    result = json.loads(as_json.stdout)
    assert result["no_gpu"] is True and result["status"] == "error" and result["shapes"] == []
    assert "--interpret" in result["message"] and result["lineage"]["skipped"].startswith("not recorded")
    assert not (tmp_path / "candidates.jsonl").exists()


def test_with_interpret_the_same_machine_checks_correctness(tmp_path):
    kernel = write_case(tmp_path, "good", module="affine_nogpu_interp")
    proc = tritonify("bench", f"{kernel}::affine_kernel", "--interpret", "--baselines", "eager", "--shapes", "2x8",
                     "--no-report", "--format", "json")
    result = json.loads(proc.stdout)
    assert result.get("no_gpu") is None and result["shapes"][0]["results"]["kernel"]["correct"] is True
