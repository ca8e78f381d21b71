"""Compile-time insight without a GPU, the analysis half: registers, spills, shared memory and
occupancy per config, read from what a compile produced.

Triton's compiler runs on any machine: `triton.compile(ASTSource(...), target=GPUTarget("cuda", 90, 32))`
goes all the way to a cubin with the `ptxas` bundled in the triton wheel. `tritonify.tools.compile`
compiles a kernel of the user's file that way, in a child process; this package plans what to
compile (from the source alone) and turns the figures into findings. Nothing here starts a process
or runs the user's code.

Modules (one job each):
  targets     sm_80 / sm_86 / sm_89 / sm_90 / sm_100 / sm_120 limits; default = local GPU (NVML) else sm_90
  occupancy   the CUDA Occupancy Calculator's arithmetic, with the limiter named
  signature   static inference of argument types, constexprs and options (and the stated assumptions)
  resources   parses `cuobjdump -res-usage` and the `ptxas -v` log
  asm         PTX / SASS listings: Python line per instruction, loops, the main loop
  result      what an inspection found (`InspectResult`, one `VariantResult` per config) and `assembly_view`
  findings    CMP-K (spill), CMP-J (low theoretical occupancy), CMP-FAIL (does not compile), with config fixes
  render      CLI text/JSON and the one-line summary for an inlay hint / code lens

The process side (the child that compiles, its runner, the result cache, `inspect_kernel`) is
`tritonify.tools.compile`; its docstring has the API.
"""
