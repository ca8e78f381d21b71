"""``tritonify bench FILE::KERNEL --gpus all|0,1|cpu:N`` or ``--ray ADDRESS``: the bench run as a sweep.

The command's single job is split into one job per shape (``bench_jobs.expand_sweep``), spread over the
chosen GPUs (``pool``) or a Ray cluster (``ray_backend``), recorded one lineage record per job (each
under its idempotency key) and merged into one report. ``bench.run`` hands over here when either
option is given; everything else (parsing the target, the job spec) stays there.
"""
from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

from tritonify.infra import exit_codes
from tritonify.kernels.sweep import devices as devices_mod
from tritonify.kernels.sweep.merge import Recorder, merged_result, new_sweep_id


def static_shapes(file: Path, kernel: str | None) -> list[list[int]] | None:
    """The contract's ``shapes=[...]`` when it is a literal (read without importing), else None."""
    from tritonify.kernels.bench import discovery

    for path in discovery.candidate_files(file):
        tree = discovery._parse(path)
        for node in ast.walk(tree) if tree else ():
            if not (isinstance(node, ast.Call) and discovery._callee_name(node.func) == "Contract"):
                continue
            if kernel and kernel not in (discovery._literal_kw(node, "kernel"), discovery._literal_kw(node, "name")):
                continue
            shapes = next((kw.value for kw in node.keywords if kw.arg == "shapes"), None)
            try:
                value = ast.literal_eval(shapes) if shapes is not None else None
            except ValueError:
                return None
            return [list(s) for s in value] if value else None
    return None


def choose_slots(gpus: str) -> tuple[list[devices_mod.Slot], list[str]]:
    """Slots for ``--gpus``: GPUs through NVML (busy ones skipped, one model only), or ``cpu:N`` CPU slots."""
    wanted = devices_mod.parse_gpus(gpus)
    if isinstance(wanted, int):
        return devices_mod.cpu_slots(wanted), []
    found, reason = devices_mod.discover()
    chosen, notes = devices_mod.select(found, wanted, reason=reason)
    return devices_mod.gpu_slots(chosen), notes


def _announce(fmt: str, total: int):
    done = []

    def show(result: dict) -> None:
        done.append(result)
        place = result.get("placement") or {}
        line = {"job": result.get("job"), "done": len(done), "of": total, "status": result.get("status"),
                "slot": place.get("slot"), "host": place.get("host"), "summary": result.get("summary")}
        if fmt == "json":
            sys.stderr.write(json.dumps(line) + "\n")
        else:
            sys.stderr.write(f"[{len(done)}/{total}] {place.get('slot')}@{place.get('host')}: "
                             f"{result.get('status')} - {result.get('summary', '')}\n")
        sys.stderr.flush()
    return show


def run_sweep(args, spec: dict, file: Path, kernel: str | None) -> int:
    """Run ``spec`` as a sweep over ``--gpus`` or ``--ray``; print and record like a plain bench run."""
    from tritonify.kernels.bench import bench_jobs, lineage, report
    from tritonify.kernels.bench.environment import git_state

    if spec["kind"] != "bench":
        print("tritonify: error: --gpus/--ray run contract benchmarks; perf_report files run with a plain bench",
              file=sys.stderr)
        return exit_codes.ERROR
    slots, notes = [], []
    if not args.ray:
        try:
            slots, notes = choose_slots(args.gpus)
        except (ValueError, devices_mod.SelectionError) as exc:
            print(f"tritonify: error: --gpus: {exc}", file=sys.stderr)
            return exit_codes.ERROR
        if all(s.model is None for s in slots) and not spec.get("device"):
            spec["device"] = "cpu"
    for note in notes:
        print(f"tritonify: {note}", file=sys.stderr)
    shapes = spec["shapes"] or static_shapes(file, kernel)
    common = {k: spec[k] for k in ("baselines", "timer", "seed", "checks", "device", "env", "kind", "refresh_ceilings")}
    specs = bench_jobs.expand_sweep([spec["target"]], shapes=[tuple(s) for s in shapes] if shapes else None, **common)
    display = f"{file.name}::{kernel}" if kernel else file.name
    path = None if args.no_lineage else (Path(args.lineage) if args.lineage else lineage.default_path(file))
    recorder = Recorder(path, name=args.name, parent=args.parent, git=git_state(file), target=display)
    sweep_id = new_sweep_id()
    announce = _announce(args.format, len(specs))
    if args.ray:
        from tritonify.kernels.sweep import ray_backend

        try:
            results = ray_backend.run_ray(specs, args.ray, sweep_id=sweep_id, recorder=recorder, python=args.python,
                                          timeout=args.timeout, on_result=announce)
        except ray_backend.RayUnavailable as exc:
            print(f"tritonify: error: --ray: {exc}", file=sys.stderr)
            return exit_codes.ERROR
    else:
        from tritonify.kernels.sweep.pool import run_pool

        results = run_pool(specs, slots, sweep_id=sweep_id, recorder=recorder, python=args.python,
                           timeout=args.timeout, on_result=announce)
    merged = merged_result(results)
    merged["target"], merged["sweep_id"] = display, sweep_id
    if not args.no_report and merged.get("shapes"):
        try:
            merged["reports"] = report.write(merged, Path(args.report_dir), name=args.name or merged.get("contract"))
        except Exception as exc:  # a report failure must not lose the measurements
            merged["reports"] = {"error": f"{type(exc).__name__}: {exc}"}
    if path is not None:
        merged["lineage"] = {"path": str(path), "sweep_id": sweep_id, "jobs": len(results)}
    if args.format == "json":
        json.dump(merged, sys.stdout, default=str)
        sys.stdout.write("\n")
    else:
        print(report.text(merged))
        for job in merged["jobs"]:
            place = job.get("placement") or {}
            print(f"job {job['job']}: {job['status']} on {place.get('slot')}@{place.get('host')} "
                  f"(CUDA_VISIBLE_DEVICES={place.get('cuda_visible_devices')}, GPU {place.get('gpu_model')})")
        if merged.get("lineage"):
            print(f"lineage: {path} (sweep {sweep_id}, {len(results)} job record(s))")
    return exit_codes.OK if merged.get("status") == "ok" else exit_codes.FINDINGS
