"""Each detector's threshold, on synthetic launches: one side fires, the other does not; and a
report without a detector's metrics makes it "not assessed", never "not found"."""
import pytest

from tritonify.diagnostics.ncu.context import Context, Missing
from tritonify.diagnostics.ncu.diagnose import diagnose_launch
from tritonify.diagnostics.ncu.patterns import by_letter, detectors
from tritonify.diagnostics.ncu.raw_page import Launch

CPI = "smsp__average_warp_latency_per_inst_issued.ratio"


def stall(reason):
    return f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"


# Benign values for every metric some detector needs: a kernel at no roof and with no pattern.
BENIGN = {
    "launch__sm_count": 132, "launch__grid_size": 1024, "sm__cycles_active.avg": 95.0, "sm__cycles_active.max": 100.0,
    "gpu__time_duration.sum": 100_000.0,
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio": 32.0,
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio": 32.0,
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed": 40.0,
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": 70.0,
    CPI: 20.0, stall("long_scoreboard"): 2.0, stall("barrier"): 1.0, stall("membar"): 0.0, stall("lg_throttle"): 0.0,
    stall("drain"): 0.0, stall("mio_throttle"): 0.0, stall("short_scoreboard"): 0.0,
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active": 20.0,
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active": 0.0,
    "smsp__inst_executed.sum": 1e6, "smsp__sass_inst_executed_op_shared_ld.sum": 0.0,
    "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum": 0.0, "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum": 0.0,
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 1000.0, "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": 1000.0,
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": 0.0,
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": 0.0,
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 0.0, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": 0.0,
    "sm__maximum_warps_per_active_cycle_pct": 100.0, "sm__warps_active.avg.pct_of_peak_sustained_active": 80.0,
    "sass__inst_executed_register_spilling": 0.0, "sass__inst_executed_local_loads": 0.0,
    "sass__inst_executed_local_stores": 0.0, "smsp__sass_inst_executed_op_global_ld.sum": 1000.0,
    "smsp__sass_inst_executed_op_global_st.sum": 1000.0,
    "smsp__sass_thread_inst_executed_op_fp64_pred_on.sum": 0.0, "smsp__sass_thread_inst_executed.sum": 1e6,
    "smsp__sass_inst_executed_op_ldgsts.sum": 0.0, "sm__pipe_tma_cycles_active.avg.pct_of_peak_sustained_active": 0.0,
    "smsp__average_thread_inst_executed_per_inst_executed.ratio": 32.0,
    "smsp__average_thread_inst_executed_pred_on_per_inst_executed.ratio": 31.0,
    "device__attribute_compute_capability_major": 9.0,
    "sm__inst_executed_pipe_tensor_op_hmma.avg.pct_of_peak_sustained_active": 0.0,
    "sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_active": 0.0,
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active": 0.0,
}


def _launch(metrics, base=True):
    metrics = {k.replace("__DOT__", "."): v for k, v in metrics.items()}
    return Launch(id="0", kernel="k", grid=(1024, 1, 1), block=(128, 1, 1),
                  metrics={**(BENIGN if base else {"launch__sm_count": 132}), **metrics})


def fires(letter, base=True, **metrics):
    return by_letter(letter).detect(Context(_launch(metrics, base))) is not None


def test_benign_launch_has_no_pattern_and_every_pattern_assessed():
    d = diagnose_launch(_launch({}))
    assert d.hits == [] and d.not_assessed == []


# every pattern but A, which is decided on the launch's own grid
@pytest.mark.parametrize("letter", [d.PATTERN.letter for d in detectors() if d.PATTERN.letter != "A"])
def test_a_report_without_the_metrics_is_not_assessed(letter):
    # only the launch identity: nothing may be decided on metrics that were not measured
    launch = Launch(id="0", kernel="k", grid=(1024, 1, 1), block=(128, 1, 1),
                    metrics={"device__attribute_compute_capability_major": 9.0})
    with pytest.raises(Missing):
        by_letter(letter).detect(Context(launch))
    d = diagnose_launch(launch)
    assert letter in {n.pattern.letter for n in d.not_assessed} or letter == "Z"
    assert all(n.message().startswith("not assessed: the report lacks ") for n in d.not_assessed)


def m(**kw):
    return kw


def test_detectors_are_discovered_in_letter_order():
    """Every `<letter>_<what>.py` in the package is a detector, in letter order, named by its own
    letter (A-N the planted patterns, O HMMA instead of wgmma on sm_90, Z the limiter when none fired)."""
    from pathlib import Path

    from tritonify.diagnostics.ncu import patterns

    files = sorted(p.stem for p in Path(patterns.__file__).resolve().parent.glob("[a-z]_*.py"))
    letters = [d.PATTERN.letter for d in detectors()]
    assert letters == [f[0].upper() for f in files], "a pattern module not discovered: re-run the editable install"
    assert letters == sorted(set(letters)) and set("ABCDEFGHIJKLMNOZ") <= set(letters)


def test_a_small_grid():
    assert fires("A", **{"launch__grid_size": 131})
    assert not fires("A", **{"launch__grid_size": 132})


def test_b_imbalance():
    assert fires("B", **{"launch__grid_size": 1000, "sm__cycles_active.avg": 60, "sm__cycles_active.max": 100})
    assert not fires("B", **{"launch__grid_size": 1000, "sm__cycles_active.avg": 80, "sm__cycles_active.max": 100})
    # fewer blocks than SMs is A's business
    assert not fires("B", **{"launch__grid_size": 64, "sm__cycles_active.avg": 10, "sm__cycles_active.max": 100})


@pytest.mark.parametrize("letter,metric", [("C", "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"),
                                           ("D", "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio")])
def test_c_d_bytes_per_sector(letter, metric):
    assert fires(letter, **{metric: 8.0})
    assert fires(letter, **{metric: 16.0})
    assert not fires(letter, **{metric: 17.0})
    assert not fires(letter, **{metric: 32.0})


def test_e_latency_needs_exposed_latency_and_idle_memory():
    base = {CPI: 200.0, stall("long_scoreboard"): 180.0, "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed": 40.0}
    assert fires("E", **base)
    assert not fires("E", **{**base, "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed": 85.0})  # bandwidth-bound
    assert not fires("E", **{**base, CPI: 64.0, stall("long_scoreboard"): 50.0})  # streaming copy: latency hidden
    assert not fires("E", **{**base, stall("long_scoreboard"): 100.0})  # under 60% of CPI


def test_f_needs_fma_no_tensor_and_shared_operands():
    base = {"sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active": 65.0,
            "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active": 0.0,
            "smsp__inst_executed.sum": 1e6, "smsp__sass_inst_executed_op_shared_ld.sum": 1e5}
    assert fires("F", **base)
    assert not fires("F", **{**base, "smsp__sass_inst_executed_op_shared_ld.sum": 0.0})  # elementwise FMA
    assert not fires("F", **{**base, "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active": 40.0})
    assert not fires("F", **{**base, "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active": 30.0})


def test_g_atomics():
    base = {"l1tex__t_requests_pipe_lsu_mem_global_op_red.sum": 100.0, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 100.0,
            "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": 0.0, CPI: 100.0, stall("drain"): 50.0}
    assert fires("G", **base)
    assert not fires("G", **{**base, stall("drain"): 10.0})
    assert not fires("G", **{**base, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 5000.0})


def test_h_bank_conflicts():
    base = {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": 20.0,
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 100.0}
    assert fires("H", **base)
    assert not fires("H", **{**base, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": 5.0})


def test_i_barrier():
    assert fires("I", **{CPI: 10.0, stall("barrier"): 5.0})
    assert not fires("I", **{CPI: 10.0, stall("barrier"): 3.1})  # a pipelined matmul's normal share


def test_j_occupancy_in_theory_and_against_theory():
    assert fires("J", **{"sm__maximum_warps_per_active_cycle_pct": 6.25, "sm__warps_active.avg.pct_of_peak_sustained_active": 6.2})
    assert not fires("J", **{"sm__maximum_warps_per_active_cycle_pct": 25.0, "sm__warps_active.avg.pct_of_peak_sustained_active": 24.0})
    assert fires("J", **{"sm__maximum_warps_per_active_cycle_pct": 100.0, "sm__warps_active.avg.pct_of_peak_sustained_active": 30.0})
    assert not fires("J", **{"sm__maximum_warps_per_active_cycle_pct": 100.0, "sm__warps_active.avg.pct_of_peak_sustained_active": 78.0})


def test_k_spill_and_local_array():
    assert fires("K", **{"sass__inst_executed_register_spilling": 10.0})
    # local memory without a spill: its own cause and fix
    launch = _launch({"sass__inst_executed_register_spilling": 0.0, "sass__inst_executed_local_loads": 800.0,
                      "sass__inst_executed_local_stores": 200.0})
    hit = by_letter("K").detect(Context(launch))
    assert hit is not None and hit.evidence["cause"] == "local array (not a spill)"
    assert "shared memory" in hit.fix_text and hit.fix_text != hit.pattern.fix
    # a little local traffic (under 5 % of memory instructions) is not worth a finding
    assert not fires("K", **{"sass__inst_executed_local_loads": 50.0})


def test_l_fp64_share_and_parts_fallback():
    assert fires("L", **{"smsp__sass_thread_inst_executed_op_fp64_pred_on.sum": 10.0, "smsp__sass_thread_inst_executed.sum": 1000.0})
    assert not fires("L", **{"smsp__sass_thread_inst_executed_op_fp64_pred_on.sum": 1.0, "smsp__sass_thread_inst_executed.sum": 1000.0})
    # the parts, when the total is not collected
    parts = {f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum": 0.0 for op in ("dadd", "dmul")}
    assert fires("L", base=False, **parts, **{"smsp__sass_thread_inst_executed_op_dfma_pred_on.sum": 50.0,
                                             "smsp__sass_thread_inst_executed.sum": 1000.0})
    # --set full: no FP64 count, the FP64 pipe utilisation decides
    pipe = "sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active"
    assert fires("L", base=False, **{pipe: 11.7})
    assert not fires("L", base=False, **{pipe: 0.0})
    # --set detailed: the DFMA rate against its peak
    rate = {"derived__sm__sass_thread_inst_executed_op_dfma_pred_on_x2": 16896.0}
    assert fires("L", base=False, **rate, **{"derived__smsp__sass_thread_inst_executed_op_dfma_pred_on_x2": 1959.0})
    assert not fires("L", base=False, **rate, **{"derived__smsp__sass_thread_inst_executed_op_dfma_pred_on_x2": 0.0})


def test_o_hmma_where_wgmma_exists():
    hmma = {"sm__inst_executed_pipe_tensor_op_hmma.avg.pct_of_peak_sustained_active": 7.2,
            "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active": 21.5}
    assert fires("O", **hmma)
    assert not fires("O", **hmma, **{"sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_active": 4.9})
    assert not fires("O", **hmma, **{"device__attribute_compute_capability_major": 8.0})  # no wgmma on sm_80
    # HFMA2.MMA register moves: one cycle per instruction on the same pipe (fp32 CUDA kernels)
    assert not fires("O", **{"sm__inst_executed_pipe_tensor_op_hmma.avg.pct_of_peak_sustained_active": 1.9,
                             "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active": 1.9})


def test_z_names_a_limiter_only_below_both_roofs_and_only_when_nothing_else_fired():
    low = {"sm__throughput.avg.pct_of_peak_sustained_elapsed": 20.0,
           "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed": 10.0, stall("wait"): 8.0}
    d = diagnose_launch(_launch(low))
    assert d.hits == [] and d.limiter is not None and d.limiter.pattern.letter == "Z"
    assert d.limiter.evidence["limiter"] == "wait" and "fixed-latency" in d.limiter.message
    assert d.to_dict()["limiter"]["evidence"]["limiter"] == "wait"
    assert diagnose_launch(_launch({})).limiter is None  # at 70 % of the compute roof: nothing to name
    d = diagnose_launch(_launch({**low, "launch__grid_size": 16}))
    assert [h.pattern.letter for h in d.hits] == ["A"] and d.limiter is None  # a pattern fired


def test_m_needs_tensor_work_without_async_copies():
    base = {"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active": 36.0, CPI: 40.0, stall("long_scoreboard"): 20.0}
    assert fires("M", **base)
    assert not fires("M", **{**base, "smsp__sass_inst_executed_op_ldgsts.sum": 1e6})  # pipelined with cp.async
    assert not fires("M", **{**base, "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active": 1.9})


def test_n_divergence_and_deprecated_name():
    assert fires("N", **{"smsp__average_thread_inst_executed_per_inst_executed.ratio": 6.0})
    assert not fires("N", **{"smsp__average_thread_inst_executed_per_inst_executed.ratio": 32.0,
                             "smsp__average_thread_inst_executed_pred_on_per_inst_executed.ratio": 24.1})
    # sm_80 / older exports only have the deprecated name
    assert fires("N", base=False, **{"smsp__thread_inst_executed_per_inst_executed.ratio": 10.0,
                                     "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio": 10.0})


# --- classes the real kernels asked for (results/realkernels/realkernels_h200.md) ---------------------
PER_SM = {"launch__grid_size": 132, "launch__waves_per_multiprocessor": 0.5,
          "launch__occupancy_limit_registers": 2, "launch__occupancy_limit_warps": 8,
          "launch__occupancy_limit_shared_mem": 7, "launch__occupancy_limit_blocks": 32,
          "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed": 44.0,
          "sm__throughput.avg.pct_of_peak_sustained_elapsed": 20.0}


def test_partial_wave_below_both_roofs_is_a_small_grid_with_the_programs_per_sm():
    hit = by_letter("A").detect(Context(_launch(PER_SM)))
    assert hit is not None and hit.evidence["blocks_per_sm_allowed"] == 2
    assert "264 programs" in hit.fix_text and "registers limit" in hit.message


@pytest.mark.parametrize("change", [
    {"gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed": 75.0},   # at the memory roof
    {"sm__throughput.avg.pct_of_peak_sustained_elapsed": 70.0},         # at the SM roof
    {"launch__waves_per_multiprocessor": 0.8},                          # most slots filled
    {"sm__cycles_active.avg": 50.0},                                    # imbalanced: B's, not A's
    {"launch__occupancy_limit_registers": 1, "launch__occupancy_limit_warps": 1},  # one block per SM fits
])
def test_partial_wave_needs_empty_slots_below_both_roofs_and_balanced_sms(change):
    assert not fires("A", **{k.replace(".", "__DOT__"): v for k, v in {**PER_SM, **change}.items()})


def test_short_launch_fires_under_10_us_and_explains_occupancy():
    assert fires("P", gpu__time_duration__DOT__sum=6500.0)
    assert not fires("P", gpu__time_duration__DOT__sum=10_000.0)
    d = diagnose_launch(_launch({"gpu__time_duration.sum": 6500.0, "sm__warps_active.avg.pct_of_peak_sustained_active": 40.0}))
    assert d.letters[0] == "P"
    assert next(h for h in d.hits if h.pattern.letter == "J").explained_by == "P"


def test_mma_sync_is_not_a_finding_at_the_memory_roof():
    hmma = {"sm__inst_executed_pipe_tensor_op_hmma.avg.pct_of_peak_sustained_active": 3.0,
            "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active": 10.0}
    assert fires("O", **{k.replace(".", "__DOT__"): v for k, v in hmma.items()})
    assert not fires("O", **{k.replace(".", "__DOT__"): v for k, v in
                             {**hmma, "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed": 77.0}.items()})


def test_a_dependent_load_chain_is_latency_and_explains_the_scattered_lanes(monkeypatch):
    """A gather whose address comes from a loaded index: C (few bytes per sector) and E (long
    scoreboard) both fire; the chain makes E the cause and its fix the chain's, not a layout change."""
    from tritonify.diagnostics.ncu import diagnose
    from tritonify.diagnostics.ncu.lines import LineProfile, LineStats

    lines = {5: LineStats(5, "i = tl.load(idx_ptr + offs)", samples=10, load_sectors=1000),
             6: LineStats(6, "v = tl.load(x_ptr + i)", samples=90, load_sectors=8000, excessive_load_sectors=7000)}
    lines[6].stalls["long_sb"] = 45
    profile = LineProfile("k.py", "k", 1, lines, dependent_loads=[(5, 6)])
    monkeypatch.setattr(diagnose, "attribute", lambda *a, **k: profile)
    launch = _launch({stall("long_scoreboard"): 9.0, "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed": 30.0,
                      "sm__throughput.avg.pct_of_peak_sustained_elapsed": 10.0})
    d = diagnose.diagnose_launch(launch, source=object())
    assert d.primary()[0].pattern.letter == "E"
    c = next(h for h in d.hits if h.pattern.letter == "C")
    assert c.explained_by == "E"
    e = d.primary()[0]
    assert e.evidence["dependent_load_chain"] == "5 -> 6" and "no layout change helps" in e.fix_text
    # without the chain, a 45% long-scoreboard share is below E's bar and C stands alone
    profile.dependent_loads = []
    d = diagnose.diagnose_launch(launch, source=object())
    assert d.primary()[0].pattern.letter == "C" and "E" not in d.letters


def test_occupancy_set_by_a_tile_at_its_roof_is_not_a_finding():
    """A well-tiled matmul with one block per SM (theoretical 12.5 %) at 78 % of its tensor pipe: by
    design; the same occupancy with the tensor pipe at 40 % (the planted over-staged matmul) is J."""
    low = {"sm__maximum_warps_per_active_cycle_pct": 12.5, "sm__warps_active.avg.pct_of_peak_sustained_active": 12.4,
           "launch__occupancy_limit_shared_mem": 1, "sm__throughput.avg.pct_of_peak_sustained_elapsed": 40.0}
    def at(tensor):
        m = {**low, "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active": tensor}
        return fires("J", **{k.replace(".", "__DOT__"): v for k, v in m.items()})
    assert not at(78.0) and at(40.0)
