"""Timers: quantiles, the two-pass noise check, the labelled wall clock, graph sizing, rotation."""
from __future__ import annotations

import itertools

import pytest
import torch
from tritonify.kernels.bench.inputs import rotating, rotation_count
from tritonify.kernels.bench.timing import (
    GpuTimer,
    Timing,
    TimingUnavailable,
    WallClockTimer,
    calls_per_graph,
    make_timer,
    quantiles,
)


def test_quantiles():
    assert quantiles([5.0]) == (5.0, 5.0, 5.0)
    p20, p50, p80 = quantiles([float(i) for i in range(1, 11)])
    assert p50 == 5.5 and p20 < p50 < p80


@pytest.mark.parametrize("medians, noisy", [([1.00, 1.05], True), ([1.00, 1.02], False), ([1.031, 1.0], True)])
def test_noise_check_flags_pass_to_pass_spread_over_3_percent(medians, noisy):
    t = Timing(medians[1] * 0.99, medians[1], medians[1] * 1.01, medians, "do_bench", True)
    assert t.noisy is noisy
    assert t.pass_spread == pytest.approx(abs(medians[0] - medians[1]) / min(medians))


def test_noise_check_flags_a_wide_p20_p80_even_when_medians_agree():
    # Liger RMSNorm 16384x4096 under plain do_bench on the H200: 0.069 / 0.121 / 0.143 ms
    wide = Timing(0.069, 0.121, 0.143, [0.122, 0.121], "do_bench", True)
    assert wide.pass_spread < 0.03 and wide.quantile_spread == pytest.approx(0.074 / 0.121)
    assert wide.noisy
    assert not Timing(0.0765, 0.0767, 0.0769, [0.0766, 0.0767], "cuda_graph", True).noisy


def test_wallclock_timer_uses_the_injected_clock_and_says_it_is_not_a_gpu_measurement():
    ticks = itertools.count(0.0, 0.001)         # every clock read advances 1 ms
    timer = WallClockTimer(warmup=1, reps=5, clock=lambda: next(ticks))
    calls = []
    t = timer.measure(lambda: calls.append(1))
    assert t.p50_ms == pytest.approx(1.0)
    assert t.gpu_measurement is False and t.method == "wallclock"
    assert "NOT a GPU measurement" in t.note and "NOT a GPU measurement" in timer.describe()
    assert len(calls) == 1 + 2 * 5


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal without CUDA")
def test_gpu_timer_refuses_without_cuda():
    with pytest.raises(TimingUnavailable, match="needs a CUDA GPU"):
        GpuTimer()
    with pytest.raises(ValueError, match="unknown timer"):
        make_timer("sundial")


def test_rotation_count_spans_twice_the_l2():
    l2 = 50 << 20
    assert rotation_count(200 << 20, l2) == 1           # one set is already 4x the L2
    assert rotation_count(30 << 20, l2) == 4            # ceil(100 / 30)
    assert rotation_count(1 << 10, l2) == 16            # capped
    assert rotation_count(1 << 20, None) == 1           # unknown L2 (CPU)


def test_rotating_cycles_through_sets():
    seen = []
    call = rotating(lambda a: seen.append(a), [(1,), (2,), (3,)])
    for _ in range(7):
        call()
    assert seen == [1, 2, 3, 1, 2, 3, 1]


def test_calls_per_graph_is_a_whole_number_of_rotations():
    assert calls_per_graph(0.01, 3) % 3 == 0
    assert calls_per_graph(0.01, 3) >= 99             # about 1 ms of work
    assert calls_per_graph(5.0, 4) == 4               # long calls: one rotation


def test_host_overhead_is_wall_time_per_call_between_synchronisations():
    from tritonify.kernels.bench.timing import host_shape, host_us_per_call

    assert host_shape((16384, 4096)) == (8, 4096) and host_shape((4, 100)) == (4, 100)
    assert host_shape((8192, 4096, 128256)) == (8, 4096, 128256)
    ticks, events = iter([10.0, 10.002]), []
    us = host_us_per_call(lambda: events.append("call"), lambda: events.append("sync"), calls=100,
                          clock=lambda: next(ticks))
    assert abs(us - 20.0) < 1e-6                  # 2 ms over 100 calls
    assert events == ["call"] * 5 + ["sync"] + ["call"] * 100 + ["sync"]


def test_host_issue_time_stops_the_clock_before_the_final_synchronisation():
    from tritonify.kernels.bench.timing import host_issue_us_per_call

    events = []
    ticks = iter([5.0, 5.0015])

    def clock():
        events.append("clock")
        return next(ticks)

    us = host_issue_us_per_call(lambda: events.append("call"), lambda: events.append("sync"), calls=50, clock=clock)
    assert abs(us - 30.0) < 1e-6                  # 1.5 ms over 50 calls
    assert events == ["call"] * 5 + ["sync", "clock"] + ["call"] * 50 + ["clock", "sync"]


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_graph_size_follows_gpu_time_not_the_launchers_host_time():
    """Two calls with the same kernel, one with 0.3 ms of host work in its launcher: both graphs get
    about the same calls (sized from the eager probe, the slow launcher's graph would hold a few calls
    against the quick call's hundred or more)."""
    import time

    x = torch.randn(1 << 22, device="cuda")
    quick = lambda: torch.mul(x, 1.0001)  # noqa: E731

    def slow_launcher():
        deadline = time.perf_counter() + 3e-4
        while time.perf_counter() < deadline:
            pass
        return torch.mul(x, 1.0001)

    timer = GpuTimer(warmup_ms=5, rep_ms=20)
    quick_calls, slow_calls = timer.graph_calls(quick), timer.graph_calls(slow_launcher)
    assert calls_per_graph(timer.probe_ms(slow_launcher), 1) < 0.6 * quick_calls
    assert abs(slow_calls - quick_calls) <= 0.25 * quick_calls
