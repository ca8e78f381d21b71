"""One timer: every GPU timing of the product and of the device scripts goes through
kernels/bench/timing.py (GpuTimer for the harness; events_ms / graph_ms / graph_of_calls_us /
three_timings for the scripts under gpu/). A script that calls Triton's or torch's timing
primitives itself is a second recipe, and two recipes disagreed on one Liger row before."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ["gpu", "benchmarks", "kernels", "diagnostics", "tools", "server", "cli", "infra"]
TIMER = ROOT / "kernels" / "bench" / "timing.py"
# The primitives a timing recipe is made of.
PRIMITIVES = {"do_bench", "do_bench_cudagraph", "CUDAGraph", "elapsed_time"}
# CUDA C++ probes timed through CuPy's own events (no torch on the path they measure).
CUPY_ONLY = {ROOT / "gpu" / "cuda_fp64" / "probe.py"}


def _calls(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in PRIMITIVES:
                yield node.lineno, name


def test_no_timing_recipe_outside_the_one_timer():
    found = []
    for folder in SCANNED:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path == TIMER or path in CUPY_ONLY:
                continue
            found += [f"{path.relative_to(ROOT)}:{line}: {name}(...)" for line, name in _calls(path)]
    assert not found, "time through tritonify.kernels.bench.timing instead:\n" + "\n".join(found)


def test_the_cupy_probe_really_has_no_torch_to_time_with():
    # The one exception stays honest: if the probe starts using torch, it must use the timer too.
    for path in CUPY_ONLY:
        text = path.read_text(encoding="utf-8")
        assert "import torch" not in text and "cp.cuda.Event" in text
