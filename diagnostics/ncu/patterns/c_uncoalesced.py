"""Uncoalesced global loads: each 32-byte sector fetched carries few useful bytes.

Condition: `smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio` <= 16 (half or
more of every sector wasted), the measure ncu's MemoryCacheAccessPattern rule uses. Raw
"sectors per request > 5" is wrong: a vectorised (128-bit) coalesced Triton load issues 16
sectors per request, the ideal for its access width. Evidence also gives the excessive share of
`memory_l2_theoretical_sectors_global` over its `_ideal` (ncu's UncoalescedGlobalAccess).
Same names on sm_80 and sm_100. Line: per-line "L2 Theoretical Sectors Global Excessive" of
load instructions.
"""
from tritonify.diagnostics.ncu.context import Context, Hit, Pattern
from tritonify.diagnostics.ncu.details_page import NcuRule

PATTERN = Pattern("C", "Uncoalesced global access", ("UncoalescedGlobalAccess", "MemoryCacheAccessPattern"),
                  "make adjacent lanes read adjacent addresses: index the contiguous (stride-1) dimension "
                  "with tl.arange, transpose the layout once, or load a tile and rearrange it on chip")

BYTES = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"

METRICS = (BYTES, "smsp__sass_inst_executed_op_global_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
           "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")
EXPLAINS = ("E",)


def detect(ctx: Context) -> Hit | None:
    used, measure = ctx.useful_bytes_per_sector("load", BYTES)
    if used is None or ctx.opt("smsp__sass_inst_executed_op_global_ld.sum") == 0 or used <= 0 or used > 16:
        return None
    waste = 1 - used / 32
    total = ctx.opt("memory_l2_theoretical_sectors_global")
    ideal = ctx.opt("memory_l2_theoretical_sectors_global_ideal")
    evidence = {measure: used, BYTES: ctx.opt(BYTES),
                "excessive_sector_share": (total - ideal) / total if total and ideal is not None else "not collected",
                "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": ctx.opt("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
                "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": ctx.opt("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")}
    impact = waste * min(1.0, ctx.memory_pct / 60)
    return Hit(PATTERN, impact, {k: v for k, v in evidence.items() if v is not None},
               f"global loads use {used:.1f} of the 32 bytes of each sector fetched: {waste:.0%} of load traffic is wasted",
               ctx.lines_by(lambda s: s.excessive_load_sectors))


def matches_rule(rule: NcuRule) -> bool:
    d = rule.description.lower()
    if rule.name == "MemoryCacheAccessPattern":
        return "local" not in d and "store" not in d and "load" in d
    return rule.name == "UncoalescedGlobalAccess"
