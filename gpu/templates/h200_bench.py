"""One device run of the benchmark harness over the templates (not a test: run by run_on_h200.sh).

Each template is one harness job (``bench_jobs.run_job``: its own child process, as ``tritonify bench`` runs
it), against eager PyTorch, ``torch.compile`` and Liger-Kernel where Liger has the op, at one large
shape. One process per template matters: a baseline whose CUDA-graph capture fails can leave that
process's CUDA state unusable for what follows (seen with Liger's cross-entropy). Results go to ``$OUT/templates_h200.jsonl`` one line per template as each finishes, so a
run cut short keeps what it measured. A template is not started once ``budget_s`` has passed.

    python gpu/templates/h200_bench.py BUDGET_S [NAME ...]
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# name -> shapes, in priority order (the shapes of facts/h200.md's baselines where there are some)
PLAN = {
    "rms_norm": [(16384, 4096)],
    "swiglu": [(16384, 4096)],
    "cross_entropy": [(8192, 128256)],
    "softmax": [(16384, 4096)],
    "add_rms_norm": [(16384, 4096)],
    "linear_gelu": [(8192, 4096, 14336)],
    "tanh_glu": [(16384, 4096)],
    "geglu_sigmoid": [(16384, 4096)],
    "relu2_glu": [(16384, 4096)],
    "fused_linear_cross_entropy": [(8192, 4096, 128256)],
}


def main(argv: list[str]) -> int:
    from tritonify.kernels.bench.bench_jobs import job_spec, run_job

    budget = float(argv[0]) if argv else 150.0
    names = argv[1:] or list(PLAN)
    out = Path(os.environ.get("OUT", "/tmp/templates_out")) / "templates_h200.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    start = time.time()
    for name in names:
        elapsed = time.time() - start
        if elapsed > budget:
            record = {"template": name, "status": "not_run", "message": f"budget of {budget:.0f} s spent"}
        else:
            spec = job_spec(str(ROOT / "kernels" / "templates" / f"{name}.py") + f"::{name}", shapes=PLAN[name],
                            baselines=["eager", "compile", "liger"], checks=1, seed=20261129)
            t0 = time.time()
            try:
                record = run_job(spec, timeout=max(60.0, budget + 60 - elapsed), env={"TRITON_INTERPRET": "0"})
            except Exception as exc:  # noqa: BLE001 -- one template's failure must not cost the others their numbers
                record = {"status": "error", "message": f"{type(exc).__name__}: {exc}"}
            record["template"], record["wall_s"] = name, round(time.time() - t0, 1)
        with out.open("a") as f:
            f.write(json.dumps(record, default=str) + "\n")
        print(f"[{time.time() - start:6.1f}s] {name}: {record.get('status')} {record.get('summary', record.get('message', ''))}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
