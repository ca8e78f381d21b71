"""Not on tensor cores: a matrix product done with FMA instructions.

Condition: FMA pipe >= 50 % of peak (`sm__pipe_fma_cycles_active`), tensor pipe below 1 %
(`sm__pipe_tensor_cycles_active`; sm_80: `sm__pipe_tensor_op_hmma_cycles_active`; sm_100:
`sm__pipe_tensor_subpipe_*`), and operands re-read from shared memory (shared loads >= 1 % of
instructions), which is how a tiled product looks; an FMA-bound elementwise kernel has no
shared-memory traffic and is not a matrix product. ncu has no tensor-core rule. Line: the line
with the most FFMA instructions executed.
"""
from tritonify.diagnostics.ncu.context import Context, Hit, Pattern

PATTERN = Pattern("F", "Not on tensor cores", ("HighPipeUtilization", "FPInstructions"),
                  "use tensor cores: fp16/bf16 operands, or tl.dot(..., input_precision='tf32') for fp32 "
                  "(not 'ieee'), with tile sizes that are multiples of 16")


def detect(ctx: Context) -> Hit | None:
    fma = ctx.m("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active")
    tensor = ctx.m("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active")
    inst = ctx.m("smsp__inst_executed.sum")
    shared = ctx.m("smsp__sass_inst_executed_op_shared_ld.sum")
    if fma < 50 or tensor >= 1 or not inst or shared / inst < 0.01:
        return None
    return Hit(PATTERN, 0.8 * fma / 100,
               {"sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active": fma,
                "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active": tensor,
                "shared_loads_per_instruction": shared / inst},
               f"the FMA pipe is {fma:.0f}% busy and the tensor pipe idle: a tiled product runs on CUDA cores",
               ctx.lines_by(lambda s: s.count(("FFMA", "HFMA2", "DFMA"))))
