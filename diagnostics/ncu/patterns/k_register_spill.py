"""Register spill: values that do not fit in registers go to local memory and back.

Condition: `sass__inst_executed_register_spilling` > 0 (spill loads/stores executed); local
memory that is not a spill (a dynamically indexed per-thread array) is reported in the
evidence, not as K. 255 registers per thread are allowed on sm_90, so "registers > 128" alone
is not a spill. Same names on sm_80 and sm_100. Line: per-line executed instructions whose
address space is Local.
"""
from tritonify.diagnostics.ncu.context import Context, Hit, Pattern

PATTERN = Pattern("K", "Register spill", (),
                  "lower the registers each thread needs: more warps for the same tile (num_warps), a smaller "
                  "BLOCK, or fewer values kept live across a loop or reduction")


def detect(ctx: Context) -> Hit | None:
    spills = ctx.m("sass__inst_executed_register_spilling")
    if spills <= 0:
        return None
    local = ctx.m("smsp__sass_inst_executed_op_local_ld.sum") + ctx.m("smsp__sass_inst_executed_op_local_st.sum")
    glob = ctx.m("smsp__sass_inst_executed_op_global_ld.sum") + ctx.m("smsp__sass_inst_executed_op_global_st.sum")
    share = spills / (spills + glob) if spills + glob else 1.0
    return Hit(PATTERN, share,
               {"sass__inst_executed_register_spilling": spills, "local_memory_instructions": local,
                "launch__registers_per_thread": ctx.m("launch__registers_per_thread"),
                "spill_share_of_memory_instructions": share},
               f"{int(spills):,} spill instructions executed ({share:.0%} of memory instructions) with "
               f"{int(ctx.m('launch__registers_per_thread'))} registers per thread",
               ctx.lines_by(lambda s: s.local_inst))
