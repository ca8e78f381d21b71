"""Compile-time insight without a GPU: registers, spills, shared memory and occupancy per config.

Triton's compiler runs on any machine: `triton.compile(ASTSource(...), target=GPUTarget("cuda", 90, 32))`
goes all the way to a cubin with the `ptxas` bundled in the triton wheel. This package compiles a
kernel of the user's file that way, in a child process, and turns the figures into findings.

Modules (one job each):
  targets     sm_80 / sm_86 / sm_89 / sm_90 / sm_100 / sm_120 limits; default = local GPU (NVML) else sm_90
  occupancy   the CUDA Occupancy Calculator's arithmetic, with the limiter named
  signature   static inference of argument types, constexprs and options (and the stated assumptions)
  worker      the child process (stdlib + triton only): runs the file's definitions, compiles, runs cuobjdump/nvdisasm
  runner      starts the worker with the user's interpreter, timeout, process-group kill
  cache       on-disk results keyed by the definitions' text, request, target, interpreter, worker
  resources   parses `cuobjdump -res-usage` and the `ptxas -v` log
  asm         PTX / SASS listings: Python line per instruction, loops, the main loop
  service     the API below
  findings    CMP-K (spill), CMP-J (low theoretical occupancy), CMP-FAIL (does not compile), with config fixes
  render      CLI text/JSON and the one-line summary for an inlay hint / code lens

API for the language server (all synchronous and blocking for seconds on a cache miss: call them
off the event loop, debounced, and only when the workspace is trusted):

    from tritonify.diagnostics.compile.service import (
        inspect_kernel, inspect_file, assembly_view, kernel_names, resolve_target, InspectError)
    from tritonify.diagnostics.compile.findings import inspect_findings
    from tritonify.diagnostics.compile.render import summary

    result = inspect_kernel(text, path, "kernel_name", target="sm_90" | "auto" | None,
                            overrides={"BLOCK": 1024, "num_warps": 8}, arg_types={"x_ptr": "*bf16"},
                            dtype="bf16", divisible=True, python="/path/to/user/python",
                            timeout=120, trusted=workspace_is_trusted)      # InspectError on bad input
    result.variants[i]          one per autotune config (or the launch's values):
        .position.line / .column / .end_line / .end_column   the triton.Config(...) call (1-based line,
                                                             0-based column), else the kernel's def line
        .resources.registers, .spill_stores, .spill_loads, .stack, .shared
        .occupancy.percent, .limiter, .blocks_per_sm
        .error = {"message", "line", "column"} when that config does not compile
    summary(variant)            "48 regs · no spills · 1 KB smem · occupancy 62.5% (registers)": inlay hint text
    result.assumptions          list of strings: show them in the hover / code lens tooltip
    inspect_findings(result, threshold=0.2) -> list[Finding]   codes CMP-K / CMP-J / CMP-FAIL, fixes attached
    view = assembly_view(result, "sass" | "ptx" | "ttgir", variant=0)
        view.text               the listing for a read-only virtual document (e.g. tritonify-asm: URI)
        view.line_map[i]        source line of listing line i+1 (None for directives)
        view.by_source_line     {source line: [listing lines]}: highlight both ways
        view.main_loop          {"instructions", "source_lines"} or None
    inspect_file(text, path, **same keywords) -> list[InspectResult]   every launchable kernel
    kernel_names(text)          launchable kernels, for a code lens per kernel before compiling

Findings carry the file:// URI of `references/compile/<CODE>.md` as their url, like rule findings. The CLI is `tritonify inspect FILE::KERNEL`.
"""
