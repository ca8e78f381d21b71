"""Unintended FP64: double-precision instructions in a kernel meant to run in fp32 or lower.

Measures, in order of preference (the first the report holds decides):
1. FP64 thread instructions `smsp__sass_thread_inst_executed_op_fp64_pred_on.sum` (Tritonify's
   own sections; or the sum of its `_op_{dadd,dmul,dfma}_pred_on.sum` parts) over all thread
   instructions `smsp__sass_thread_inst_executed.sum`: fires at >= 0.5 %;
2. `--set full`/`detailed`, which collect no FP64 count: the FP64 pipe's issue utilisation
   `sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active` (or
   `sm__pipe_fp64_cycles_active...`), then the DFMA rate `derived__smsp__sass_thread_inst_executed_op_dfma_pred_on_x2`
   over its peak `derived__sm__sass_thread_inst_executed_op_dfma_pred_on_x2`: fires at >= 1 % of peak
   (0.0 on every fp32 control on the H200; 11.7 % and 95 % on the two planted FP64 kernels).
ncu's SOLFPRoofline needs FP64 above 15 % of peak and misses memory-bound kernels. FP64 is half
the FP32 rate on the H200 but 1/64 on GeForce parts. Same names on sm_80 and sm_100. Line:
lines with D* SASS (DADD, DMUL, DFMA).
"""
from tritonify.diagnostics.ncu.context import Context, Hit, Missing, Pattern
from tritonify.diagnostics.ncu.details_page import NcuRule
from tritonify.diagnostics.ncu import code_actions

PATTERN = Pattern("L", "Unintended FP64", ("SOLFPRoofline", "FPInstructions"),
                  "keep the math in fp32: cast back with .to(tl.float32), don't load fp64 tensors, and in "
                  "CUDA write float literals as 1.0f")
OPCODES = ("DADD", "DMUL", "DFMA", "DSETP", "DMNMX")
COUNT = "smsp__sass_thread_inst_executed_op_fp64_pred_on.sum"
PARTS = tuple(f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum" for op in ("dadd", "dmul", "dfma"))
TOTAL = "smsp__sass_thread_inst_executed.sum"
PIPE = "sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active"
DFMA_RATE = "derived__smsp__sass_thread_inst_executed_op_dfma_pred_on_x2"
DFMA_PEAK = "derived__sm__sass_thread_inst_executed_op_dfma_pred_on_x2"
METRICS = (COUNT, TOTAL, "sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active")
FALLBACKS = {
    PIPE: ("sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active",
           "sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_elapsed"),
    TOTAL: ("thread_inst_executed_true", "smsp__thread_inst_executed.sum"),
}


def _count(ctx: Context) -> float | None:
    if ctx.has(COUNT):
        return ctx.m(COUNT)
    if all(ctx.has(p) for p in PARTS):
        return ctx.total(*PARTS)
    return None


def detect(ctx: Context) -> Hit | None:
    lines = ctx.lines_by(lambda s: s.count(OPCODES))
    count = _count(ctx)
    if count is not None and ctx.has(TOTAL):
        total = ctx.m(TOTAL)
        share = count / total if total else 0.0
        if share < 0.005:
            return None
        return Hit(PATTERN, min(1.0, share * 0.5 + 0.1),
                   {COUNT: count, "fp64_share_of_thread_instructions": share,
                    **({PIPE: p} if (p := ctx.opt(PIPE)) is not None else {})},
                   f"{share:.0%} of executed thread instructions are FP64", lines)
    if ctx.has(PIPE):
        used, name = ctx.m(PIPE), PIPE
    elif ctx.has(DFMA_RATE) and ctx.opt(DFMA_PEAK):
        used, name = 100 * ctx.m(DFMA_RATE) / ctx.m(DFMA_PEAK), f"{DFMA_RATE} / {DFMA_PEAK}"
    else:
        raise Missing((COUNT, *PARTS, PIPE, DFMA_RATE))
    if used < 1.0:
        return None
    return Hit(PATTERN, min(1.0, used / 200 + 0.1), {name: used},
               f"the FP64 pipe runs at {used:.0f}% of its peak: the kernel executes double-precision math", lines)


def matches_rule(rule: NcuRule) -> bool:
    d = rule.description.lower()
    if rule.name == "SOLFPRoofline":
        return "fp64" in d and rule.type != "INF"
    return rule.name == "FPInstructions" and ("fp64" in d or "double" in d)


def actions(text, lines, *, cuda=False, sm_count=132, limiter=None):
    return [f for n in sorted(set(lines)) for f in code_actions.cast_back_to_fp32(text, n, cuda=cuda)]


def more_fix_lines(file_lines: list[str], kernel_lines: range) -> list[int]:
    """Lines of a Triton kernel that make fp64 values (`.to(tl.float64)`, fp64 constants): the
    code action casts back there too, though the FP64 SASS sits on the lines that use the value."""
    return [n for n in kernel_lines if "float64" in file_lines[n - 1] or "fp64" in file_lines[n - 1]]
