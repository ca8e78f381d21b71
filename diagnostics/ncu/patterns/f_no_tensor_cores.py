"""Not on tensor cores: a matrix product done with FMA instructions.

Condition: FMA pipe >= 50 % of peak (`sm__pipe_fma_cycles_active`), tensor pipe below 1 %
(`sm__pipe_tensor_cycles_active`; sm_80: `sm__pipe_tensor_op_hmma_cycles_active`; sm_100:
`sm__pipe_tensor_subpipe_*`), and operands re-read from shared memory (shared loads >= 1 % of
instructions), which is how a tiled product looks; an FMA-bound elementwise kernel has no
shared-memory traffic and is not a matrix product. ncu has no tensor-core rule. Line: the line
with the most FFMA instructions executed.
"""
from tritonify.diagnostics.ncu.context import Context, Hit, Pattern
from tritonify.diagnostics.ncu.details_page import NcuRule

PATTERN = Pattern("F", "Not on tensor cores", ("HighPipeUtilization", "FPInstructions"),
                  "use tensor cores: fp16/bf16 operands, or tl.dot(..., input_precision='tf32') for fp32 "
                  "(not 'ieee'), with tile sizes that are multiples of 16")

FMA = "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"
TENSOR = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"
OPCODES = ("FFMA", "HFMA2", "DFMA")
METRICS = (FMA, TENSOR, "smsp__inst_executed.sum", "smsp__sass_inst_executed_op_shared_ld.sum")
FALLBACKS = {
    # sm_80 has only the hmma/imma sub-pipes; sm_100 splits the pipe into tensor_subpipe_*.
    TENSOR: ("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
             "sm__pipe_tensor_subpipe_hmma_cycles_active.avg.pct_of_peak_sustained_active",
             "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"),
    FMA: ("sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active",
          "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed"),
    # --set detailed/full collect the SASS count without the "_sass" variant and vice versa.
    "smsp__inst_executed.sum": ("sm__inst_executed.sum", "inst_executed"),
    "smsp__sass_inst_executed_op_shared_ld.sum": ("smsp__inst_executed_op_shared_ld.sum",
                                                  "sass__inst_executed_shared_loads"),
}


def detect(ctx: Context) -> Hit | None:
    fma = ctx.m(FMA)
    tensor = ctx.m(TENSOR)
    inst = ctx.m("smsp__inst_executed.sum")
    shared = ctx.m("smsp__sass_inst_executed_op_shared_ld.sum")
    if fma < 50 or tensor >= 1 or not inst or shared / inst < 0.01:
        return None
    return Hit(PATTERN, 0.8 * fma / 100,
               {FMA: fma, TENSOR: tensor, "shared_loads_per_instruction": shared / inst},
               f"the FMA pipe is {fma:.0f}% busy and the tensor pipe idle: a tiled product runs on CUDA cores",
               ctx.lines_by(lambda s: s.count(OPCODES)))


def matches_rule(rule: NcuRule) -> bool:
    return False  # ncu has no tensor-core rule; HighPipeUtilization/FPInstructions are context
