"""Run a repository's existing ``triton.testing.perf_report`` benchmarks as they are.

Such a benchmark (the Triton tutorials' form) already decides its method and units; the harness only
finds the module-level ``triton.testing.Mark`` objects, runs each with ``return_df=True`` in the child
process, and returns the tables. It does not check correctness or add baselines: a contract does that.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

from tritonify.kernels.bench.discovery import import_file, parse_target
from tritonify.kernels.bench.environment import gpu_info, versions


def _clean(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "item"):
        return _clean(value.item())
    return value


def run_perf_reports(spec: dict, *, progress: Callable[[str, float], None] = lambda m, p: None) -> dict:
    import triton.testing

    file, name = parse_target(spec["target"])
    module = import_file(Path(file))
    marks = [(key, value) for key, value in vars(module).items() if isinstance(value, triton.testing.Mark)]
    if name:
        marks = [(k, m) for k, m in marks if name in (k, getattr(m.fn, "__name__", None))]
    result = {"schema": "tritonify.bench/1", "kind": "perf_report", "target": spec["target"], "file": file,
              "job": spec.get("id"), "status": "ok", "message": "", "shapes": [], "reports": [],
              "gpu": gpu_info(), "versions": versions(),
              "method": "the benchmark's own (triton.testing.perf_report, run as written); no correctness check"}
    if not marks:
        raise LookupError(f"no triton.testing.perf_report benchmark{' named ' + name if name else ''} in {file}")
    for i, (key, mark) in enumerate(marks):
        progress(f"running perf_report {key}", 100.0 * i / len(marks))
        frames = mark.run(print_data=False, show_plots=False, return_df=True)
        frames = frames if isinstance(frames, list) else [frames]
        for df in frames:
            records = [{k: _clean(v) for k, v in row.items()} for row in df.to_dict("records")]
            result["reports"].append({"name": key, "columns": [str(c) for c in df.columns], "rows": records})
    result["summary"] = f"{len(result['reports'])} perf_report table(s) from {Path(file).name}"
    return result
