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
# A template is copied into the user's project and imports only torch and triton: its autotuner may
# be handed Triton's own timing primitive (`triton.autotune(..., do_bench=f)`) to choose a config.
# That choice is not a figure anyone reports, so such a function is not a second recipe; anything
# else in a template that times is.
TEMPLATES = ROOT / "kernels" / "templates"


def _autotuner_hooks(tree: ast.AST) -> set[ast.AST]:
    """The module-level functions a template hands `triton.autotune` as `do_bench=` (directly or
    through one module-level name that chooses between them and None)."""
    passed = {kw.value.id for node in ast.walk(tree) if isinstance(node, ast.Call)
              for kw in node.keywords if kw.arg == "do_bench" and isinstance(kw.value, ast.Name)}
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in passed for t in node.targets):
            passed |= {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
    return {node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name in passed}


def _calls(path: Path, template: bool | None = None):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    allowed = set()
    if path.parent == TEMPLATES if template is None else template:
        allowed = {id(n) for hook in _autotuner_hooks(tree) for n in ast.walk(hook)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and id(node) not in allowed:
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


def test_a_template_times_only_through_its_autotuners_hook(tmp_path):
    # the allowance above covers the function handed to triton.autotune and nothing else in the file
    text = (
        "import triton\n"
        "def _hook(call, quantiles):\n"
        "    return triton.testing.do_bench_cudagraph(call, quantiles=quantiles)\n"
        "BENCH = None if False else _hook\n"
        "@triton.autotune(configs=[], key=[], do_bench=BENCH)\n"
        "def k(): pass\n"
        "def report():\n"
        "    return triton.testing.do_bench(lambda: None)\n")
    tree = ast.parse(text)
    assert [f.name for f in _autotuner_hooks(tree)] == ["_hook"]
    scratch = tmp_path / "template.py"
    scratch.write_text(text, encoding="utf-8")
    assert [name for _, name in _calls(scratch, template=True)] == ["do_bench"]
    assert [name for _, name in _calls(scratch, template=False)] == ["do_bench_cudagraph", "do_bench"]
