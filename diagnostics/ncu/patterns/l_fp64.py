"""Unintended FP64: double-precision instructions in a kernel meant to run in fp32 or lower.

Condition: FP64 thread instructions (`smsp__sass_thread_inst_executed_op_fp64_pred_on.sum`, or
the sum of its `_op_{dadd,dmul,dfma}_pred_on` parts, which `--set full` collects) >= 0.5 % of
all thread instructions. ncu's SOLFPRoofline needs FP64 above 15 % of peak and misses
memory-bound kernels. FP64 is half the FP32 rate on the H200 but 1/64 on GeForce parts.
Same names on sm_80 and sm_100. Line: lines with D* SASS (DADD, DMUL, DFMA).
"""
from tritonify.diagnostics.ncu.context import Context, Hit, Pattern
from tritonify.diagnostics.ncu.lines import FP64_OPCODES

PATTERN = Pattern("L", "Unintended FP64", ("SOLFPRoofline", "FPInstructions"),
                  "keep the math in fp32: cast back with .to(tl.float32), don't load fp64 tensors, and in "
                  "CUDA write float literals as 1.0f")


def detect(ctx: Context) -> Hit | None:
    fp64 = ctx.m("smsp__sass_thread_inst_executed_op_fp64_pred_on.sum", -1)
    if fp64 < 0:
        fp64 = sum(ctx.m(f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum") for op in ("dadd", "dmul", "dfma"))
    total = ctx.m("smsp__sass_thread_inst_executed.sum")
    if not total or fp64 / total < 0.005:
        return None
    share = fp64 / total
    return Hit(PATTERN, min(1.0, share * 0.5 + 0.1),
               {"smsp__sass_thread_inst_executed_op_fp64_pred_on.sum": fp64, "fp64_share_of_thread_instructions": share,
                "sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active": ctx.m("sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active")},
               f"{share:.0%} of executed thread instructions are FP64", ctx.lines_by(lambda s: s.count(FP64_OPCODES)))
