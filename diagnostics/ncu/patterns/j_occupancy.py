"""Low occupancy, in theory (a resource limits blocks per SM) or against the theory.

Two conditions, reported with the limiter named:
* in theory: `sm__maximum_warps_per_active_cycle_pct` < 20 %, the limiter being the smallest of
  `launch__occupancy_limit_{registers,shared_mem,warps,blocks,barriers}`. (A Triton matmul at
  25 % theoretical occupancy ran its tensor pipe at 79 % on the H200, so 25 % is not low.)
* against the theory: achieved `sm__warps_active.avg.pct_of_peak_sustained_active` below 50 %
  and more than 20 points under the theory (ncu's AchievedOccupancy uses 10 points); a small
  grid (A) or imbalance (B) usually explains this and then takes the finding.
Not in theory when the tile is at the roof it is built for: a theoretical occupancy set by a
tile's design (a 128x128x64 bf16 matmul with 4 stages holds one block per SM) is no finding when the
tensor pipe (`sm__pipe_tensor_cycles_active`) or DRAM runs at >= 60 % of peak: fewer stages would
give warps, not time. (The issue that asked for this: such a matmul was reported as J, "limited by
shared memory", true and by design. The planted over-staged matmul, tensor pipe 40 %, stays J.)
Same names on sm_80 and sm_100. Line: the kernel's `def` line.
"""
from tritonify.diagnostics.ncu.context import Context, Hit, Pattern
from tritonify.diagnostics.ncu import code_actions

PATTERN = Pattern("J", "Low occupancy", ("TheoreticalOccupancy", "AchievedOccupancy"),
                  "free the limiting resource: fewer pipeline stages or smaller tiles (shared memory), "
                  "fewer live values or more warps per tile (registers), larger blocks (block limit)")

LIMITS = ("registers", "shared_mem", "warps", "blocks", "barriers")
METRICS = ("sm__maximum_warps_per_active_cycle_pct", "sm__warps_active.avg.pct_of_peak_sustained_active",
           *(f"launch__occupancy_limit_{n}" for n in LIMITS), "launch__registers_per_thread",
           "launch__shared_mem_per_block_allocated")
EXPLAINS = ("E",)


DESIGNED_ROOF = 60.0
TENSOR = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"
DRAM = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"


def at_designed_roof(ctx: Context) -> bool:
    """The tensor pipe or DRAM at >= 60 % of peak: the kernel reaches the roof its tile is built for."""
    return any((v := ctx.opt(name)) is not None and v >= DESIGNED_ROOF for name in (TENSOR, DRAM))


def limiter(ctx: Context) -> str:
    values = {n: v for n in LIMITS if (v := ctx.opt(f"launch__occupancy_limit_{n}")) is not None}
    return min(values, key=values.get) if values else "an unknown limit (no launch__occupancy_limit_* in the report)"


def detect(ctx: Context) -> Hit | None:
    theory = ctx.m("sm__maximum_warps_per_active_cycle_pct")
    achieved = ctx.m("sm__warps_active.avg.pct_of_peak_sustained_active")
    shared = ctx.opt("launch__shared_mem_per_block_allocated")
    evidence = {"sm__maximum_warps_per_active_cycle_pct": theory,
                "sm__warps_active.avg.pct_of_peak_sustained_active": achieved,
                "limiter": limiter(ctx),
                "launch__registers_per_thread": ctx.opt("launch__registers_per_thread"),
                "launch__shared_mem_per_block": shared if shared is not None else ctx.opt("launch__shared_mem_per_block")}
    evidence = {k: v for k, v in evidence.items() if v is not None}
    idle = 1 - max(ctx.sm_pct, ctx.memory_pct) / 100
    if theory < 20 and at_designed_roof(ctx):
        return None
    if theory < 20:
        below = theory - achieved > 0.2 * theory and theory - achieved > 2
        extra = "; achieved occupancy is far under even that" if below else ""
        return Hit(PATTERN, max(0.05, (1 - theory / 20) * idle), evidence,
                   f"theoretical occupancy is {theory:.1f}% (achieved {achieved:.1f}%), limited by "
                   f"{evidence['limiter'].replace('_', ' ')}{extra}", ctx.def_line())
    if achieved < 50 and theory - achieved > 20:
        return Hit(PATTERN, (theory - achieved) / 100 * idle, evidence,
                   f"achieved occupancy is {achieved:.1f}% against a theoretical {theory:.1f}%",
                   ctx.def_line())
    return None


def actions(text, lines, *, cuda=False, sm_count=132, limiter=None):
    return code_actions.fewer_stages(text) if limiter == "shared_mem" else []
