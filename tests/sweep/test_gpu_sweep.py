"""On a host with 2 or more CUDA GPUs of one model: `tritonify bench --gpus all` on the example RMSNorm.

Skipped without them (never run yet: written for the issue's 2-GPU device run). Set
TRITONIFY_GPU_RESULTS=DIR to keep the merged JSON result.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.device_count() < 2,
                                 reason="needs 2 CUDA GPUs")]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "bench" / "rmsnorm.py"


def test_a_shape_sweep_spreads_over_two_gpus_into_one_report_and_lineage(tmp_path):
    out_dir = Path(os.environ.get("TRITONIFY_GPU_RESULTS") or tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    lineage_file = tmp_path / "candidates.jsonl"
    proc = subprocess.run([sys.executable, "-m", "tritonify", "bench", f"{EXAMPLE}::rmsnorm_kernel", "--gpus", "all",
                           "--baselines", "eager,torch_rms_norm", "--format", "json", "--lineage", str(lineage_file),
                           "--report-dir", str(tmp_path / "reports")],
                          capture_output=True, text=True, timeout=540, env=env, check=False)
    assert proc.stdout, proc.stderr[-4000:]
    merged = json.loads(proc.stdout)
    (out_dir / "sweep_rmsnorm_gpus.json").write_text(json.dumps(merged, indent=1, default=str))
    assert merged["status"] == "ok", merged.get("message")
    assert len(merged["jobs"]) == 4                                    # the contract's four shapes, one job each
    used = {j["placement"]["gpu_uuid"] for j in merged["jobs"]}
    assert len(used) >= 2, "the jobs did not spread over the GPUs"
    assert len({j["placement"]["gpu_model"] for j in merged["jobs"]}) == 1
    assert merged["gpu_measurement"] and all(s["results"]["kernel"]["timing"] for s in merged["shapes"])
    records = [json.loads(line) for line in lineage_file.read_text().splitlines()]
    assert len(records) == 4 and len({r["sweep_key"] for r in records}) == 4
