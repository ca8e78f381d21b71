"""Per-line attribution of the source page to the kernel's own file."""
from tritonify.diagnostics.ncu.lines import attribute
from tritonify.diagnostics.ncu.source_page import parse_source

from .helpers import FIXTURES, source_csv

TRITON_SRC = (FIXTURES / "planted_triton.py").read_text()


def profile(kernel, with_text=True):
    return attribute(parse_source(source_csv(kernel)), source_text=TRITON_SRC if with_text else None)


def test_excessive_sectors_land_on_the_strided_load():
    p = profile("planted_c_uncoalesced")
    assert p.lines[107].excessive_load_sectors == 3670016
    assert sum(s.excessive_load_sectors for n, s in p.lines.items() if n != 107) == 0
    assert p.def_line == 103


def test_excessive_store_sectors_are_kept_apart():
    p = profile("planted_d_sparse_store")
    assert p.lines[117].excessive_store_sectors > 0 and p.lines[117].excessive_load_sectors == 0


def test_inlined_library_code_goes_back_to_the_call_site():
    """tl.max's code is all in triton/language/standard.py; with the kernel's text it lands on the
    `m = tl.max(x, 0)` line, which the page itself never lists."""
    with_text = profile("control_softmax")
    assert 30 in with_text.lines and with_text.lines[30].from_library
    assert "tl.max" in with_text.lines[30].text
    without = profile("control_softmax", with_text=False)
    assert 30 not in without.lines  # folded to the nearest listed line instead
    assert sum(s.samples for s in with_text.lines.values()) == sum(s.samples for s in without.lines.values())


def test_barrier_waits_move_onto_the_barrier_line():
    p = attribute(parse_source(source_csv("cuda_planted_i_barrier")))
    # the samples sit on the LDS/STS after each BAR.SYNC; the barrier lines are 55 and 57
    waits = {n: s.barrier_wait for n, s in p.lines.items() if s.barrier_wait > 0}
    assert waits[55] + waits[57] > 0.9 * sum(waits.values())
    assert p.lines[56].stalls["barrier"] > waits.get(56, 0)  # where ncu put them


def test_local_memory_and_divergence_per_line():
    k = profile("planted_k_spill")
    assert max(k.lines.values(), key=lambda s: s.local_inst).line in (195, 196, 197, 198, 199)
    n = attribute(parse_source(source_csv("cuda_planted_n_divergent")))
    assert n.lines[82].threads_per_inst < 8  # 4 of 32 lanes run the loop
    assert n.lines[79].threads_per_inst == 32


def test_hot_lines_ranked_by_samples():
    p = profile("planted_e_latency")
    hot = p.hot_lines(3)
    assert hot[0].line == 126 and hot[0].samples > 0.9 * sum(s.samples for s in p.lines.values())
    assert hot[0].stalls.most_common(1)[0][0] == "long_sb"
    d = hot[0].to_dict()
    assert d["line"] == 126 and d["top_stalls"][0]["reason"] == "long_sb"


def test_load_latency_is_charged_to_the_load():
    """The FADDs of `x + 1.0` on the store line wait for the strided LDGs of line 107: their
    long-scoreboard samples move to 107, so the load outranks the store."""
    p = profile("planted_c_uncoalesced")
    assert p.lines[108].long_sb_moved_out > 2000 and p.lines[107].long_sb_producer >= p.lines[108].long_sb_moved_out
    assert p.lines[108].samples > p.lines[107].samples  # raw samples: the store line
    assert p.hot_lines(1)[0].line == 107                  # attributed: the load line
    total_raw = sum(s.samples for s in p.lines.values())
    total_attr = sum(s.attributed_samples for s in p.lines.values())
    assert abs(total_raw - total_attr) < 1e-6             # samples are moved, never created


def test_sass_register_decoding():
    from tritonify.diagnostics.ncu.lines import _registers

    assert _registers("@!P0  LDG.E R3, desc[UR4][R4.64]") == ({3}, {4, 5})
    assert _registers("LDG.E.128 R4, desc[UR4][R2.64]") == ({4, 5, 6, 7}, {2, 3})
    assert _registers("STG.E.128 desc[UR4][R14.64+0x800], R4") == (set(), {14, 15, 4, 5, 6, 7})
    assert _registers("FADD R4, R3, 1") == ({4}, {3})
