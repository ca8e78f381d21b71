"""`tritonify bench` and `tritonify lineage` end to end (child process, interpreter, no GPU timing)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tritonify.commands.bench import parse_shapes

from tests.bench.conftest import write_case

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "bench" / "rmsnorm.py"


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
    proc = subprocess.Popen([sys.executable, "-m", "tritonify", "bench", f"{kernel}::affine_kernel", "--timer", "none",
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
