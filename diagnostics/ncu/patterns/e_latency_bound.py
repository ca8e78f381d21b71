"""Latency bound: warps wait on memory (long scoreboard) while no memory unit is busy.

Condition: long-scoreboard stalls >= 60 % of the cycles per issued instruction (ncu's CPIStall
ratio `..._long_scoreboard_per_issue_active / smsp__average_warp_latency_per_inst_issued`),
at least 80 stall cycles per issued instruction (the memory latency is not amortised over
independent work), and the busiest memory unit below 80 % of peak. A streaming kernel also
stalls on long scoreboard, but either keeps memory busy or hides most of the latency: on the
H200 a coalesced copy at 48 % of DRAM peak spent 51 stall cycles per instruction, a pointer
chase 184. Same names on sm_80 and sm_100. Line: the load whose results are waited for most
(long-scoreboard samples traced from the waiting instruction back to the load, see lines.py).
"""
from tritonify.diagnostics.ncu.context import Context, Hit, Pattern
from tritonify.diagnostics.ncu.details_page import NcuRule

PATTERN = Pattern("E", "Latency bound (long scoreboard)", ("CPIStall",),
                  "put more independent loads in flight: more elements per program, prefetch the next "
                  "iteration's data, break dependent load chains, or raise occupancy")

METRICS = ("smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
           "smsp__average_warp_latency_per_inst_issued.ratio", "smsp__issue_active.avg.per_cycle_active")


def detect(ctx: Context) -> Hit | None:
    share = ctx.stall_share("long_scoreboard")
    cycles = ctx.stall_cycles("long_scoreboard")
    if share < 0.6 or cycles < 80 or ctx.memory_pct >= 80:
        return None
    measured = ctx.has(METRICS[0])
    # without WarpStateStats the cycles are an estimate (Context.stall_cycles), named as such
    cycles_key = METRICS[0] if measured else "long_scoreboard_cycles_per_instruction_estimated"
    return Hit(PATTERN, share * (1 - ctx.memory_pct / 100),
               {"long_scoreboard_share_of_cpi": share,
                cycles_key: cycles,
                "busiest_memory_unit_pct": ctx.memory_pct,
                "smsp__issue_active.avg.per_cycle_active": ctx.opt("smsp__issue_active.avg.per_cycle_active")},
               f"{share:.0%} of each instruction's cycles wait on global memory ({cycles:.0f} cycles per "
               f"instruction{'' if measured else ', estimated from warp samples'}) while the busiest memory unit runs at {ctx.memory_pct:.0f}% of peak",
               ctx.lines_by(lambda s: s.load_latency))


def matches_rule(rule: NcuRule) -> bool:
    return rule.name == "CPIStall" and "scoreboard dependency on a l1tex" in rule.description.lower()
