"""Tail effect or load imbalance: some SMs work much longer than the average.

Condition: `sm__cycles_active.avg / sm__cycles_active.max` < 0.7 (ncu's WorkloadImbalance
"max_dist" above 30 %) with a grid of at least one block per SM (otherwise A explains it).
A partial last wave (`launch__waves_per_multiprocessor` just above an integer) and
per-program work that varies with the data both show up this way; the message says which the
wave count points to. Same names on sm_80 and sm_100. Line: the kernel's `def` line, plus the
hottest loop line when per-program work varies.
"""
import math

from tritonify.diagnostics.ncu.context import Context, Hit, Pattern
from tritonify.diagnostics.ncu.details_page import NcuRule

PATTERN = Pattern("B", "Tail effect / load imbalance", ("WorkloadImbalance", "LaunchConfiguration"),
                  "balance the work per program: split long rows/segments, sort work by length, or use a "
                  "persistent grid that takes tiles from a queue; size the grid to whole waves")

METRICS = ("sm__cycles_active.avg", "sm__cycles_active.max", "launch__waves_per_multiprocessor")
EXPLAINS = ("J",)


def detect(ctx: Context) -> Hit | None:
    avg, peak = ctx.m("sm__cycles_active.avg"), ctx.m("sm__cycles_active.max")
    grid = ctx.m("launch__grid_size", ctx.launch.blocks or None)
    if peak <= 0 or grid < ctx.sm_count:
        return None
    balance = avg / peak
    if balance >= 0.7:
        return None
    waves = ctx.opt("launch__waves_per_multiprocessor") or 0.0
    tail = (math.ceil(waves) - waves) / math.ceil(waves) if waves >= 1 and waves % 1 else 0.0
    if tail >= 0.2:
        what = f"a partial last wave ({waves:.2f} waves): the last wave leaves {tail:.0%} of the slots idle"
    else:
        what = "per-program work varies: a few programs run far longer than the rest"
    lines = ctx.def_line() + [n for n in ctx.lines_by(lambda s: s.samples, 1) if n not in ctx.def_line()]
    return Hit(PATTERN, 1 - balance,
               {"sm__cycles_active.avg": avg, "sm__cycles_active.max": peak,
                "launch__waves_per_multiprocessor": waves, "balance_avg_over_max": balance},
               f"the average SM is active only {balance:.0%} of the busiest SM's time; {what}", lines)


def matches_rule(rule: NcuRule) -> bool:
    d = rule.description.lower()
    if rule.name == "LaunchConfiguration":
        return not ("less than the gpu's" in d or "small grid" in d) and ("wave" in d or "tail" in d)
    return rule.name == "WorkloadImbalance" and (" sms have" in d or "smsps have" in d)
