"""Each detector's threshold, on synthetic launches: one side fires, the other does not."""
import pytest

from tritonify.diagnostics.ncu.context import Context
from tritonify.diagnostics.ncu.patterns import by_letter, detectors
from tritonify.diagnostics.ncu.raw_page import Launch

CPI = "smsp__average_warp_latency_per_inst_issued.ratio"


def stall(reason):
    return f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"


def fires(letter, **metrics):
    metrics = {k.replace("__DOT__", "."): v for k, v in metrics.items()}
    launch = Launch(id="0", kernel="k", grid=(1024, 1, 1), block=(128, 1, 1),
                    metrics={"launch__sm_count": 132, **metrics})
    return by_letter(letter).detect(Context(launch)) is not None


def m(**kw):
    return kw


def test_fourteen_detectors_in_letter_order():
    assert [d.PATTERN.letter for d in detectors()] == list("ABCDEFGHIJKLMN")


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
            CPI: 100.0, stall("drain"): 50.0}
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


def test_k_spill_and_plain_local_memory():
    assert fires("K", **{"sass__inst_executed_register_spilling": 10.0})
    assert not fires("K", **{"sass__inst_executed_register_spilling": 0.0, "smsp__sass_inst_executed_op_local_ld.sum": 100.0})


def test_l_fp64_share_and_parts_fallback():
    assert fires("L", **{"smsp__sass_thread_inst_executed_op_fp64_pred_on.sum": 10.0, "smsp__sass_thread_inst_executed.sum": 1000.0})
    assert not fires("L", **{"smsp__sass_thread_inst_executed_op_fp64_pred_on.sum": 1.0, "smsp__sass_thread_inst_executed.sum": 1000.0})
    # --set full collects the parts, not the total
    assert fires("L", **{"smsp__sass_thread_inst_executed_op_dfma_pred_on.sum": 50.0, "smsp__sass_thread_inst_executed.sum": 1000.0})


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
    assert fires("N", **{"smsp__thread_inst_executed_per_inst_executed.ratio": 10.0})
