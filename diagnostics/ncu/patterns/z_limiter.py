"""The limiter, when no pattern fired: never a silent "no pattern" for a kernel off both roofs.

Kept apart from the patterns (`Diagnosis.limiter`, JSON `limiter`, a `limiter:` line in text;
not an editor finding). Runs only when no other pattern found anything and the kernel is below 60 % of both its memory
roof (busiest memory unit) and its compute roof (`sm__throughput`). It names the most likely
limiter from what the report holds, with the evidence:
* the stall reason with the largest share of the cycles per issued instruction (ncu's CPIStall
  measure) when it is >= 25 %: long scoreboard = memory latency, barrier, short scoreboard =
  shared memory/MUFU latency, wait = fixed-latency dependencies, ...;
* else achieved occupancy < 25 %: too few warps to hide latency;
* else the issue rate (`smsp__issue_active.avg.per_cycle_active`): low issue with spread stalls
  is "latency with no single cause".
"""
import re

from tritonify.diagnostics.ncu.context import Context, Hit, Missing, Pattern
from tritonify.diagnostics.ncu.metrics import CPI, MEMORY_UNITS, STALL

PATTERN = Pattern("Z", "Limiter (no pattern matched)", ("SOLBottleneck", "CPIStall", "IssueSlotUtilization"),
                  "work on the named limiter: see its evidence; each reason's usual fix is in the pattern pages")
FALLBACK_ONLY = True
ROOF = 60.0
ISSUE = "smsp__issue_active.avg.per_cycle_active"
ACHIEVED = "sm__warps_active.avg.pct_of_peak_sustained_active"
_STALL = re.compile(r"^smsp__average_warps_issue_stalled_([a-z_]+)_per_issue_active\.ratio$")
REASONS = {
    "long_scoreboard": ("memory latency: warps wait on global/local loads", "E"),
    "barrier": ("barriers: warps wait for the rest of the block", "I"),
    "membar": ("memory fences", "G"),
    "short_scoreboard": ("shared-memory or special-function (MUFU) latency", "H"),
    "mio_throttle": ("the shared-memory instruction queue", "H"),
    "lg_throttle": ("the global-memory instruction queue: too many small loads/stores", "C"),
    "wait": ("fixed-latency dependencies between back-to-back instructions", None),
    "math_pipe_throttle": ("a busy math pipe", "F"),
    "tex_throttle": ("the texture/L1 pipe queue", None),
    "gmma": ("warpgroup MMA (wgmma) completion", "M"),
    "not_selected": ("issue bandwidth: eligible warps wait to be picked", None),
    "selected": ("issue bandwidth", None),
    "no_instruction": ("instruction fetch (cache misses or branches)", None),
    "branch_resolving": ("branch resolution", "N"),
    "dispatch_stall": ("dispatch", None),
    "drain": ("draining stores at exit", "D"),
    "imc_miss": ("constant-cache misses", None),
    "sleeping": ("sleeping warps", None),
    "misc": ("miscellaneous stalls", None),
}

# every stall reason: the limiter ranks them all (read by name, not through WarpStateStats)
METRICS = (ISSUE, ACHIEVED, "sm__throughput.avg.pct_of_peak_sustained_elapsed", *MEMORY_UNITS, CPI,
           *(STALL.format(r) for r in REASONS))


def stall_shares(ctx: Context) -> dict[str, float]:
    cpi = ctx.opt(CPI)
    if not cpi:
        # --set detailed: no WarpStateStats; the source page's warp samples give the shares
        sampled = {r: v for r in REASONS if (v := ctx.sampled_stall_share(r))}
        return dict(sorted(sampled.items(), key=lambda kv: -kv[1]))
    out = {}
    for name, value in ctx.launch.metrics.items():
        m = _STALL.match(name)
        if m and m.group(1) in REASONS:
            out[m.group(1)] = value / cpi
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def detect(ctx: Context) -> Hit | None:
    sm = ctx.m("sm__throughput.avg.pct_of_peak_sustained_elapsed")
    mem = ctx.memory_pct
    if sm >= ROOF or mem >= ROOF:
        return None
    shares = stall_shares(ctx)
    issue, achieved = ctx.opt(ISSUE), ctx.opt(ACHIEVED)
    if not shares and issue is None and achieved is None:
        raise Missing((CPI, ISSUE, ACHIEVED))
    evidence: dict = {"sm__throughput.avg.pct_of_peak_sustained_elapsed": sm, "busiest_memory_unit_pct": mem}
    evidence.update({f"stall_{r}_share_of_cpi": v for r, v in list(shares.items())[:3]})
    if issue is not None:
        evidence[ISSUE] = issue
    if achieved is not None:
        evidence[ACHIEVED] = achieved
    top = next(iter(shares.items()), None)
    if top and top[1] >= 0.25:
        what, see = REASONS[top[0]]
        evidence["limiter"] = top[0]
        msg = (f"below 60% of both roofs (SM {sm:.0f}%, memory {mem:.0f}%); most likely limiter: {what} "
               f"({top[1]:.0%} of each instruction's cycles stall on {top[0].replace('_', ' ')})"
               + (f"; see pattern {see}" if see else ""))
    elif achieved is not None and achieved < 25:
        evidence["limiter"] = "occupancy"
        msg = (f"below 60% of both roofs (SM {sm:.0f}%, memory {mem:.0f}%); most likely limiter: occupancy "
               f"({achieved:.0f}% of warp slots active: too few warps to hide latency)")
    else:
        evidence["limiter"] = "latency"
        spread = ", ".join(f"{r.replace('_', ' ')} {v:.0%}" for r, v in list(shares.items())[:3]) or "not collected"
        msg = (f"below 60% of both roofs (SM {sm:.0f}%, memory {mem:.0f}%); most likely limiter: latency with no "
               f"single cause (issue {issue if issue is not None else float('nan'):.2f} per cycle; stalls: {spread})")
    lines = ctx.lines_by(lambda s: s.samples, 3)
    return Hit(PATTERN, 0.1, evidence, msg, lines)  # a note (info), not a pattern: it ranks nothing


def matches_rule(rule) -> bool:
    return False  # the limiter is not a pattern: nothing to compare
