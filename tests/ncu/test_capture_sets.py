"""Every pattern on several kinds of report of the same planted kernels (H200, ncu 2025.3.1):
Tritonify's earlier sections ("own"), `--set full` and `--set detailed`, each as raw + details +
source CSV (captured by gpu/ncu/capture_sets.py into tests/ncu/fixtures/h200/sets/), and
`tritonify profile`'s triage collection (gpu/ncu/check_reader.py) read both ways: as CSV pages
("triage") and as the data ncu_report gave for the same report ("triage_report", dump.json.gz). A planted pattern is
named on its kernel, or, where that capture lacks its metrics, reported "not assessed" naming
what is missing: never silently absent. Controls get no pattern."""
import copy
import gzip
import json
from functools import lru_cache
from pathlib import Path

import pytest

from tritonify.diagnostics.ncu.diagnose import diagnose_pages

SETS = Path(__file__).parent / "fixtures" / "h200" / "sets"
KINDS = ("own", "full", "detailed", "triage", "triage_report")
MANIFEST = json.loads((SETS / "manifest.json").read_text())
PLANTED = [m for m in MANIFEST if m["role"] == "planted"]
CONTROLS = [m for m in MANIFEST if m["role"] == "control"]
# What --set detailed cannot decide. It has no WarpStateStats: stall shares come from the source
# page's samples (G, I, M), and E's stall cycles per instruction from those shares times active
# warps over issued instructions per cycle. C, D and H are decided there from SourceCounters'
# theoretical and ideal sectors and wavefronts, in place of MemoryWorkloadAnalysis_Tables' bytes
# per sector and bank conflicts. Every planted pattern is decided there now.
NOT_IN_DETAILED: dict[str, str] = {}


def _gz(path: Path) -> str:
    return gzip.decompress(path.read_bytes()).decode("utf-8")


@lru_cache(maxsize=None)
def diagnoses(kind: str) -> dict:
    if kind == "triage_report":
        from tritonify.diagnostics.ncu.diagnose import diagnose_parsed
        from tritonify.tools.ncu.report_reader import parse_dump

        dump = json.loads(_gz(SETS / "triage" / "dump.json.gz"))
        out = diagnose_parsed(*parse_dump(dump), roots=[str(SETS)])
        return {x.launch.kernel: x for x in out}
    d = SETS / kind
    sources = [_gz(p) for p in sorted((d / "source").glob("*.csv.gz"))]
    out = diagnose_pages(_gz(d / "raw.csv.gz"), _gz(d / "details.csv.gz"), sources, roots=[str(SETS)])
    return {x.launch.kernel: x for x in out}


@pytest.mark.parametrize("kind", KINDS)
def test_every_case_was_captured(kind):
    assert {m["kernel"] for m in MANIFEST} <= set(diagnoses(kind))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", PLANTED, ids=lambda m: m["kernel"])
def test_planted_pattern_named_or_not_assessed(kind, case):
    d = diagnoses(kind)[case["kernel"]]
    (letter,) = case["plants"]
    if kind == "detailed" and NOT_IN_DETAILED.get(case["kernel"]) == letter:
        lacking = {n.pattern.letter: n for n in d.not_assessed}
        assert letter in lacking and letter not in d.letters
        assert lacking[letter].message().startswith("not assessed: the report lacks ")
        return
    assert letter in d.letters, (kind, case["kernel"], d.letters)
    primary = [h.pattern.letter for h in d.primary()]
    assert primary[0] == letter, (kind, case["kernel"], primary)
    hit = next(h for h in d.hits if h.pattern.letter == letter)
    assert hit.lines and hit.lines[0] in set(case["plants"][letter]) | {case["def_line"]}, (kind, hit.lines)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", CONTROLS, ids=lambda m: m["kernel"])
def test_control_gets_no_pattern(kind, case):
    d = diagnoses(kind)[case["kernel"]]
    assert d.hits == [], (kind, [(h.pattern.letter, h.message) for h in d.hits])


@pytest.mark.parametrize("kind", KINDS)
def test_every_capture_assesses_every_pattern(kind):
    for name, d in diagnoses(kind).items():
        assert d.not_assessed == [], (kind, name, [(n.pattern.letter, n.lacks) for n in d.not_assessed])


def test_k_local_array_has_its_own_cause_and_fix():
    for kind in KINDS:
        hit = next(h for h in diagnoses(kind)["cuda_planted_k_local_array"].hits if h.pattern.letter == "K")
        assert hit.evidence["cause"] == "local array (not a spill)" and hit.fix_text != hit.pattern.fix
        spill = next(h for h in diagnoses(kind)["planted_k_spill"].hits if h.pattern.letter == "K")
        assert spill.evidence["cause"] == "register spill" and spill.fix_text == spill.pattern.fix


def test_fp64_from_set_full_uses_the_pipe():
    hit = next(h for h in diagnoses("full")["cuda_planted_l_fp64"].hits if h.pattern.letter == "L")
    assert "sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active" in hit.evidence


def test_hmma_on_sm90_only_on_the_small_tile():
    compiled = json.loads((SETS / "summary.json").read_text())["ptx"]
    assert compiled["planted_o_hmma_small_dot"] == {"mma.sync": 8, "wgmma": 0}
    assert compiled["control_matmul_fp16"]["wgmma"] > 0 and compiled["control_matmul_fp16"]["mma.sync"] == 0
    for kind in KINDS:
        assert "O" in diagnoses(kind)["planted_o_hmma_small_dot"].letters
        assert "O" not in diagnoses(kind)["control_matmul_fp16"].letters


def test_a_kernel_off_both_roofs_gets_a_limiter_named():
    named = 0
    for kind in ("own", "full"):
        for name, d in diagnoses(kind).items():
            if d.hits:
                assert d.limiter is None
                continue
            sm = d.launch.get("sm__throughput.avg.pct_of_peak_sustained_elapsed")
            mem = max(v for n in ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
                                  "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
                                  "lts__throughput.avg.pct_of_peak_sustained_elapsed",
                                  "l1tex__throughput.avg.pct_of_peak_sustained_active")
                      if (v := d.launch.get(n)) is not None)
            if sm < 60 and mem < 60:
                assert d.limiter is not None, (kind, name)
                assert d.limiter.evidence["limiter"] and "most likely limiter" in d.limiter.message
                named += 1
            else:
                assert d.limiter is None
    assert named >= 2  # cuda_control_h_padded and cuda_control_fp32_poly, in both captures


def test_cycles_per_instruction_without_warp_state_stats_tracks_the_measured_ratio():
    # the --set full capture holds both ncu's ratio and the counters of the Little's-law estimate
    # that --set detailed falls back to (E's stall cycles there)
    from tritonify.diagnostics.ncu.context import Context
    from tritonify.diagnostics.ncu.metrics import CPI

    errors = {}
    for name, d in diagnoses("full").items():
        measured = d.launch.get(CPI)
        without = copy.copy(d.launch)
        without.metrics = {k: v for k, v in d.launch.metrics.items() if k != CPI}
        errors[name] = abs(Context(without).cycles_per_instruction() / measured - 1)
    assert len(errors) == 31 and max(errors.values()) < 0.16, errors
    assert sorted(errors.values())[-3] < 0.05, errors   # 29 of 31 within 5%


def test_e_from_detailed_names_its_cycles_an_estimate():
    hit = next(h for h in diagnoses("detailed")["planted_e_latency"].hits if h.pattern.letter == "E")
    assert "long_scoreboard_cycles_per_instruction_estimated" in hit.evidence and "estimated" in hit.message
    assert not any(k.startswith("smsp__average_warps_issue_stalled") for k in hit.evidence)
    full = next(h for h in diagnoses("full")["planted_e_latency"].hits if h.pattern.letter == "E")
    assert "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio" in full.evidence
