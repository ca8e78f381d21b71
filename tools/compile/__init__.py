"""Compile-time insight, the process half: compile a kernel of the user's file in a child process.

Compiling runs Triton's compiler over the user's kernel (and, in `DEFINITIONS` mode, the file's
imports and definitions), so it happens here, in a child started through
`tritonify.infra.child_process`, never in the caller. What the figures mean (occupancy, findings,
listings) is the pure `tritonify.diagnostics.compile`.

Modules (one job each):
  compile_child  the child process (stdlib + triton only): builds the kernel, compiles, writes each cubin
  kernel_source  the source-only build the child uses (none of the file's statements is executed)
  runner         starts the child with the user's interpreter (timeout, process-group kill) and
                 cuobjdump/nvdisasm on its cubins
  cache          on-disk results keyed by the definitions' text, request, target, interpreter, child
  service        the API below

API for the language server (all synchronous and blocking for seconds on a cache miss: call them
off the event loop, debounced, and only when the workspace is trusted):

    from tritonify.tools.compile.service import inspect_kernel, inspect_file, kernel_names, resolve_target
    from tritonify.diagnostics.compile.result import assembly_view, InspectError
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
