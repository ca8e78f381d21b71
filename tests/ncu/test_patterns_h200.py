"""The 14 detectors on the kernels planted on the H200: each planted pattern is named on its kernel,
at its planted line; the clean controls get no pattern."""
import pytest

from .helpers import diagnosis, manifest

PLANTED = [m for m in manifest() if m["role"] == "planted"]
CONTROLS = [m for m in manifest() if m["role"] == "control"]


def test_every_pattern_is_planted_somewhere():
    letters = {letter for m in manifest() for letter in m["plants"]}
    assert letters == set("ABCDEFGHIJKLMN")


@pytest.mark.parametrize("case", PLANTED, ids=lambda m: m["kernel"])
def test_planted_pattern_is_named_first(case):
    d = diagnosis(case["kernel"])
    (expected,) = case["plants"]
    assert expected in d.letters
    # the planted pattern is the cause: it is not explained by another, and it ranks first
    primary = [h.pattern.letter for h in d.primary()]
    assert primary[0] == expected, (case["kernel"], d.letters)


@pytest.mark.parametrize("case", PLANTED, ids=lambda m: m["kernel"])
def test_planted_pattern_points_at_planted_line(case):
    d = diagnosis(case["kernel"])
    (letter, lines), = case["plants"].items()
    hit = next(h for h in d.hits if h.pattern.letter == letter)
    assert hit.lines, f"{letter} has no line on {case['kernel']}"
    assert hit.lines[0] in set(lines) | {case["def_line"]}, (hit.lines, lines)


@pytest.mark.parametrize("case", CONTROLS, ids=lambda m: m["kernel"])
def test_clean_control_gets_no_pattern(case):
    d = diagnosis(case["kernel"])
    assert d.hits == [], [(h.pattern.letter, h.message) for h in d.hits]


def test_triton_masked_lanes_probe_shows_divergence():
    """Triton turned the masked loop into a branch: N fires on the Triton probe too."""
    d = diagnosis("probe_n_masked_lanes")
    assert d.letters[0] == "N"
    n = d.hits[0]
    assert n.lines[0] == 242  # the tl.where inside the loop


def test_vectorised_triton_copy_is_not_uncoalesced():
    """16 sectors per request is ideal for 128-bit accesses: C must not fire on the copy."""
    d = diagnosis("control_copy")
    assert d.launch.metrics["l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio"] == 16
    assert "C" not in d.letters


def test_occupancy_names_the_limiter():
    j = next(h for h in diagnosis("planted_j_overstaged").hits if h.pattern.letter == "J")
    assert j.evidence["limiter"] == "shared_mem"
    assert "shared mem" in j.message
    j = next(h for h in diagnosis("cuda_planted_j_smem_limited").hits if h.pattern.letter == "J")
    assert j.evidence["sm__maximum_warps_per_active_cycle_pct"] == pytest.approx(3.12)


def test_achieved_occupancy_under_small_grid_is_explained_by_a():
    d = diagnosis("planted_a_small_grid")
    j = next(h for h in d.hits if h.pattern.letter == "J")
    assert j.explained_by == "A"


def test_comparison_with_ncu_rules():
    cmp = diagnosis("planted_c_uncoalesced").to_dict()["comparison"]
    assert "C" in cmp["both"]
    # ncu's AchievedOccupancy fires on the control copy (78% of 100%); tritonify stays quiet there
    cmp = diagnosis("control_copy").to_dict()["comparison"]
    assert "J" in cmp["ncu_only"] and cmp["both"] == [] and cmp["tritonify_only"] == []
    # no ncu rule covers atomics (G) or pipelining (M): tritonify only
    assert "G" in diagnosis("planted_g_atomics").to_dict()["comparison"]["tritonify_only"]
    assert "M" in diagnosis("planted_m_no_pipelining").to_dict()["comparison"]["tritonify_only"]


def test_json_shape():
    obj = diagnosis("planted_k_spill").to_dict()
    assert obj["id"] == "14" and obj["kernel"] == "planted_k_spill"
    p = obj["patterns"][0]
    assert set(p) >= {"pattern", "title", "severity", "evidence", "message", "fix", "lines", "impact"}
    assert p["pattern"] == "K" and p["severity"] == "warning"
    assert obj["lines"][0]["rank"] == 1 and obj["lines"][0]["line"] in (195, 196, 197, 198, 199)


@pytest.mark.parametrize("case", [m for m in PLANTED if set(m["plants"]) - set("AJ")], ids=lambda m: m["kernel"])
def test_hottest_line_is_a_planted_line(case):
    """Ranked by attributed samples (load latency on the load, barrier waits on the barrier), the
    first hot line is a planted line for every line-level pattern. A and J are launch-level."""
    d = diagnosis(case["kernel"])
    planted = {n for lines in case["plants"].values() for n in lines}
    assert d.hot_lines(1)[0]["line"] in planted, d.hot_lines(3)
