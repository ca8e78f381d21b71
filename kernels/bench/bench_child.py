"""The child process: ``python -m tritonify.kernels.bench.bench_child SPEC.json RESULT.json``.

Runs one job (``runner.run_bench``) and writes its result to RESULT.json (atomically: a temporary
file, then a rename), so the parent never reads half a result. Progress goes to stderr as JSON lines
``{"progress": "...", "percent": N, "job": ID}``. The user's own prints are sent to stderr too, so
nothing but the result file carries the result.

Exit status: 0 when a result was written (whatever it says), 2 when the spec could not be read.
A crash (segfault, abort) or a kill leaves no result file; the parent turns that into a message.
"""
from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path


def write_result(path: Path, result: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(result, default=str))
    os.replace(tmp, path)


ENGINE_PACKAGES = ("torch", "triton")


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m tritonify.kernels.bench.bench_child SPEC.json RESULT.json", file=sys.stderr)
        return 2
    spec_path, result_path = Path(argv[0]), Path(argv[1])
    try:
        spec = json.loads(spec_path.read_text())
    except (OSError, ValueError) as exc:
        print(f"tritonify worker: cannot read the job spec {spec_path}: {exc}", file=sys.stderr)
        return 2
    # Anything printed by user code goes to stderr; the result travels in its own file.
    sys.stdout.flush()
    os.dup2(2, 1)
    job = spec.get("id")

    def progress(message: str, percent: float) -> None:
        sys.stderr.write(json.dumps({"progress": message, "percent": round(percent, 1), "job": job}) + "\n")
        sys.stderr.flush()

    kind = spec.get("kind", "bench")
    try:
        if kind == "bench":
            from tritonify.kernels.bench.runner import run_bench

            result = run_bench(spec, progress=progress)
        elif kind == "perf_report":
            from tritonify.kernels.bench.perf_report import run_perf_reports

            result = run_perf_reports(spec, progress=progress)
        else:
            raise ValueError(f"unknown job kind {kind!r}")
    except Exception as exc:  # a bad contract or user import error: a clear message, the trace in the log
        if not (isinstance(exc, ModuleNotFoundError) and exc.name in ENGINE_PACKAGES):   # that one says it all
            traceback.print_exc(file=sys.stderr)
        first = str(exc).strip().splitlines()
        message = f"{type(exc).__name__}: {first[0] if first else ''}"
        result = {"schema": "tritonify.bench/1", "target": spec.get("target"), "job": job, "status": "error",
                  "message": message, "shapes": [], "summary": f"error: {message}"}
        if isinstance(exc, ModuleNotFoundError):   # this Python lacks a package: nothing was learned about the kernel
            result["environment"] = True
            if exc.name in ENGINE_PACKAGES:
                result["message"] = (f"{exc.name} is not installed in {sys.executable}: benchmarks run the kernel with "
                                     "torch and triton")
                # how to fix it by hand; an editor that offers "Choose Interpreter" shows the button instead
                result["hint"] = "run it with the Python that has both: bench --python PY, or the editor's tritonify.interpreter setting"
                result["summary"] = f"error: {exc.name} is not installed in {sys.executable}"
    write_result(result_path, result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
