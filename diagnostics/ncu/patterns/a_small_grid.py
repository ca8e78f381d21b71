"""A small grid: fewer thread blocks than SMs, so whole SMs sit idle for the entire launch.

Condition: `launch__grid_size` < `launch__sm_count` (132 on the H200). This is ncu's own
LaunchConfiguration "Small Grid" test, not the skill's "waves < 0.5": a 200-block grid at 4
blocks/SM has 0.38 waves yet keeps every SM busy. Impact: the idle share (SMs - grid) / SMs.
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


def detect(ctx: Context) -> Hit | None:
    grid = ctx.m("launch__grid_size", ctx.launch.blocks or None)
    sms = ctx.sm_count
    if not grid or grid >= sms:
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
