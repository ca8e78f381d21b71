"""Compile-time insight for one kernel: what the CLI's `inspect` and the language server call.

    result = inspect_kernel(text, path, "softmax_kernel", target="sm_90", trusted=True)
    for v in result.variants: v.resources.registers, v.resources.spills, v.occupancy.percent ...
    findings = inspect_findings(result, text)          # CMP-K / CMP-J / CMP-FAIL, with fixes
    view = assembly_view(result, "sass")              # text + per-line map for a read-only tab
                                                      # (findings, render and the result types: diagnostics/compile/)

The kernel is compiled in a child process (runner.py, compile_child.py) with the user's interpreter,
only when the caller says the workspace is trusted; results are cached (cache.py).
"""
from __future__ import annotations

import ast
import sys
import time

from tritonify.diagnostics.compile.occupancy import theoretical_occupancy
from tritonify.diagnostics.compile.resources import resources_from
from tritonify.diagnostics.compile.result import InspectError, InspectResult, Position, VariantResult
from tritonify.diagnostics.compile.signature import (
    ConfigSite,
    SignatureError,
    build_plan,
    find_kernel,
)
from tritonify.diagnostics.compile.targets import (
    Arch,
    TargetError,
    default_target,
    parse_target,
)
from tritonify.kernels.bench.discovery import contract_dtype
from tritonify.tools.compile import cache as result_cache
from tritonify.tools.compile.runner import WorkerError, run_worker

LISTINGS = ("ptx", "sass", "ttgir", "ttir", "llir")
SOURCE_ONLY = "source"          # build the kernel from its source text; run none of the file (kernel_source.py)
DEFINITIONS = "definitions"     # run the file's defining statements (worker.load_definitions)
NOT_INSPECTED = "not-inspected"
# The child's caps: address space and CPU time (on top of the wall-clock timeout). The two-config
# autotuned softmax of tests/server/test_lsp_inspect.py compiles within 256 MiB (triton 3.9, sm_90).
WORKER_MEMORY_BYTES = 4 * 1024 ** 3


def resolve_target(target: str | int | Arch | None) -> tuple[Arch, str]:
    if isinstance(target, Arch):
        return target, "given"
    if target in (None, "", "auto"):
        return default_target()
    try:
        return parse_target(target), "given"
    except TargetError as exc:
        raise InspectError(str(exc)) from exc


def _node_position(node: ast.AST) -> Position:
    return Position(node.lineno, node.col_offset, getattr(node, "end_lineno", node.lineno) or node.lineno,
                    getattr(node, "end_col_offset", node.col_offset) or node.col_offset)


def inspect_kernel(text: str, path: str, kernel: str | None, *, target=None, overrides: dict | None = None,
                   arg_types: dict | None = None, dtype: str | None = None, divisible: bool = True,
                   listings=("ptx", "sass"), python: str | None = None, timeout: float = 120.0,
                   trusted: bool = False, use_cache: bool = True, cache_folder=None,
                   specialization: dict | None = None, mode: str = DEFINITIONS,
                   memory_bytes: int | None = WORKER_MEMORY_BYTES) -> InspectResult:
    """Compile `kernel` of the file text for `target` in a child process; one result per config.

    `specialization` replaces every inference with what a real launch compiled (gpu/compile/compare.py):
    `{"signature": {name: type}, "constexprs": {name: value}, "divisible": [names], "options": {...}}`.

    `trusted` must be True: the worker runs the file's imports and definitions (see compile_child.py), or
    with `mode=SOURCE_ONLY` none of them, only Triton's compiler over the kernel's own source
    (kernel_source.py); a kernel that needs more is a result with error kind "not-inspected".
    The child is capped at `memory_bytes` of address space and `timeout` CPU seconds.
    Raises InspectError for input that cannot be inspected; a kernel that does not compile is a
    result with `error` set on the variant (or on the result when nothing could be compiled)."""
    if not trusted:
        raise InspectError("compiling a kernel runs the file's imports and definitions; "
                           "it is done only in a trusted workspace")
    arch, reason = resolve_target(target)
    try:
        tree = ast.parse(text, filename=path or "<string>")
    except (SyntaxError, ValueError) as exc:
        raise InspectError(f"{path}: cannot parse: {exc}") from exc
    found, kernels, imports = find_kernel(tree, kernel, path)
    if found is None:
        names = ", ".join(k.name for k in kernels) or "none"
        if kernel is None:
            raise InspectError(f"{path}: name the kernel as FILE::KERNEL (kernels: {names})")
        raise InspectError(f"{path}: no @triton.jit kernel named {kernel!r} (kernels: {names})")
    try:
        plan = build_plan(tree, found, imports, overrides=overrides, arg_types=arg_types, divisible=divisible,
                          pointer_dtype=dtype, contract_dtype=None if dtype else contract_dtype(path, found.name))
    except SignatureError as exc:
        raise InspectError(str(exc)) from exc
    if specialization is not None:
        _apply_specialization(plan, specialization)
    runtime_configs = None
    if mode == SOURCE_ONLY:
        needs = source_only_plan(tree, found, plan)
        if needs:
            return InspectResult(path, found.name, found.node.lineno, arch, reason, plan.assumptions, [],
                                 error={"message": needs, "kind": NOT_INSPECTED, "line": None, "column": None})
        runtime_configs = [dict(s.options, kwargs=s.kwargs) for s in plan.config_sites] if found.autotune else None
    wanted = [k for k in listings if k in LISTINGS]
    request = dict(plan.request(), arch=arch.capability, want=wanted, mode=mode)
    python = python or sys.executable
    key = result_cache.result_key(result_cache.definitions_digest(tree, text), request, arch.capability, python)
    request["limits"] = {"memory_bytes": memory_bytes, "cpu_seconds": int(timeout) + 1}   # not part of the key
    started = time.monotonic()
    raw = result_cache.load(key, cache_folder) if use_cache else None
    cached = raw is not None
    if raw is None:
        try:
            raw = run_worker(text, path, request, python=python, timeout=timeout)
        except WorkerError as exc:
            return InspectResult(path, found.name, found.node.lineno, arch, reason, plan.assumptions, [],
                                 error={"message": str(exc), "kind": exc.kind, "stderr": exc.stderr,
                                        "line": None, "column": None},
                                 seconds=time.monotonic() - started)
        if raw.get("ok") and use_cache:
            result_cache.store(key, raw, cache_folder)
    result = InspectResult(path, found.name, found.node.lineno, arch, reason, plan.assumptions, [],
                           skipped=raw.get("skipped", []), error=None if raw.get("ok") else raw.get("error"),
                           triton_version=raw.get("triton_version"), cached=cached,
                           seconds=time.monotonic() - started, compiled_path=raw.get("compiled_path"))
    sites = plan.config_sites
    runtime_configs = runtime_configs or raw.get("autotune_configs") or []
    for job in raw.get("jobs", []):
        variant = job.get("variant", {})
        index = variant.get("index")
        site = _site_for(sites, runtime_configs, index)
        if site is not None:
            position = _node_position(site.node)
        elif index is not None and plan.autotune_line:
            position = Position(plan.autotune_line, 0, plan.autotune_line, 0)
        else:
            position = _node_position(found.node)
            position = Position(position.line, position.column, position.line, position.column)
        v = VariantResult(label=variant.get("label", "default"), index=index, position=position, site=site,
                          constexprs=job.get("constexprs", {}), options=job.get("options", {}),
                          error=job.get("error"), notes=job.get("notes", []))
        if v.error is None:
            v.resources = resources_from(job)
            v.options = dict(v.options, num_warps=job.get("num_warps", v.num_warps),
                             num_stages=job.get("num_stages", v.options.get("num_stages")))
            if v.resources is not None:
                v.occupancy = theoretical_occupancy(arch, v.resources.registers, v.resources.shared, v.num_warps)
            v.listings = {k: job[k] for k in LISTINGS if job.get(k)}
        result.variants.append(v)
    return result


def source_only_plan(tree: ast.Module, kernel, plan) -> str | None:
    """Make `plan` compile from the kernel's source alone: the autotune configs become variants
    (only where written as literal `triton.Config(...)`), heuristics are evaluated on the assumed
    values (only where written as simple expressions). None when it can; else what it needs,
    as one line ("not inspected: needs ...")."""
    from tritonify.tools.compile.kernel_source import NotLiteral, eval_heuristic, needed_names, read_source

    source = read_source(tree)
    needs = needed_names(source, kernel.name)
    if needs:
        shown = ", ".join(needs[:4]) + (f" and {len(needs) - 4} more" if len(needs) > 4 else "")
        return f"not inspected: needs {shown} (the file is not run)"
    if plan.variants is None:
        sites = plan.config_sites
        literal = sites and all(_literal_config(site.node) for site in sites)
        if not literal:
            return ("not inspected: needs the autotune configs written as a literal list of "
                    "triton.Config({...}, num_warps=...) (the file is not run)")
        plan.variants = [dict({k: v for k, v in site.options.items() if v is not None}, kwargs=dict(site.kwargs),
                              label=f"config {site.index}", index=site.index) for site in sites]
    entries = _heuristic_entries(kernel.heuristics)
    if entries is None:
        return "not inspected: needs the @triton.heuristics values written as a literal dict of lambdas"
    fixed_options = {k for k in plan.overrides}
    evaluated = set()
    for variant in plan.variants:
        args = dict(plan.scalars)
        args.update(plan.base_constexprs)
        args.update(variant["kwargs"])
        args.update(plan.overrides)
        for key, node in entries:
            if key in fixed_options or key in variant["kwargs"]:
                continue
            try:
                value = eval_heuristic(source, node, args)
            except NotLiteral as exc:
                return f"not inspected: needs {key} from @triton.heuristics, which needs {exc} (the file is not run)"
            variant["kwargs"][key] = value
            args[key] = value
            evaluated.add(key)
    if evaluated:
        plan.assumptions.append(f"{', '.join(sorted(evaluated))} from @triton.heuristics on the assumed values")
    return None


def _literal_config(node: ast.AST) -> bool:
    """`triton.Config({...}, num_warps=4, ...)` with every argument a literal."""
    if not isinstance(node, ast.Call):
        return False
    try:
        for value in [*node.args, *(k.value for k in node.keywords)]:
            ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return all(k.arg is not None for k in node.keywords)


def _heuristic_entries(call: ast.Call | None) -> list | None:
    """[(name, lambda node)] of `@triton.heuristics({...})`; None when not a literal dict."""
    if call is None:
        return []
    node = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "values"), None)
    if not isinstance(node, ast.Dict) or not all(isinstance(k, ast.Constant) and isinstance(k.value, str)
                                                 for k in node.keys):
        return None
    return [(k.value, v) for k, v in zip(node.keys, node.values)]


def _apply_specialization(plan, spec: dict) -> None:
    """Compile exactly the given signature, constants, divisibility and options (no assumptions)."""
    plan.signature = dict(spec["signature"])
    plan.base_constexprs = dict(spec.get("constexprs", {}))
    plan.divisible = list(spec.get("divisible", []))
    plan.base_options = {}
    plan.overrides = dict(spec.get("options", {}))
    plan.scalars = {}
    plan.variants = [{"kwargs": {}, "label": "given", "index": None}]
    plan.assumptions = ["signature, constants, divisibility and options given (taken from a real launch)"]


def _site_for(sites: list, runtime_configs: list, index: int | None) -> ConfigSite | None:
    """The written `triton.Config(...)` of the index-th config the autotuner holds at run time: by
    index when the counts agree, else the first written config with the same values (the list may be
    filtered by a function, as templates do for the CPU)."""
    if index is None or index >= len(runtime_configs):
        return None
    if len(sites) == len(runtime_configs) and sites[index].matches(runtime_configs[index]):
        return sites[index]
    return next((s for s in sites if s.matches(runtime_configs[index])), None)


def kernel_names(text: str) -> list[str]:
    """The launchable kernels of a file (helpers excluded), for a code lens per kernel."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    _, kernels, _ = find_kernel(tree, None)
    return [k.name for k in kernels]


def inspect_file(text: str, path: str, *, max_kernels: int | None = None, budget_s: float | None = None,
                 **kwargs) -> list[InspectResult]:
    """`inspect_kernel` for every launchable kernel of the file (one child process each), in source
    order; kernels that cannot be planned (bad override) are left out. For a code lens per kernel.
    At most `max_kernels` are compiled, and none is started after `budget_s` seconds: the rest get a
    "not inspected" result saying so (a file of thousands of kernels costs minutes, not hours)."""
    results = []
    started = time.monotonic()
    try:
        _, kernels, _ = find_kernel(ast.parse(text), None)
    except (SyntaxError, ValueError):
        return []
    for count, kernel in enumerate(kernels):
        over_count = max_kernels is not None and count >= max_kernels
        over_time = budget_s is not None and time.monotonic() - started > budget_s
        if over_count or over_time:
            why = (f"the file has more than {max_kernels} kernels" if over_count
                   else f"compiling this file's kernels took over {budget_s:g} s")
            arch, reason = resolve_target(kwargs.get("target"))
            results.append(InspectResult(path, kernel.name, kernel.node.lineno, arch, reason, [], [], error={
                "message": f"not inspected: {why}", "kind": NOT_INSPECTED, "line": None, "column": None}))
            continue
        try:
            results.append(inspect_kernel(text, path, kernel.name, **kwargs))
        except InspectError:
            continue
    return results
