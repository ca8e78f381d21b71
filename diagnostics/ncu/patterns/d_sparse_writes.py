"""Sparse (uncoalesced) global stores: each 32-byte sector written carries few useful bytes.

Condition: `smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio` <= 16, ncu's
MemoryCacheAccessPattern store test. Same names on sm_80 and sm_100. Line: per-line "L2
Theoretical Sectors Global Excessive" of store instructions.
"""
from tritonify.diagnostics.ncu.context import Context, Hit, Pattern
from tritonify.diagnostics.ncu.details_page import NcuRule

PATTERN = Pattern("D", "Sparse writes", ("MemoryCacheAccessPattern", "UncoalescedGlobalAccess"),
                  "write contiguous runs: store through a tile whose fast dimension is the output's stride-1 "
                  "dimension, or stage the tile on chip and write it out transposed")

BYTES = "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio"

METRICS = (BYTES, "smsp__sass_inst_executed_op_global_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
           "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")
EXPLAINS = ("E",)


def detect(ctx: Context) -> Hit | None:
    used, measure = ctx.useful_bytes_per_sector("store", BYTES)
    if used is None or ctx.opt("smsp__sass_inst_executed_op_global_st.sum") == 0 or used <= 0 or used > 16:
        return None
    waste = 1 - used / 32
    evidence = {measure: used, BYTES: ctx.opt(BYTES), "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": ctx.opt("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"),
                "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": ctx.opt("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")}
    return Hit(PATTERN, waste * min(1.0, ctx.memory_pct / 60), {k: v for k, v in evidence.items() if v is not None},
               f"global stores use {used:.1f} of the 32 bytes of each sector written: {waste:.0%} of store traffic is wasted",
               ctx.lines_by(lambda s: s.excessive_store_sectors))


def matches_rule(rule: NcuRule) -> bool:
    d = rule.description.lower()
    return rule.name == "MemoryCacheAccessPattern" and "local" not in d and "store" in d
