"""The in-process runner with an injected timer: correctness gates timing, speedups, throughput, summary."""
from __future__ import annotations

from tritonify.kernels.bench.runner import KERNEL, run_bench, summary_line
from tritonify.kernels.bench.timing import Timer, Timing

from tests.bench.conftest import write_case


class ScriptedTimer(Timer):
    """Returns a fixed median per implementation, recognised by the order of calls (kernel first)."""

    name = "scripted"
    gpu_measurement = False

    def __init__(self, medians):
        self.medians, self.calls = list(medians), 0

    def measure(self, call, *, graph=False, calls_per_graph=1):
        call()
        ms = self.medians[self.calls % len(self.medians)]
        self.calls += 1
        return Timing(ms * 0.9, ms, ms * 1.1, [ms, ms], "scripted", False)

    def describe(self):
        return "scripted test timer (not a measurement)"


def _spec(kernel, **extra):
    return {"target": f"{kernel}::affine_kernel", "baselines": ["eager"], "seed": 42, **extra}


def test_correct_kernel_is_timed_and_speedup_is_baseline_over_kernel(tmp_path, interpret):
    kernel = write_case(tmp_path, "good", module="affine_ok")
    timer = ScriptedTimer([0.5, 1.5])                # kernel 0.5 ms, eager 1.5 ms
    result = run_bench(_spec(kernel, shapes=[[4, 16]]), timer=timer)
    assert result["status"] == "ok"
    shape = result["shapes"][0]
    assert shape["speedup"] == {"eager": 3.0}
    k = shape["results"][KERNEL]
    assert k["correct"] and k["timing"]["p50_ms"] == 0.5
    assert shape["bytes"] == 4 * 16 * 4 + 16 * 4 + 4 * 16 * 4     # x + w read, y written (fp32)
    assert k["gbps"] == shape["bytes"] / 0.5e-3 / 1e9
    assert "pct_copy_bw" not in k                   # no ceilings without a GPU timer
    assert result["summary"].startswith("0.500 ms") and "3.00x eager" in result["summary"]
    assert "NOT a GPU measurement" in result["summary"]


def test_incorrect_kernel_is_reported_and_not_timed(tmp_path, interpret):
    kernel = write_case(tmp_path, "skip_last", module="affine_skip")
    timer = ScriptedTimer([1.0])
    result = run_bench(_spec(kernel), timer=timer)
    assert result["status"] == "incorrect"
    assert timer.calls == 0                         # nothing was timed, baselines included
    k = result["shapes"][0]["results"][KERNEL]
    assert k["status"] == "incorrect" and k["timing"] is None
    assert result["summary"].startswith("INCORRECT at 4x16") and "never written" in result["summary"]


def test_launcher_exception_is_an_error_row_not_a_crash(tmp_path, interpret):
    kernel = write_case(tmp_path, "raise", module="affine_raise")
    result = run_bench(_spec(kernel, timer="none"))
    k = result["shapes"][0]["results"][KERNEL]
    assert k["status"] == "error" and "planted failure" in k["message"]
    assert result["status"] == "incorrect"


def test_without_a_timer_correctness_still_runs(tmp_path, interpret):
    kernel = write_case(tmp_path, "good", module="affine_notimer")
    result = run_bench(_spec(kernel, timer="none"))
    assert result["status"] == "ok" and result["timing_unavailable"]
    assert all(s["results"][KERNEL]["correct"] for s in result["shapes"])
    assert summary_line(result).startswith("correct at 2 shape(s)")
    assert "Timing: not done" in result["method"]


def test_unknown_and_skipped_baselines_are_explained(tmp_path, interpret):
    kernel = write_case(tmp_path, "good", module="affine_bl")
    result = run_bench(_spec(kernel, timer="none", baselines=["liger", "mystery"], shapes=[[2, 8]]))
    assert "no such op" in result["baselines"]["liger"]
    assert "unknown baseline 'mystery'" in result["baselines"]["mystery"]
    assert list(result["shapes"][0]["results"]) == [KERNEL]


def test_out_of_memory_is_reported_per_implementation(tmp_path, interpret):
    kernel = write_case(tmp_path, "oom", module="affine_oom")
    result = run_bench(_spec(kernel, timer="none", shapes=[[4, 16]]))
    k = result["shapes"][0]["results"][KERNEL]
    assert k["status"] == "oom" and k["message"] == "out of memory at 4x16"
    assert result["shapes"][0]["results"]["eager"]["status"] == "ok"      # the run went on


def test_a_job_that_cannot_run_here_says_why_and_checks_nothing(tmp_path):
    from tritonify.kernels.bench.runner import NO_GPU_MESSAGE, device_problem

    assert device_problem("cpu", False, interpret=False) == NO_GPU_MESSAGE
    assert device_problem("cuda", False, interpret=True) == NO_GPU_MESSAGE   # CUDA asked for, none here
    assert device_problem("cpu", False, interpret=True) is None
    assert device_problem("cuda:1", True, interpret=False) is None
    kernel = write_case(tmp_path, "raise", module="affine_nodev")       # would fail if it ran at all
    result = run_bench(_spec(kernel, device="cpu"))
    assert result["no_gpu"] and result["status"] == "error" and result["shapes"] == []
    assert "--interpret" in result["message"] and "contract" not in result


def test_host_overhead_is_measured_for_every_timed_implementation_at_a_few_rows(tmp_path, interpret):
    from tritonify.kernels.bench.discovery import load_contracts
    from tritonify.kernels.bench.runner import _host_overhead, _Progress

    kernel = write_case(tmp_path, "good", module="affine_host")
    (contract,) = load_contracts(kernel)
    out_row = {"results": {KERNEL: {"timing": {"p50_ms": 1.0}}, "eager": {"timing": {"p50_ms": 2.0}},
                           "liger": {"timing": None}}}
    impls = [(KERNEL, contract.entry), ("eager", contract.reference), ("liger", contract.reference)]
    _host_overhead(contract, (4096, 16), impls, out_row, "cpu", 3, _Progress(lambda m, p: None, 1))
    assert out_row["host_shape"] == [8, 16]
    assert out_row["results"][KERNEL]["host_us"] > 0 and out_row["results"]["eager"]["host_us"] > 0
    assert "host_us" not in out_row["results"]["liger"]        # not timed, so not measured either
