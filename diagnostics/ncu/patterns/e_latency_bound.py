"""Latency bound: warps wait on memory (long scoreboard) while no memory unit is busy.

Condition: long-scoreboard stalls >= 60 % of the cycles per issued instruction (ncu's CPIStall
ratio `..._long_scoreboard_per_issue_active / smsp__average_warp_latency_per_inst_issued`),
at least 80 stall cycles per issued instruction (the memory latency is not amortised over
independent work), and the busiest memory unit below 80 % of peak. A streaming kernel also
stalls on long scoreboard, but either keeps memory busy or hides most of the latency: on the
H200 a coalesced copy at 48 % of DRAM peak spent 51 stall cycles per instruction, a pointer
chase 184. Same names on sm_80 and sm_100. Line: the load whose results are waited for most
(long-scoreboard samples traced from the waiting instruction back to the load, see lines.py).

Dependent loads: where the source page shows a global load whose address is computed from an
earlier global load's result (`LineProfile.dependent_loads`: a pointer chase, a block table then
the rows it points to, an index then a gather), E also fires at a lower bar (long scoreboard the
largest stall reason and >= 40 % of the CPI, below the memory roof), its fix is the one that fits a
chain (the latency is the cost: more chains in flight, the next index loaded early), and it explains
C on the same launch: the lanes are scattered because the data is, and no layout change helps.
Seen on vLLM 0.33.0's MHA decode attention (H200, 2026-12-02): sequence length -> block table -> K
-> V, long scoreboard 50 % of the CPI at 60 % of the DRAM roof.
"""
from tritonify.diagnostics.ncu.context import Context, Hit, Pattern
from tritonify.diagnostics.ncu.details_page import NcuRule

PATTERN = Pattern("E", "Latency bound (long scoreboard)", ("CPIStall",),
                  "put more independent loads in flight: more elements per program, prefetch the next "
                  "iteration's data, break dependent load chains, or raise occupancy")

METRICS = ("smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
           "smsp__average_warp_latency_per_inst_issued.ratio", "smsp__issue_active.avg.per_cycle_active")


CHAIN_FIX = ("a dependent load chain ({chain}): each load waits for the one that gives its address, so the "
             "latency is the cost and no layout change helps: keep more chains in flight (more programs, or "
             "several independent rows per program), load the next index before using this one (prefetch "
             "idx[i + 1] while idx[i] is used), or compute the addresses earlier (sort or precompute the index)")
CHAIN_SHARE = 0.4


def _chain(ctx: Context) -> list[tuple[int, int]]:
    return list(ctx.profile.dependent_loads) if ctx.profile is not None else []


def _top_reason(ctx: Context) -> str | None:
    from tritonify.diagnostics.ncu.patterns.z_limiter import stall_shares

    shares = stall_shares(ctx)
    return next(iter(shares), None)


def detect(ctx: Context) -> Hit | None:
    share = ctx.stall_share("long_scoreboard")
    cycles = ctx.stall_cycles("long_scoreboard")
    chain = _chain(ctx)
    if ctx.memory_pct >= 80:
        return None
    strict = share >= 0.6 and cycles >= 80
    chained = bool(chain) and share >= CHAIN_SHARE and _top_reason(ctx) == "long_scoreboard"
    if not (strict or chained):
        return None
    measured = ctx.has(METRICS[0])
    # without WarpStateStats the cycles are an estimate (Context.stall_cycles), named as such
    cycles_key = METRICS[0] if measured else "long_scoreboard_cycles_per_instruction_estimated"
    evidence = {"long_scoreboard_share_of_cpi": share,
                cycles_key: cycles,
                "busiest_memory_unit_pct": ctx.memory_pct,
                "smsp__issue_active.avg.per_cycle_active": ctx.opt("smsp__issue_active.avg.per_cycle_active")}
    lines = ctx.lines_by(lambda s: s.load_latency)
    if chain:
        evidence["dependent_load_chain"] = " -> ".join(
            str(n) for n in dict.fromkeys(x for pair in chain for x in pair))
    hit = Hit(PATTERN, share * (1 - ctx.memory_pct / 100), evidence,
              f"{share:.0%} of each instruction's cycles wait on global memory ({cycles:.0f} cycles per "
              f"instruction{'' if measured else ', estimated from warp samples'}) while the busiest memory unit runs at {ctx.memory_pct:.0f}% of peak"
              + (f"; the loads form a dependent chain (lines {evidence['dependent_load_chain']})" if chain else ""),
              lines)
    if chain:
        hit.fix = CHAIN_FIX.format(chain="lines " + evidence["dependent_load_chain"])
    return hit


def explains_for(hit: Hit) -> tuple[str, ...]:
    """A dependent chain explains uncoalesced loads on the same launch (the data scatters the lanes)."""
    return ("C",) if hit.evidence.get("dependent_load_chain") else ()


def matches_rule(rule: NcuRule) -> bool:
    return rule.name == "CPIStall" and "scoreboard dependency on a l1tex" in rule.description.lower()
