"""Pipeline bubbles: a tensor-core loop that loads, waits, then computes, with no overlap.

Condition: the tensor pipe is used (>= 5 %, or wgmma instructions executed: an FP32 CUDA
kernel read 1.9 % on the H200), the kernel issues no asynchronous copies (no
LDGSTS `smsp__sass_inst_executed_op_ldgsts.sum`, no TMA `sm__pipe_tma_cycles_active`), and
long-scoreboard stalls are >= 30 % of CPI: each K-step waits for its own loads. In Triton this
is `num_stages=1` (or a loop the pipeliner could not handle); with 2+ stages the same kernel
used cp.async on the H200. ncu has no rule; PM-sampling timelines show the sawtooth. sm_80:
same names (no TMA); sm_100: also `sm__pipe_tma_cycles_active`. Line: the loop's loads.
"""
from tritonify.diagnostics.ncu.context import Context, Hit, Pattern
from tritonify.diagnostics.ncu import code_actions

PATTERN = Pattern("M", "Pipeline bubbles (no load/compute overlap)", (),
                  "overlap the next tile's loads with this tile's math: num_stages=3 or 4 in the launch or "
                  "triton.Config, or an explicit double buffer")

from tritonify.diagnostics.ncu.context import Missing

TENSOR = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"
ASYNC = ("smsp__sass_inst_executed_op_ldgsts.sum", "sm__pipe_tma_cycles_active.avg.pct_of_peak_sustained_active")
METRICS = (TENSOR, *ASYNC, "sm__inst_executed_pipe_tensor_op_gmma.sum")
FALLBACKS = {
    "smsp__sass_inst_executed_op_ldgsts.sum": ("smsp__inst_executed_op_ldgsts.sum",),
    "sm__pipe_tma_cycles_active.avg.pct_of_peak_sustained_active": ("sm__pipe_tma_cycles_active.avg.pct_of_peak_sustained_elapsed",),
}
EXPLAINS = ("E",)


def detect(ctx: Context) -> Hit | None:
    tensor = ctx.m(TENSOR)
    parts = [v for n in ASYNC if (v := ctx.opt(n)) is not None]
    if not parts:
        raise Missing(ASYNC)
    asynchronous = sum(parts)
    share = ctx.stall_share("long_scoreboard")
    uses_tensor = tensor >= 5 or (ctx.opt("sm__inst_executed_pipe_tensor_op_gmma.sum") or 0) > 0
    if not uses_tensor or asynchronous > 0 or share < 0.3:
        return None
    return Hit(PATTERN, share,
               {TENSOR: tensor, "asynchronous_copies": asynchronous, "long_scoreboard_share_of_cpi": share},
               f"the tensor pipe is busy only {tensor:.0f}% and {share:.0%} of cycles wait on loads that "
               "are not prefetched (no asynchronous copies in the kernel)",
               ctx.lines_by(lambda s: s.load_latency))


def actions(text, lines, *, cuda=False, sm_count=132, limiter=None):
    return code_actions.more_stages(text)
