"""The issue's multi-GPU measurement: one 64-job sweep on every GPU of the host, then on one GPU.

    python gpu/sweep/measure.py OUT_DIR [--jobs 64] [--gpus all]

Both runs are the same `tritonify bench examples/bench/rmsnorm.py::rmsnorm_kernel --shapes ...`
command (one job per shape, each job its own child process: correctness against float64, then
GPU timing against eager), once with `--gpus all` and once with `--gpus 0`, with the same seed.
The Triton cache is warmed by the first run for both (the two-GPU run goes first, so any warm-up
advantage is the one-GPU run's). Written to OUT_DIR: `sweep_two_gpus.json`, `sweep_one_gpu.json`
(the merged results) and `sweep_summary.json`: wall times, the ratio, where jobs ran, and whether
every job's correctness verdict is the same in both runs.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGET = f"{ROOT / 'examples' / 'bench' / 'rmsnorm.py'}::rmsnorm_kernel"


def sweep_shapes(n: int) -> list[str]:
    """n distinct (rows, hidden) shapes: 8 row counts x hidden sizes, 8 MB to 512 MB of bf16 input."""
    rows = [1024, 2048, 3072, 4096, 6144, 8192, 12288, 16384]
    hidden = [1024, 2048, 3072, 4096, 5120, 6144, 7168, 8192]
    shapes = [f"{r}x{h}" for h in hidden for r in rows]
    return shapes[:n]


def run(gpus: str, shapes: list[str], out: Path, tag: str, extra: list[str]) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    argv = [sys.executable, "-m", "tritonify", "bench", TARGET, "--shapes", ",".join(shapes), "--gpus", gpus,
            "--baselines", "eager", "--format", "json", "--seed", "20261129", "--no-report",
            "--lineage", str(out / f"lineage_{tag}.jsonl"), "--timeout", "300", *extra]
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=1500, check=False)
    wall = time.perf_counter() - start
    try:
        merged = json.loads(proc.stdout)
    except ValueError:
        merged = {"status": "no-json", "stdout_tail": proc.stdout[-2000:], "stderr_tail": proc.stderr[-4000:]}
    (out / f"sweep_{tag}.json").write_text(json.dumps(merged, indent=1, default=str))
    return {"wall_s": round(wall, 2), "returncode": proc.returncode, "merged": merged}


def verdicts(merged: dict) -> dict[str, bool | None]:
    """Shape label -> the kernel's correctness verdict in that run."""
    out = {}
    for shape in merged.get("shapes", []):
        label = "x".join(str(d) for d in shape.get("shape", []))
        out[label] = (shape.get("results", {}).get("kernel") or {}).get("correct")
    return out


def placements(merged: dict) -> dict[str, int]:
    counts: dict[str, int] = {}
    for job in merged.get("jobs", []):
        place = job.get("placement") or {}
        key = place.get("gpu_uuid") or place.get("slot") or "?"
        counts[key] = counts.get(key, 0) + 1
    return counts


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("out", type=Path)
    p.add_argument("--jobs", type=int, default=64)
    p.add_argument("--gpus", default="all")
    p.add_argument("--cpu-dry-run", action="store_true",
                   help="check this script without a GPU: cpu:2 vs cpu:1 slots, interpreter, no timing, tiny shapes")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    shapes = sweep_shapes(args.jobs)
    one_gpu, extra = "0", []
    if args.cpu_dry_run:
        args.gpus, one_gpu, extra = "cpu:2", "cpu:1", ["--interpret", "--timer", "none"]
        shapes = [f"{4 + i}x{32 * (1 + i % 3)}" for i in range(args.jobs)]
    many = run(args.gpus, shapes, args.out, "two_gpus", extra)
    print(f"{args.gpus}: {many['wall_s']} s, rc {many['returncode']}", flush=True)
    one = run(one_gpu, shapes, args.out, "one_gpu", extra)
    print(f"0: {one['wall_s']} s, rc {one['returncode']}", flush=True)
    v_many, v_one = verdicts(many["merged"]), verdicts(one["merged"])
    summary = {
        "jobs": len(shapes), "target": TARGET, "baselines": ["eager"],
        "wall_s": {"all_gpus": many["wall_s"], "one_gpu": one["wall_s"]},
        "ratio_all_over_one": round(many["wall_s"] / one["wall_s"], 3) if one["wall_s"] else None,
        "jobs_per_gpu": {"all_gpus": placements(many["merged"]), "one_gpu": placements(one["merged"])},
        "status": {"all_gpus": many["merged"].get("status"), "one_gpu": one["merged"].get("status")},
        "verdicts_identical": v_many == v_one and len(v_many) == len(shapes),
        "all_correct": all(v is True for v in v_many.values()) and len(v_many) == len(shapes),
        "returncodes": [many["returncode"], one["returncode"]],
    }
    (args.out / "sweep_summary.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary, indent=1))
    return 0 if summary["verdicts_identical"] else 1


if __name__ == "__main__":
    sys.exit(main())
