"""Metric names the detectors read, with their equivalents on other architectures.

Detectors ask for a canonical sm_90 name (Nsight Compute 2025.3.1, checked on an H200); `NAMES`
lists what to try instead on sm_80 (A100) and sm_100 (B200) where the name differs or a metric
is deprecated. `Context.m()` tries them in order, so one detector serves all three.
"""
from __future__ import annotations

# canonical (sm_90) -> alternatives, tried in order after the canonical name
EQUIVALENTS: dict[str, tuple[str, ...]] = {
    # Threads per instruction: the smsp__thread_inst_executed_* ratios are DEPRECATED on gh100.
    "smsp__average_thread_inst_executed_per_inst_executed.ratio": (
        "smsp__thread_inst_executed_per_inst_executed.ratio",),
    "smsp__average_thread_inst_executed_pred_on_per_inst_executed.ratio": (
        "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio",),
    # Tensor pipe: sm_80 has only the hmma/imma sub-pipes; sm_100 splits into tensor_subpipe_*.
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active": (
        "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
        "sm__pipe_tensor_subpipe_hmma_cycles_active.avg.pct_of_peak_sustained_active",
        "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"),
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active": (
        "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active",
        "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed"),
    # Asynchronous copies: cp.async (sm_80+) and the TMA unit (sm_90+).
    "smsp__sass_inst_executed_op_ldgsts.sum": ("smsp__inst_executed_op_ldgsts.sum",),
    "sm__pipe_tma_cycles_active.avg.pct_of_peak_sustained_active": (
        "sm__pipe_tma_cycles_active.avg.pct_of_peak_sustained_elapsed",),
    # Atomics at L2: plain names need --metrics; the srcunit_tex ones come with --set full.
    "lts__t_sectors_op_atom.sum": ("lts__t_sectors_srcunit_tex_op_atom_dot_alu.sum",),
    "lts__t_sectors_op_red.sum": ("lts__t_sectors_srcunit_tex_op_red.sum",),
    # FP64 instruction count: the total is not in --set full; fall back to its parts (summed
    # by the L detector) or to the pipe utilisation.
    "smsp__sass_thread_inst_executed_op_fp64_pred_on.sum": (),
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": (
        "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",),
    "launch__sm_count": ("device__attribute_multiprocessor_count",),
}

STALL = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"
CPI = "smsp__average_warp_latency_per_inst_issued.ratio"


def candidates(name: str) -> tuple[str, ...]:
    return (name, *EQUIVALENTS.get(name, ()))
