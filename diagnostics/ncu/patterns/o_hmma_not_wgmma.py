"""Tensor-core work issued as mma.sync (HMMA) on sm_90, where warpgroup MMA (HGMMA) is available.

Condition: compute capability 9.x, the HMMA sub-pipe busy (`sm__pipe_tensor_op_hmma_cycles_active`
>= 5 % of peak) for at least 1.5 cycles per HMMA-pipe instruction, and no HGMMA issued
(`sm__inst_executed_pipe_tensor_op_gmma` = 0). The cycles-per-instruction test matters: ptxas
uses `HFMA2.MMA` (one cycle on the same pipe) as a register move, which put fp32-only CUDA
kernels at 1-2 % of HMMA issue on the H200; real HMMA ran 3 cycles per instruction. On the H200,
Triton 3.6 lowered a 16x64 tile with 2 warps to 8 HMMA instructions and no wgmma, and the same dot
with 128x128 tiles and 8 warps to wgmma (HGMMA) only. Triton uses wgmma when the tile's M is a
multiple of 64 and num_warps is a multiple of 4 (one warpgroup), with fp16/bf16/fp8/tf32 operands.
sm_80 has no wgmma and sm_100 replaces it with tcgen05: the pattern applies to sm_90 only.
Not on a kernel at its memory roof (busiest memory unit >= 70 % of peak): a faster MMA cannot
shorten a launch whose bytes take its time. Seen on a real kernel (H200, 2026-12-02): vLLM's
grouped decode attention (16 query heads per tile: M = 16, too small for wgmma) ran at 77 % of the
DRAM roof with the HMMA pipe 10 % busy, and no tile change of its could use wgmma.
Line: lines with HMMA SASS.
"""
from tritonify.diagnostics.ncu.context import Context, Hit, Pattern

PATTERN = Pattern("O", "Tensor cores through mma.sync, not wgmma (sm_90)", ("HighPipeUtilization",),
                  "let Triton emit wgmma: tl.dot tiles with BLOCK_M a multiple of 64 (64 or 128), BLOCK_N >= 64, "
                  "BLOCK_K a multiple of 16, num_warps a multiple of 4 (4 or 8: a warpgroup), fp16/bf16 operands")
HMMA = "sm__inst_executed_pipe_tensor_op_hmma.avg.pct_of_peak_sustained_active"
GMMA = "sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_active"
CC_MAJOR = "device__attribute_compute_capability_major"
CYCLES = "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"
OPCODES = ("HMMA",)
MEMORY_ROOF = 70.0
METRICS = (HMMA, GMMA, "sm__inst_executed_pipe_tensor_op_gmma.sum", CC_MAJOR,
           "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active")
FALLBACKS = {
    HMMA: ("sm__inst_executed_pipe_tensor_op_hmma.avg.pct_of_peak_sustained_elapsed",),
    CYCLES: ("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed",),
    GMMA: ("sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_elapsed",),
}


def _major(ctx: Context) -> float | None:
    major = ctx.opt(CC_MAJOR)
    if major is None and ctx.launch.cc:
        try:
            major = float(ctx.launch.cc.split(".")[0])
        except ValueError:
            return None
    return major


def detect(ctx: Context) -> Hit | None:
    major = _major(ctx)
    if major is None or int(major) != 9:
        return None
    hmma = ctx.m(HMMA)
    gmma = ctx.m(GMMA)
    cycles = ctx.m(CYCLES)
    gmma_count = ctx.opt("sm__inst_executed_pipe_tensor_op_gmma.sum")
    if cycles < 5.0 or cycles < 1.5 * hmma or gmma > 0 or (gmma_count or 0) > 0:
        return None
    if ctx.memory_pct >= MEMORY_ROOF:
        return None   # memory-bound at the roof: the MMA is not what takes the time
    evidence = {HMMA: hmma, GMMA: gmma, CYCLES: cycles,
                CC_MAJOR: major}
    impact = 0.3 if cycles >= 10 else 0.15
    return Hit(PATTERN, impact, {k: v for k, v in evidence.items() if v is not None},
               f"the tensor cores are driven by mma.sync (HMMA at {hmma:.1f}% of issue peak) and no wgmma on an "
               "sm_90 GPU, where warpgroup MMA is available and faster",
               ctx.lines_by(lambda s: s.count(OPCODES)))


def matches_rule(rule) -> bool:
    return False  # no ncu rule speaks to mma.sync vs wgmma
