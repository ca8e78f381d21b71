"""One bench job, in this process: correctness first, then timing of the kernel and its baselines.

This is what the child process runs (``worker``); it imports and executes user code. Callers that
want isolation use ``jobs.run_job`` instead. The result is one JSON-serialisable dict (``SCHEMA``).

Per shape: the kernel is checked (fresh random inputs, poisoned outputs, float64 reference); an
incorrect kernel is reported and not timed. Each baseline is checked once too (a baseline that
disagrees with the reference is reported and not timed either). Then everything correct is timed on
the same rotating input sets, and the throughput is computed from the contract's bytes and FLOPs.
"""
from __future__ import annotations

import os
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tritonify.kernels.bench import baselines as baselines_mod
from tritonify.kernels.bench import ceilings as ceilings_mod
from tritonify.kernels.bench.contract import Contract, ContractError
from tritonify.kernels.bench.correctness import check, synchronize
from tritonify.kernels.bench.discovery import (
    load_contracts,
    parse_target,
    select_contract,
)
from tritonify.kernels.bench.environment import clocks, gpu_info, versions
from tritonify.kernels.bench.inputs import make_inputs, nbytes, rotating, rotation_count
from tritonify.kernels.bench.timing import (
    GpuTimer,
    Timer,
    TimingUnavailable,
    host_shape,
    host_us_per_call,
    make_timer,
)

SCHEMA = "tritonify.bench/1"
KERNEL = "kernel"          # the implementation under test, in every per-shape result


class FatalDeviceError(RuntimeError):
    """The CUDA context is unusable (illegal address, launch failure): the run must stop."""


def _is_fatal(exc: BaseException) -> bool:
    text = str(exc).lower()
    return any(s in text for s in ("illegal memory access", "illegal address", "unspecified launch failure",
                                   "misaligned address", "device-side assert", "cuda error: an illegal"))


def _is_oom(exc: BaseException) -> bool:
    return type(exc).__name__ == "OutOfMemoryError" or "out of memory" in str(exc).lower()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".strip()


def shape_label(shape: tuple) -> str:
    return "x".join(str(d) for d in shape)


class _Progress:
    def __init__(self, report: Callable[[str, float], None], total: int):
        self.report, self.total, self.done = report, max(total, 1), 0

    def step(self, message: str) -> None:
        self.report(message, min(99.0, 100.0 * self.done / self.total))
        self.done += 1


def _throughput(row: dict, timing_ms: float, work_bytes: int, flops: int | None, ceil: dict | None) -> None:
    seconds = timing_ms * 1e-3
    row["gbps"] = work_bytes / seconds / 1e9 if seconds > 0 else None
    row["tflops"] = flops / seconds / 1e12 if flops and seconds > 0 else None
    if ceil and row["gbps"] is not None:
        row["pct_copy_bw"] = 100.0 * row["gbps"] / ceil["copy_gbps"]
    if ceil and row["tflops"] is not None:
        row["pct_matmul"] = 100.0 * row["tflops"] / ceil["bf16_tflops"]


def _bound(work_bytes: int, flops: int | None, ceil: dict | None) -> str | None:
    """Which ceiling limits this shape: the larger of bytes/bandwidth and FLOPs/rate."""
    if not ceil:
        return None
    t_mem = work_bytes / (ceil["copy_gbps"] * 1e9)
    t_math = (flops or 0) / (ceil["bf16_tflops"] * 1e12)
    return "memory" if t_mem >= t_math else "compute"


def _run_shape(contract: Contract, shape: tuple, impls: list[tuple[str, Callable]], *, device: str, seed: int,
               timer: Timer | None, ceil: dict | None, l2_bytes: int | None, progress: _Progress,
               checks: int) -> dict:
    """Check then time every implementation at one shape."""
    import torch

    label = shape_label(shape)
    entry_row: dict[str, Any] = {}
    out_row = {"shape": list(shape), "label": label, "dtype": contract.dtype, "results": {}, "speedup": {}}
    correct: dict[str, bool] = {}
    for name, fn in impls:
        progress.step(f"{label}: checking {name}")
        row = {"status": "ok", "correct": None, "check": None, "timing": None, "message": ""}
        try:
            draws = checks if name == KERNEL else 1
            for k in range(draws):
                result = check(fn, contract, shape, device, seed + 7919 * k,
                               use_out=(name == KERNEL and contract.out is not None), poison=(name == KERNEL))
                if not result.correct or k == draws - 1:
                    break
            row["check"], row["correct"] = result.to_dict(), result.correct
            row["message"] = result.message
            if not result.correct:
                row["status"] = "incorrect"
        except ContractError:
            raise
        except Exception as exc:
            if _is_fatal(exc):
                raise FatalDeviceError(f"{name} at {label}: {_first_line(exc)}") from exc
            row["status"] = "oom" if _is_oom(exc) else "error"
            row["correct"] = False
            row["message"] = (f"out of memory at {label}" if row["status"] == "oom" else _first_line(exc))
            row["traceback"] = traceback.format_exc(limit=6)
            if device.startswith("cuda"):
                torch.cuda.empty_cache()
        out_row["results"][name] = row
        correct[name] = row["status"] == "ok"
        if name == KERNEL:
            entry_row = row

    # Work per call, from one fresh set of inputs and the kernel's (or the reference's) outputs.
    args = make_inputs(contract, shape, device, seed + 1)
    ref_out = contract.reference(*args)
    work_bytes = int(contract.bytes(shape, args, ref_out)) if contract.bytes else nbytes(args) + nbytes([ref_out])
    del ref_out
    flops = int(contract.flops(shape)) if contract.flops is not None else None
    out_row.update(bytes=work_bytes, flops=flops, bound=_bound(work_bytes, flops, ceil))

    if timer is None or not correct.get(KERNEL):
        if not correct.get(KERNEL):
            entry_row.setdefault("message", "")
            entry_row["timing_skipped"] = "incorrect: not timed"
        return out_row

    # Timing: the same rotating input sets for everyone.
    n_sets = rotation_count(nbytes(args), l2_bytes)
    sets = [args] + [make_inputs(contract, shape, device, seed + 100 + i) for i in range(n_sets - 1)]
    graph, per_graph = False, 1
    if isinstance(timer, GpuTimer):
        kernel_fn = dict(impls)[KERNEL]
        kernel_call = rotating(_with_out(kernel_fn, contract, sets), sets)
        probe = timer.probe_ms(kernel_call)
        graph = probe < timer.graph_below_ms
        per_graph = timer.graph_calls(kernel_call, n_sets) if graph else 1
        out_row["probe_ms"] = probe
    out_row["input_sets"] = n_sets
    for name, fn in impls:
        if not correct.get(name):
            continue
        progress.step(f"{label}: timing {name}")
        row = out_row["results"][name]
        try:
            call_fn = _with_out(fn, contract, sets) if name == KERNEL else fn
            call = rotating(call_fn, sets)
            call()  # one warm-up outside poisoned mode (autotuning, caches)
            synchronize(device)
            timing = timer.measure(call, graph=graph, calls_per_graph=per_graph)
            row["timing"] = timing.to_dict()
            _throughput(row, timing.p50_ms, work_bytes, flops, ceil)
        except Exception as exc:
            if _is_fatal(exc):
                raise FatalDeviceError(f"{name} at {label} (timing): {_first_line(exc)}") from exc
            row["status"] = "oom" if _is_oom(exc) else "error"
            row["message"] = f"timing failed: {_first_line(exc)}"
            if device.startswith("cuda"):
                torch.cuda.empty_cache()
    del sets, args
    if isinstance(timer, GpuTimer):
        _host_overhead(contract, shape, impls, out_row, device, seed, progress)
    kernel_timing = entry_row.get("timing")
    if kernel_timing:
        for name, row in out_row["results"].items():
            if name != KERNEL and row.get("timing"):
                out_row["speedup"][name] = row["timing"]["p50_ms"] / kernel_timing["p50_ms"]
        if contract.target is not None and ceil and out_row["bound"]:
            pct = entry_row.get("pct_copy_bw") if out_row["bound"] == "memory" else entry_row.get("pct_matmul")
            out_row["meets_target"] = pct is not None and pct >= 100.0 * contract.target
    return out_row


def _host_overhead(contract: Contract, shape: tuple, impls: list[tuple[str, Callable]], out_row: dict, device: str,
                   seed: int, progress: _Progress) -> None:
    """Each timed implementation's host time per call, on a few rows of the same width (``host_us``)."""
    tiny = host_shape(shape)
    out_row["host_shape"] = list(tiny)
    args = make_inputs(contract, tiny, device, seed + 5)
    for name, fn in impls:
        row = out_row["results"][name]
        if not row.get("timing"):
            continue
        call_fn = _with_out(fn, contract, [args]) if name == KERNEL else fn
        try:
            row["host_us"] = host_us_per_call(lambda: call_fn(*args), lambda: synchronize(device))
        except Exception as exc:   # a baseline that fails at the tiny shape keeps its GPU time
            row["host_us"] = None
            row["message"] = (row.get("message") or "") + f" host overhead not measured: {_first_line(exc)}"


def _with_out(fn: Callable, contract: Contract, sets: list[tuple]) -> Callable:
    """The entry, given one preallocated ``out=`` buffer per input set when the contract asks for it."""
    if contract.out is None:
        return fn
    buffers = {id(s[0]) if s else i: contract.out(*s) for i, s in enumerate(sets)}

    def call(*args):
        return fn(*args, out=buffers[id(args[0])])

    return call


def summary_line(result: dict) -> str:
    """The code lens's one line: the headline shape's time, throughput, % of ceiling and speedups."""
    shapes = result.get("shapes", [])
    bad = [s for s in shapes if s["results"].get(KERNEL, {}).get("status") not in ("ok", None)]
    if bad:
        r = bad[0]["results"][KERNEL]
        return f"INCORRECT at {bad[0]['label']}: {r.get('message', r.get('status'))}"
    timed = [s for s in shapes if s["results"].get(KERNEL, {}).get("timing")]
    if not timed:
        reason = result.get("timing_unavailable") or "not timed"
        return f"correct at {len(shapes)} shape(s); {reason}"
    head = max(timed, key=lambda s: s.get("bytes") or 0)
    k = head["results"][KERNEL]
    ms = k["timing"]["p50_ms"]
    parts = [f"{ms:.3f} ms" if ms >= 0.01 else f"{ms * 1e3:.1f} us"]
    if k.get("gbps") is not None:
        bw = f"{k['gbps'] / 1e3:.2f} TB/s" if k["gbps"] >= 1000 else f"{k['gbps']:.0f} GB/s"
        if k.get("pct_copy_bw") is not None:
            bw += f" ({k['pct_copy_bw']:.0f}% of copy BW)"
        parts.append(bw)
    if k.get("tflops") is not None and head.get("bound") == "compute":
        parts.append(f"{k['tflops']:.0f} TFLOP/s ({k.get('pct_matmul', 0):.0f}% of bf16 matmul)")
    parts += [f"{v:.2f}x {name}" for name, v in head["speedup"].items()]
    if k.get("host_us") is not None:
        parts.append(f"host {k['host_us']:.0f} us/call")
    line = ", ".join(parts) + f" @ {head['label']}"
    if not k["timing"]["gpu_measurement"]:
        line += " (host wall clock, NOT a GPU measurement)"
    if k["timing"].get("noisy"):
        line += " [noisy]"
    return line


def method_text(timer: Timer | None, contract: Contract | None, unavailable: str | None) -> str:
    atol, rtol = contract.tolerances if contract else (None, None)
    lines = [
        "Correctness first: fresh random inputs per check (seeded, never zeros); the reference runs on float64 "
        "copies; every output allocation of the kernel under test is poisoned (NaN / int max) so unwritten "
        "elements are caught; "
        f"pass = no unwritten element and |out-ref| <= atol + rtol*|ref| (atol={atol}, rtol={rtol}). "
        "Anything incorrect is not timed.",
        "Timing: " + (timer.describe() if timer else f"not done ({unavailable})"),
        "Host overhead (host_us): wall time per call of 200 back-to-back calls on the same width with the leading "
        "dimension cut to 8 rows, synchronised at both ends (the launcher's Python and the launch, what an eager "
        "loop pays per call whatever the kernel's speed); measured for the kernel and each baseline on a GPU.",
        "Throughput: bytes = contract's bytes() or every input read once + every output written once; "
        "% of copy BW / % of bf16 matmul are against this GPU's measured ceilings. "
        "Speedup = baseline median / kernel median.",
    ]
    return "\n".join(lines)


NO_GPU_MESSAGE = ("no CUDA GPU is visible here (torch.cuda.is_available() is False), so nothing was run or timed: "
                  "add --interpret to check the kernel's correctness on the CPU (TRITON_INTERPRET=1), and run on a "
                  "machine with a CUDA GPU to time it")


def interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def device_problem(device: str, cuda_available: bool, interpret: bool) -> str | None:
    """Why a job cannot run on ``device`` here, or None. A Triton kernel runs on a CUDA GPU, or on the
    CPU under the interpreter; anything else would only fail ("0 active drivers") at every shape."""
    if device.startswith("cuda") and not cuda_available:
        return NO_GPU_MESSAGE
    if not device.startswith("cuda") and not interpret:
        return NO_GPU_MESSAGE
    return None


def no_gpu_result(result: dict, message: str, started: float) -> dict:
    """The result of a job that could not run here: no verdict, no shapes, one sentence."""
    result.update(status="error", no_gpu=True, environment=True, message=message,
                  summary="not run: no CUDA GPU is visible (add --interpret to check correctness on the CPU)",
                  log_tail=[], elapsed_s=round(time.time() - started, 2))
    return result


def run_bench(spec: dict, *, timer: Timer | None = None,
              progress: Callable[[str, float], None] = lambda msg, pct: None) -> dict:
    """Run one bench job (see ``jobs`` for the spec's fields) and return its result dict."""
    started = time.time()
    file, kernel = parse_target(spec["target"])
    result: dict[str, Any] = {"schema": SCHEMA, "target": spec["target"], "file": file, "kernel": kernel,
                              "status": "ok", "message": "", "shapes": [], "job": spec.get("id")}
    import torch

    cuda_available = torch.cuda.is_available()
    device = spec.get("device") or ("cuda" if cuda_available else "cpu")
    result["device"] = device
    problem = device_problem(device, cuda_available, interpreting())
    if problem:   # before anything imports the user's file or checks a shape: nothing could be measured
        progress("done", 100.0)
        return no_gpu_result(result, problem, started)
    result["gpu"] = gpu_info() if device.startswith("cuda") else {"name": None, "device": device}
    result["versions"] = versions()

    progress("loading the contract", 0.0)
    contract = select_contract(load_contracts(Path(file)), kernel)
    result["contract"] = contract.name
    shapes = [tuple(s) for s in spec.get("shapes") or contract.shapes]
    if not shapes:
        raise ContractError("no shapes: the contract lists none and none were given (--shapes)")
    result["tolerances"] = dict(zip(("atol", "rtol"), contract.tolerances))

    unavailable = None
    if timer is None and spec.get("timer", "gpu") != "none":
        try:
            timer = make_timer(spec.get("timer", "gpu"))
        except TimingUnavailable as exc:
            unavailable = str(exc)
    elif spec.get("timer") == "none" and timer is None:
        unavailable = "timing turned off (--timer none)"
    result["timing_unavailable"] = unavailable
    result["gpu_measurement"] = bool(timer and timer.gpu_measurement)

    ceil = None
    if isinstance(timer, GpuTimer):
        progress("measuring the GPU's ceilings (cached per machine)", 1.0)
        ceil = ceilings_mod.get(result["gpu"], refresh=bool(spec.get("refresh_ceilings")))
    result["ceilings"] = ceil
    result["method"] = method_text(timer, contract, unavailable)

    bl = baselines_mod.build(contract, spec.get("baselines"))
    result["baselines"] = {b.name: (b.skipped or "run") for b in bl}
    impls = [(KERNEL, contract.entry)] + [(b.name, b.fn) for b in bl if b.fn is not None]
    steps = len(shapes) * len(impls) * (2 if timer else 1)
    tracker = _Progress(progress, steps)
    seed = int(spec.get("seed", 0)) or int(time.time()) % 100000
    result["seed"] = seed
    l2 = result["gpu"].get("l2_bytes")
    try:
        for i, shape in enumerate(shapes):
            result["shapes"].append(_run_shape(contract, shape, impls, device=device, seed=seed + 1000 * i,
                                               timer=timer, ceil=ceil, l2_bytes=l2, progress=tracker,
                                               checks=int(spec.get("checks", 2))))
    except FatalDeviceError as exc:
        result["status"] = "crashed"
        result["message"] = (f"the CUDA context was lost ({exc}); the kernel likely read or wrote out of "
                             "bounds. Nothing after this point was measured; run it under compute-sanitizer.")
    if device.startswith("cuda") and result["status"] != "crashed":
        result["gpu_end"] = clocks(torch.cuda.current_device())   # clocks after the timed work
    if result["status"] == "ok" and any(s["results"][KERNEL]["status"] != "ok" for s in result["shapes"]):
        result["status"] = "incorrect"
        result["message"] = "the kernel failed its correctness check (not timed where it failed)"
    result["summary"] = summary_line(result) if result["status"] != "crashed" else f"CRASHED: {result['message']}"
    result["elapsed_s"] = round(time.time() - started, 2)
    progress("done", 100.0)
    return result
