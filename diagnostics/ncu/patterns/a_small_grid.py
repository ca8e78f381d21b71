"""A small grid: fewer thread blocks than SMs, so whole SMs sit idle for the entire launch; or a
grid that gives every SM a block but fills at most half the blocks each SM could hold, in a kernel
below both roofs.

Conditions:
* `launch__grid_size` < `launch__sm_count` (132 on the H200): ncu's own LaunchConfiguration "Small
  Grid" test. Impact: the idle share (SMs - grid) / SMs.
* partial wave: grid >= SMs but `launch__waves_per_multiprocessor` <= 0.5 (the grid over SMs x the
  blocks per SM the tightest `launch__occupancy_limit_*` allows), with memory and SM throughput both
  below 60 % of peak and the SMs' active cycles balanced (else B). Waves alone are not enough: a 200-block grid at 4 blocks/SM has 0.38 waves and
  may still reach the roof; below both roofs the empty slots are the warps that would hide the
  latency. Seen on real kernels (H200, 2026-12-02): Liger-Kernel's RMSNorm, LayerNorm and fused
  add+RMSNorm backwards launch one program per SM (132) where the registers allow 2, run at 0.50
  waves, 12.5 % of warp slots, 41-45 % of the DRAM roof; launched with 2 programs per SM they ran
  1.27-1.40x faster. Impact: (1 - waves) x (1 - busiest memory unit / 100); the fix names the
  programs per SM the limit allows.
Same names on sm_80 and sm_100. Line: the kernel's `def` line (a launch-level property).
"""
from tritonify.diagnostics.ncu.context import Context, Hit, Pattern
from tritonify.diagnostics.ncu.details_page import NcuRule
from tritonify.diagnostics.ncu import code_actions

PATTERN = Pattern("A", "Small grid", ("LaunchConfiguration", "SOLBottleneck"),
                  "launch at least one block per SM (grid >= SM count): split the work into more programs, "
                  "or use a persistent grid of SM-count programs that loop over tiles")

METRICS = ("launch__grid_size", "launch__waves_per_multiprocessor", "device__attribute_multiprocessor_count")
EXPLAINS = ("J", "E", "B")


LIMITS = ("registers", "shared_mem", "warps", "blocks", "barriers")
ROOF = 60.0
PARTIAL_WAVE = 0.5
BALANCED = 0.7      # B's threshold: below it the SMs' active cycles are imbalanced


def blocks_per_sm(ctx: Context) -> tuple[int | None, str | None]:
    """The blocks of this launch's size one SM can hold, and the resource that limits it."""
    values = {n: v for n in LIMITS if (v := ctx.opt(f"launch__occupancy_limit_{n}")) is not None}
    if not values:
        return None, None
    name = min(values, key=values.get)
    return int(values[name]), name


def partial_wave(ctx: Context, grid: float, sms: int) -> Hit | None:
    waves = ctx.opt("launch__waves_per_multiprocessor")
    per_sm, limit = blocks_per_sm(ctx)
    if waves is None or per_sm is None or per_sm < 2 or waves > PARTIAL_WAVE:
        return None
    mem, sm = ctx.memory_pct, ctx.sm_pct
    if mem >= ROOF or sm >= ROOF:
        return None
    avg, peak = ctx.opt("sm__cycles_active.avg"), ctx.opt("sm__cycles_active.max")
    if avg is not None and peak and avg / peak < BALANCED:
        return None   # SMs idle because their blocks ended early: imbalance (B), not empty slots
    achieved = ctx.opt("sm__warps_active.avg.pct_of_peak_sustained_active")
    fill = max(1, round(per_sm * sms / grid)) if grid else per_sm
    evidence = {"launch__grid_size": grid, "launch__sm_count": sms, "launch__waves_per_multiprocessor": waves,
                "blocks_per_sm_allowed": per_sm, "blocks_per_sm_limited_by": limit,
                "busiest_memory_unit_pct": mem, "sm__throughput.avg.pct_of_peak_sustained_elapsed": sm}
    if achieved is not None:
        evidence["sm__warps_active.avg.pct_of_peak_sustained_active"] = achieved
    hit = Hit(PATTERN, (1 - waves) * (1 - mem / 100), evidence,
              f"the grid has {int(grid)} blocks for {sms} SMs that could hold {per_sm} each ({limit.replace('_', ' ')} "
              f"limit): {waves:.2f} waves, so {1 - waves:.0%} of the block slots stay empty while the kernel runs "
              f"below both roofs (memory {mem:.0f}%, SM {sm:.0f}%)"
              + (f"; {achieved:.1f}% of warp slots active" if achieved is not None else ""),
              ctx.def_line())
    hit.fix = (f"launch about {int(grid * fill)} programs ({fill}x the grid: {per_sm} blocks of this size fit on an SM): "
               "split each program's loop over more programs (a persistent grid sized to SMs x blocks per SM, "
               "not to the SM count), so more independent loads are in flight")
    return hit


def detect(ctx: Context) -> Hit | None:
    grid = ctx.m("launch__grid_size", ctx.launch.blocks or None)
    sms = ctx.sm_count
    if grid and grid >= sms:
        return partial_wave(ctx, grid, sms)
    if not grid:
        return None
    idle = (sms - grid) / sms
    return Hit(PATTERN, idle, {"launch__grid_size": grid, "launch__sm_count": sms,
                               "launch__waves_per_multiprocessor": ctx.opt("launch__waves_per_multiprocessor")},
               f"the grid has {int(grid)} blocks for {sms} SMs: {idle:.0%} of the GPU is idle for the whole launch",
               ctx.def_line())


def matches_rule(rule: NcuRule) -> bool:
    """ncu's own verdict for the same thing (details page), for the comparison."""
    d = rule.description.lower()
    if rule.name == "LaunchConfiguration":
        return "less than the gpu's" in d or "small grid" in d
    return rule.name == "SOLBottleneck" and "grid is too small" in d


def actions(text, lines, *, cuda=False, sm_count=132, limiter=None):
    return code_actions.grid_to_sm_count(text, sm_count)
