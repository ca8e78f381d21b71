"""Local memory: register spills, and per-thread arrays that live in local memory without a spill.

Two causes, told apart by ncu's spill counter:
* spill: `sass__inst_executed_register_spilling` > 0: values that do not fit in registers go
  to local memory and back (255 registers per thread are allowed on sm_90, so "registers > 128"
  alone is not a spill);
* local array: local loads/stores that are not spills, at least 5 % of memory instructions.
  The count is, in order of preference: LDL/STL executed `smsp__sass_inst_executed_op_local_{ld,st}.sum`
  (asked for by name; `sass__inst_executed_local_{loads,stores}` come only with whole sections and
  are not collected by name), else the instructions the source page places in local memory
  (SourceCounters, in every capture: the triage collection on the H200 had only these); without
  either, the pattern is not assessed: a per-thread array indexed with a value known only at run time, or too large for
  registers (ptxas reports a stack frame with 0 bytes of spill). On the H200 a CUDA kernel with a
  32-float array indexed by loaded data ran 16.7M local loads and 0 spill instructions.
Same names on sm_80 and sm_100. Line: per-line executed instructions whose address space is
Local (LDL/STL).
"""
from tritonify.diagnostics.ncu.context import Context, Hit, Missing, Pattern
from tritonify.diagnostics.ncu.details_page import NcuRule
from tritonify.diagnostics.ncu import code_actions

PATTERN = Pattern("K", "Local memory (register spill or local array)", ("MemoryCacheAccessPattern",),
                  "lower the registers each thread needs: more warps for the same tile (num_warps), a smaller "
                  "BLOCK, or fewer values kept live across a loop or reduction")
LOCAL_ARRAY_FIX = ("index per-thread arrays with compile-time constants only (a fully unrolled loop), or keep the "
                   "table in shared memory (CUDA `__shared__`, Triton: a tensor and tl.gather/tl.where) so it is "
                   "not placed in local memory")
SPILL = "sass__inst_executed_register_spilling"
LOCAL_LD, LOCAL_ST = "smsp__sass_inst_executed_op_local_ld.sum", "smsp__sass_inst_executed_op_local_st.sum"
METRICS = (SPILL, LOCAL_LD, LOCAL_ST, "smsp__sass_inst_executed_op_global_ld.sum",
           "smsp__sass_inst_executed_op_global_st.sum", "launch__registers_per_thread")
FALLBACKS = {
    LOCAL_LD: ("sass__inst_executed_local_loads", "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum"),
    LOCAL_ST: ("sass__inst_executed_local_stores", "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum"),
    "smsp__sass_inst_executed_op_global_ld.sum": ("sass__inst_executed_global_loads",
                                                  "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
    "smsp__sass_inst_executed_op_global_st.sum": ("sass__inst_executed_global_stores",
                                                  "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
}
EXPLAINS = ("E", "J")


def _local_instructions(ctx: Context) -> float | None:
    if ctx.has(LOCAL_LD) or ctx.has(LOCAL_ST):
        return ctx.total(LOCAL_LD, LOCAL_ST)
    if ctx.profile is not None:
        return sum(s.local_inst for s in ctx.profile.lines.values())
    return None


def detect(ctx: Context) -> Hit | None:
    spills = ctx.m(SPILL)
    local = _local_instructions(ctx)
    glob = ctx.total("smsp__sass_inst_executed_op_global_ld.sum", "smsp__sass_inst_executed_op_global_st.sum")
    regs = ctx.opt("launch__registers_per_thread")
    lines = ctx.lines_by(lambda s: s.local_inst)
    if spills > 0:
        share = spills / (spills + glob) if spills + glob else 1.0
        evidence = {SPILL: spills, "local_memory_instructions": local, "launch__registers_per_thread": regs,
                    "spill_share_of_memory_instructions": share, "cause": "register spill"}
        return Hit(PATTERN, share, {k: v for k, v in evidence.items() if v is not None},
                   f"{int(spills):,} spill instructions executed ({share:.0%} of memory instructions)"
                   + (f" with {int(regs)} registers per thread" if regs is not None else ""), lines)
    if local is None:
        raise Missing((LOCAL_LD, LOCAL_ST, "a source page (SourceCounters)"))
    share = local / (local + glob) if local + glob else 0.0
    if local <= 0 or share < 0.05:
        return None
    evidence = {SPILL: spills, "local_memory_instructions": local, "local_share_of_memory_instructions": share,
                "launch__registers_per_thread": regs, "cause": "local array (not a spill)"}
    return Hit(PATTERN, share, {k: v for k, v in evidence.items() if v is not None},
               f"{int(local):,} local-memory instructions ({share:.0%} of memory instructions) and no spill: a "
               "per-thread array indexed at run time (or too large for registers) lives in local memory",
               lines, fix=LOCAL_ARRAY_FIX)


def matches_rule(rule: NcuRule) -> bool:
    return rule.name == "MemoryCacheAccessPattern" and "local" in rule.description.lower()


def actions(text, lines, *, cuda=False, sm_count=132, limiter=None):
    return code_actions.spill_warps(text)
