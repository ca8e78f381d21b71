"""The `benchmark.*` settings: checked when they arrive, and turned into `tritonify bench`'s
--baselines / --shapes / --timeout in the child's argument list (never a shell string)."""
from pathlib import Path

import pytest

from tritonify.server.jobs_feature import BENCHMARK, BENCH_GRACE_S, PROFILE, job_argv, job_timeout_s
from tritonify.server.settings import EditorSettings

PY = ("/venv/bin/python",)
TARGET = Path("/ws/kernels.py")


def settings(**benchmark) -> EditorSettings:
    return EditorSettings(interpreter=PY).updated({"benchmark": benchmark})


def test_defaults_leave_the_choice_to_bench_every_baseline_the_contracts_own_included():
    s = EditorSettings(interpreter=PY)
    assert job_argv(BENCHMARK, s, TARGET, "rmsnorm") == [
        *PY, "-m", "tritonify", "bench", "/ws/kernels.py::rmsnorm", "--format", "json"]
    assert job_timeout_s(BENCHMARK, s) == s.job_timeout_s


def test_settings_become_bench_options():
    s = settings(baselines=" eager , my_own ", shapes="4096X4096; 8192*1024", timeout=1200)
    assert s.problems == ()
    argv = job_argv(BENCHMARK, s, TARGET, "rmsnorm")
    assert argv[-6:] == ["--baselines", "eager,my_own", "--shapes", "4096x4096,8192x1024", "--timeout", "1200"]
    # bench must outlive its own --timeout to report it, even past jobs.timeoutSeconds (600)
    assert job_timeout_s(BENCHMARK, s) == 1200 + BENCH_GRACE_S
    assert job_timeout_s(BENCHMARK, settings(timeout=60)) == 600


def test_empty_values_mean_benchs_own_defaults():
    s = settings(baselines="", shapes="", timeout=0)
    assert s.problems == ()
    assert job_argv(BENCHMARK, s, TARGET, "k")[-2:] == ["--format", "json"]


def test_profile_takes_none_of_the_benchmark_options():
    s = settings(baselines="eager", shapes="64x64", timeout=30)
    assert job_argv(PROFILE, s, TARGET, "k") == [*PY, "-m", "tritonify", "profile", "/ws/kernels.py::k", "--format", "json"]
    assert job_timeout_s(PROFILE, s) == s.job_timeout_s


@pytest.mark.parametrize("benchmark,words", [
    ({"baselines": "eager,--python=/tmp/evil"}, "is not a baseline name"),
    ({"baselines": 3}, "names separated by commas"),
    ({"shapes": "4096xbig"}, "bad shape '4096xbig'"),
    ({"shapes": "0x4096"}, "dimensions must be positive"),
    ({"shapes": ["4096x4096"]}, "as a string"),
    ({"timeout": -1}, "benchmark.timeout"),
    ({"timeout": True}, "benchmark.timeout"),
])
def test_bad_values_are_reported_and_never_reach_the_argv(benchmark, words):
    s = settings(**benchmark)
    assert len(s.problems) == 1 and words in s.problems[0], s.problems
    argv = job_argv(BENCHMARK, s, TARGET, "k")
    assert argv == job_argv(BENCHMARK, EditorSettings(interpreter=PY), TARGET, "k")


def test_a_later_good_value_replaces_an_earlier_one():
    s = settings(baselines="eager").updated({"benchmark": {"baselines": "liger"}})
    assert s.bench_baselines == ("liger",)
    assert EditorSettings().updated({"benchmark": "fast"}).problems == ("benchmark must be an object",)
