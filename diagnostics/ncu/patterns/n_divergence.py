"""Warp divergence: lanes of a warp take different paths, or most lanes are predicated off.

Condition: active threads per executed instruction
(`smsp__average_thread_inst_executed_per_inst_executed.ratio`; sm_80 and the deprecated gh100
name `smsp__thread_inst_executed_per_inst_executed.ratio`) below 24 (ncu's ThreadDivergence
threshold), or predicated-on threads per instruction below 16. A masked Triton kernel runs
about 31 predicated-on threads, a reduction about 24, so the bars sit below those. Line:
per-line thread instructions / instructions, and "Divergent Branches".

Divergence inside a library function: where the divergent line calls libdevice's `tanh` (Liger's
GEGLU and DyT, 2026-12-02 on the H200: 22-24 of 32 lanes, 53-55 % of the DRAM roof), the branches
are the function's own (it picks a formula by |x|), no layout of the data makes them uniform, and
the fix is a branch-free form: `2 * tl.sigmoid(2 * x) - 1` (exact to 5e-7) or PTX
`tanh.approx.f32` through `tl.inline_asm_elementwise` (1.2e-5, below bf16's rounding). Measured:
GEGLU 270 -> 164 us (1.65x) and DyT 42.0 -> 33.4 us (1.26x) with tanh.approx.
"""
import re

from tritonify.diagnostics.ncu.context import Context, Hit, Pattern

PATTERN = Pattern("N", "Warp divergence", ("ThreadDivergence",),
                  "make the condition uniform per warp: sort or bucket the work so a warp's lanes take the "
                  "same branch, or move the rare path to its own kernel")

ACTIVE = "smsp__average_thread_inst_executed_per_inst_executed.ratio"
PRED_ON = "smsp__average_thread_inst_executed_pred_on_per_inst_executed.ratio"
METRICS = (ACTIVE, PRED_ON)
FALLBACKS = {
    # The smsp__thread_inst_executed_* ratios are DEPRECATED on gh100 but are what WarpStateStats
    # (and --set full) collect; the instanced totals come with SourceCounters (--set detailed).
    ACTIVE: ("smsp__thread_inst_executed_per_inst_executed.ratio",),
    PRED_ON: ("smsp__thread_inst_executed_pred_on_per_inst_executed.ratio",),
}


LIBRARY_BRANCHES = {
    # a call whose implementation branches per lane, and its branch-free replacement
    re.compile(r"\btanh\s*\("): "the divergence is inside libdevice's tanh (it branches on |x| per lane), which no data "
                                 "layout makes uniform: use a branch-free tanh, `2 * tl.sigmoid(2 * x) - 1` (exact to "
                                 "5e-7) or, for bf16/fp16 outputs, PTX tanh.approx.f32 via `tl.inline_asm_elementwise("
                                 "\"tanh.approx.f32 $0, $1;\", \"=f,f\", [x], dtype=tl.float32, is_pure=True, pack=1)`",
}


def library_fix(ctx: Context, lines: list[int]) -> str | None:
    """The branch-free replacement when the most divergent line calls a branching library function."""
    for number in lines[:1]:
        stats = ctx.line(number)
        text = stats.text if stats is not None else ""
        for call, fix in LIBRARY_BRANCHES.items():
            if call.search(text or ""):
                return fix
    return None


def _ratios(ctx: Context) -> tuple[float, float]:
    if ctx.has(ACTIVE) or ctx.has(PRED_ON):
        return ctx.m(ACTIVE), ctx.m(PRED_ON)
    # --set detailed: no WarpStateStats, but SourceCounters' instanced totals give the same
    # averages (threads per executed warp instruction)
    if ctx.has("thread_inst_executed") and ctx.has("thread_inst_executed_true") and ctx.opt("inst_executed"):
        inst = ctx.m("inst_executed")
        return ctx.m("thread_inst_executed") / inst, ctx.m("thread_inst_executed_true") / inst
    return ctx.m(ACTIVE), ctx.m(PRED_ON)  # raises Missing


def detect(ctx: Context) -> Hit | None:
    active, pred_on = _ratios(ctx)
    if active >= 24 and pred_on >= 16:
        return None
    low = min(active, pred_on)

    def line_waste(s):
        tpi = s.threads_per_inst
        return (32 - tpi) * s.inst if tpi is not None and tpi < 24 else 0

    evidence = {ACTIVE: active, PRED_ON: pred_on,
                "smsp__sass_branch_targets_threads_divergent.sum": ctx.opt("smsp__sass_branch_targets_threads_divergent.sum")}
    lines = ctx.lines_by(line_waste)
    hit = Hit(PATTERN, 1 - low / 32, {k: v for k, v in evidence.items() if v is not None},
              f"only {active:.1f} of 32 lanes execute each instruction on average ({pred_on:.1f} with their predicate on)",
              lines)
    hit.fix = library_fix(ctx, lines)
    return hit
