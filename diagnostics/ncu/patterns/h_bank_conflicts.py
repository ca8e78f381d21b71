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


CONFLICTS = ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
             "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum")
WAVEFRONTS = ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
              "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")
# SourceCounters' totals (in --set detailed too): wavefronts and the minimum the accesses need
SHARED, SHARED_IDEAL = "memory_l1_wavefronts_shared", "memory_l1_wavefronts_shared_ideal"


def _conflicts(ctx: Context) -> tuple[float, float, str]:
    """(extra wavefronts, wavefronts, measure): the bank-conflict counters where the report has
    them; else the excessive shared wavefronts (wavefronts over their ideal), ncu's
    UncoalescedSharedAccess measure. On the H200 both gave 0.55 and 0.97 on the two conflicting
    kernels and at most 0.08 and 0.04 on the 29 others (tests/ncu/fixtures/h200/sets/own)."""
    if all(ctx.has(n) for n in CONFLICTS + WAVEFRONTS):
        return ctx.total(*CONFLICTS), ctx.total(*WAVEFRONTS), "bank_conflicts"
    if ctx.has(SHARED) and ctx.has(SHARED_IDEAL):
        wavefronts = ctx.m(SHARED)
        return max(0.0, wavefronts - ctx.m(SHARED_IDEAL)), wavefronts, "excessive_shared_wavefronts"
    return ctx.total(*CONFLICTS, *WAVEFRONTS), 0.0, ""   # raises Missing naming the counters


def detect(ctx: Context) -> Hit | None:
    conflicts, wavefronts, measure = _conflicts(ctx)
    if not wavefronts or conflicts / wavefronts < 0.1:
        return None
    share = conflicts / wavefronts
    stall = ctx.stall_share("mio_throttle") + ctx.stall_share("short_scoreboard")
    return Hit(PATTERN, share * max(stall, 0.1),
               {measure: conflicts, "shared_wavefronts": wavefronts, "conflict_share": share,
                "mio_plus_short_scoreboard_share_of_cpi": stall},
               f"{share:.0%} of shared-memory wavefronts are bank-conflict replays",
               ctx.lines_by(lambda s: s.shared_excessive_wavefronts))
