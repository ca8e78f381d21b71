"""Shared-memory bank conflicts: a warp's shared access needs several wavefronts.

Condition: bank conflicts >= 10 % of shared wavefronts (ld + st), ncu's SharedMemoryConflicts
threshold. `l1tex__data_bank_conflicts...` counts wavefronts beyond the minimum, so a 128-bit
LDS that needs 4 wavefronts is not a conflict. Same names on sm_80 and sm_100. Line: per-line
"L1 Wavefronts Shared Excessive".
"""
from tritonify.diagnostics.ncu.context import Context, Hit, Pattern

PATTERN = Pattern("H", "Shared-memory bank conflicts", ("SharedMemoryConflicts", "UncoalescedSharedAccess"),
                  "pad the shared tile by one element per row (tile[32][33]) or swizzle the index so a "
                  "warp's 32 lanes hit 32 different banks")

METRICS = ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
           "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
           "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio",
           "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio")
EXPLAINS = ("I",)


def detect(ctx: Context) -> Hit | None:
    conflicts = ctx.total("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                          "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum")
    wavefronts = ctx.total("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                           "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")
    if not wavefronts or conflicts / wavefronts < 0.1:
        return None
    share = conflicts / wavefronts
    stall = ctx.stall_share("mio_throttle") + ctx.stall_share("short_scoreboard")
    return Hit(PATTERN, share * max(stall, 0.1),
               {"bank_conflicts": conflicts, "shared_wavefronts": wavefronts, "conflict_share": share,
                "mio_plus_short_scoreboard_share_of_cpi": stall},
               f"{share:.0%} of shared-memory wavefronts are bank-conflict replays",
               ctx.lines_by(lambda s: s.shared_excessive_wavefronts))
