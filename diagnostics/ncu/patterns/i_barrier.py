"""Barrier overhead: warps wait at `__syncthreads` / `tl.debug_barrier` more than they work.

Condition: barrier stalls >= 40 % of the cycles per issued instruction (ncu's CPIStall basis).
A pipelined Triton tensor-core matmul showed 31 % barrier share at 76 % SM throughput on the
H200, which is normal for it, hence the higher bar than the skill's 20 %. Hopper's wgmma
waits (`..._stalled_gmma_...`) are reported alongside. Same names on sm_80; sm_100 as sm_90.
Line: the barrier's own line (ncu samples the wait on the instruction after BAR.SYNC; the
attribution moves it back).
"""
from tritonify.diagnostics.ncu.context import Context, Hit, Pattern
from tritonify.diagnostics.ncu.details_page import NcuRule

PATTERN = Pattern("I", "Barrier overhead", ("CPIStall",),
                  "synchronise less often: do more work between barriers, drop barriers that guard "
                  "nothing, use warp-level primitives where only a warp shares data, or use smaller blocks")

from tritonify.diagnostics.ncu.metrics import STALL

METRICS = ("smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
           "smsp__average_warps_issue_stalled_gmma_per_issue_active.ratio")


def detect(ctx: Context) -> Hit | None:
    share = ctx.stall_share("barrier")
    if share < 0.4:
        return None
    gmma = ctx.stall_share("gmma") if ctx.has(STALL.format("gmma")) else "not collected"
    return Hit(PATTERN, share,
               {"barrier_share_of_cpi": share, "gmma_share_of_cpi": gmma,
                "launch__block_size": ctx.m("launch__block_size", ctx.launch.threads_per_block)},
               f"{share:.0%} of each instruction's cycles are spent waiting at barriers",
               ctx.lines_by(lambda s: s.barrier_wait))


def matches_rule(rule: NcuRule) -> bool:
    d = rule.description.lower()
    return rule.name == "CPIStall" and "scoreboard dependency on a l1tex" not in d and "barrier" in d \
        and "memory barrier" not in d
