"""Reading an `.ncu-rep` through ncu_report gives what the CSV exports of the same report give.

`ncu_report` exists only beside Nsight Compute, so the part that touches it (`dump_report`) ran
on the H200: gpu/ncu/check_reader.py captured every planted kernel and control with the triage
collection, exported the CSV pages and recorded what ncu_report returned for the same report
(tests/ncu/fixtures/h200/sets/triage/dump.json.gz). Here the mapping from that recorded data to
launches, rules and source lines is checked against the CSV pages, value by value; and the
child process that runs ncu_report is checked to contain a crash.
"""
import gzip
import json
import os
import sys
from functools import lru_cache
from pathlib import Path

import pytest

from tritonify.diagnostics.ncu.details_page import parse_details
from tritonify.diagnostics.ncu.lines import attribute
from tritonify.diagnostics.ncu.raw_page import parse_raw
from tritonify.tools.ncu.report_reader import ReaderProcess, ReaderUnavailable, parse_dump, read_report
from tritonify.diagnostics.ncu.source_page import parse_source

TRIAGE = Path(__file__).parent / "fixtures" / "h200" / "sets" / "triage"
KERNELS = json.loads((TRIAGE.parent / "manifest.json").read_text())
# Source pages that list an inlined header's instructions under the header and again under the
# kernel's file: the CSV path counts those instructions twice on the call-site line
# (cuda_planted_g_atomics line 36: 83,378 samples on the page, 41,777 samples in the report).
TWO_FILES = {"cuda_planted_g_atomics"}


def _gz(path: Path) -> str:
    return gzip.decompress(path.read_bytes()).decode("utf-8")


@lru_cache(maxsize=1)
def from_report():
    launches, rules, pages = parse_dump(json.loads(_gz(TRIAGE / "dump.json.gz")))
    return {L.kernel: L for L in launches}, rules, {p.function: p for p in pages}


@lru_cache(maxsize=1)
def from_csv():
    launches = {L.kernel: L for L in parse_raw(_gz(TRIAGE / "raw.csv.gz"))}
    rules = parse_details(_gz(TRIAGE / "details.csv.gz"))
    pages = {p.stem.removesuffix(".csv"): parse_source(_gz(p)) for p in (TRIAGE / "source").glob("*.csv.gz")}
    return launches, rules, pages


def test_every_launch_is_read_with_its_identity():
    rep, _, _ = from_report()
    csv, _, _ = from_csv()
    assert set(rep) == set(csv) == {m["kernel"] for m in KERNELS}
    for name, L in csv.items():
        R = rep[name]
        assert (R.block, R.grid, R.cc) == (L.block, L.grid, L.cc), name


@pytest.mark.parametrize("kernel", [m["kernel"] for m in KERNELS])
def test_metrics_equal_the_raw_page_in_base_units(kernel):
    """The same metric names, and the same values up to the page's printed precision (two
    decimals): ncu_report's values are already in the units `--print-units base` prints."""
    R, L = from_report()[0][kernel], from_csv()[0][kernel]
    assert set(R.metrics) == set(L.metrics)
    for name, value in L.metrics.items():
        assert R.metrics[name] == pytest.approx(value, rel=5e-3, abs=0.006), name
    assert R.text == L.text


@pytest.mark.parametrize("kernel", [m["kernel"] for m in KERNELS])
def test_rules_equal_the_details_page(kernel):
    R = from_report()[0][kernel]
    mine = sorted((r.name, r.type, r.speedup_type, round(r.speedup or 0, 2)) for r in from_report()[1][R.id])
    theirs = sorted((r.name, r.type, r.speedup_type, round(r.speedup or 0, 2))
                    for r in from_csv()[1] if r.kernel == kernel)
    assert mine == theirs


@pytest.mark.parametrize("kernel", [m["kernel"] for m in KERNELS])
def test_line_counters_equal_the_source_page(kernel):
    page, csv_page = from_report()[2][kernel], from_csv()[2][kernel]
    a, b = attribute(page), attribute(csv_page)
    assert a.path == b.path and a.def_line == b.def_line
    assert set(a.lines) == set(b.lines)
    for n, s in a.lines.items():
        t = b.lines[n]
        if kernel in TWO_FILES:
            assert s.samples <= t.samples and s.inst <= t.inst
            continue
        assert (s.samples, s.inst, s.thread_inst, s.excessive_load_sectors, s.excessive_store_sectors,
                s.shared_excessive_wavefronts, s.divergent_branches, s.barrier_wait) == \
               (t.samples, t.inst, t.thread_inst, t.excessive_load_sectors, t.excessive_store_sectors,
                t.shared_excessive_wavefronts, t.divergent_branches, t.barrier_wait), (kernel, n)
        # the page leaves the address space of a few STL blank; the report's LDL/STL are all local
        assert s.local_inst >= t.local_inst and s.local_inst <= 1.01 * t.local_inst + 1, (kernel, n)
        # the page has no column for Hopper's warpgroup_arrive samples (its "All Samples" counts them)
        assert {r: v for r, v in s.stalls.items() if r != "warpgroup_arrive"} == t.stalls, (kernel, n)


def test_rules_were_read_at_all():
    assert sum(len(v) for v in from_report()[1].values()) == len(from_csv()[1]) > 20


def test_memory_types_and_instanced_values_are_the_source_counters():
    """What the mapping reads per PC exists in the report under these names (ncu 2025.3.1)."""
    dump = json.loads(_gz(TRIAGE / "dump.json.gz"))
    names = {n for a in dump["actions"] for n in a["instanced"]}
    assert {"inst_executed", "thread_inst_executed", "memory_l2_theoretical_sectors_global",
            "memory_l2_theoretical_sectors_global_ideal", "memory_l1_wavefronts_shared",
            "smsp__pcsamp_warps_issue_stalled_long_scoreboard", "smsp__branch_targets_threads_divergent"} <= names


def _fake_ncu_report(tmp_path: Path, body: str) -> Path:
    d = tmp_path / "fake_ncu_report"
    d.mkdir()
    (d / "ncu_report.py").write_text(body)
    return d


def test_a_crash_inside_ncu_report_costs_the_reading_only(tmp_path, monkeypatch):
    """On the H200, ncu_report segfaulted inside a process that had imported torch: the reader runs
    in a child, so the caller gets ReaderUnavailable (and falls back to CSV), never a crash."""
    d = _fake_ncu_report(tmp_path, "import os, signal\ndef load_report(path):\n    os.kill(os.getpid(), signal.SIGSEGV)\n")
    monkeypatch.setenv("PYTHONPATH", str(d))
    with pytest.raises(ReaderUnavailable) as exc:
        read_report(str(tmp_path / "r.ncu-rep"), ncu=None)
    assert "stopped with code" in str(exc.value)


def test_without_ncu_report_the_reason_is_given(tmp_path, monkeypatch):
    d = _fake_ncu_report(tmp_path, "raise ImportError('built for another Python')\n")
    monkeypatch.setenv("PYTHONPATH", str(d))
    with pytest.raises(ReaderUnavailable) as exc:
        read_report(str(tmp_path / "r.ncu-rep"), ncu=None)
    assert "could not be imported" in str(exc.value) and "another Python" in str(exc.value)


def test_profile_falls_back_to_csv_exports_when_the_reader_crashes(tmp_path, monkeypatch):
    from tritonify.tools.ncu.profile_run import ProfileRequest, run_profile

    from .helpers import FIXTURES

    d = _fake_ncu_report(tmp_path, "import os, signal\ndef load_report(path):\n    os.kill(os.getpid(), signal.SIGSEGV)\n")
    monkeypatch.setenv("PYTHONPATH", str(d))
    monkeypatch.setenv("TRITONIFY_NCU", str(Path(__file__).parent / "fake_ncu.py"))
    monkeypatch.setattr("tritonify.tools.ncu.profile_run.gpu_info",
                        lambda: {"available": True, "name": "NVIDIA H200", "warnings": []})
    req = ProfileRequest(file=str(FIXTURES / "planted_triton.py"), kernel="planted_c_uncoalesced",
                         command=[sys.executable, "-c", "pass"], output=str(tmp_path / "r.ncu-rep"))
    result = run_profile(req)
    assert result.timings["reader"] == "csv"
    assert any("stopped with code" in w and "CSV exports" in w for w in result.warnings)
    assert result.diagnoses and result.diagnoses[0].letters[0] == "C"


def test_the_warm_up_does_one_sass_lookup_and_never_raises(tmp_path):
    from types import SimpleNamespace

    from tritonify.tools.ncu.report_reader import warm_up

    looked_up = []
    ids = SimpleNamespace(as_uint64=lambda i: 4096 + i)
    action = SimpleNamespace(metric_by_name=lambda name: SimpleNamespace(correlation_ids=lambda: ids),
                             sass_by_pc=looked_up.append)
    ctx = SimpleNamespace(range_by_idx=lambda i: SimpleNamespace(action_by_idx=lambda j: action))
    assert isinstance(warm_up(SimpleNamespace(load_report=lambda path: ctx), tmp_path / "w.ncu-rep"), float)
    assert looked_up == [4096]

    def cannot_load(path):
        raise RuntimeError("report version not supported")

    assert warm_up(SimpleNamespace(load_report=cannot_load), tmp_path / "w.ncu-rep") is None


def test_the_warm_up_report_ships_with_the_package():
    from tritonify.tools.ncu.report_reader import WARMUP_REPORT

    data = WARMUP_REPORT.read_bytes()
    assert 10_000 < len(data) < 200_000
    # installed beside the module: *.ncu-rep is package data (a wheel without it would skip the warm-up)
    setup = (Path(__file__).resolve().parents[2] / "setup.py").read_text()
    assert '"*.ncu-rep"' in setup.split("DATA = ", 1)[1].split("\n", 1)[0]
