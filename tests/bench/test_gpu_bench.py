"""On a CUDA GPU: `tritonify bench` on the example RMSNorm against eager, torch.compile and Liger.

Skipped without CUDA. Set TRITONIFY_GPU_RESULTS=DIR to keep the JSON result (results/ holds the one
committed from the H200 run, with its date, GPU and versions).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from tritonify.kernels.bench import bench_jobs

from tests.bench.conftest import write_case

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "bench" / "rmsnorm.py"


def _child_env():
    env = dict(os.environ)
    env.pop("TRITON_INTERPRET", None)       # real kernels on the GPU
    return env


def test_example_kernel_against_eager_compile_and_liger(tmp_path):
    out_dir = Path(os.environ.get("TRITONIFY_GPU_RESULTS") or tmp_path)
    proc = subprocess.run([sys.executable, "-m", "tritonify", "bench", f"{EXAMPLE}::rmsnorm_kernel",
                           "--baselines", "eager,compile,liger,torch_rms_norm", "--format", "json",
                           "--lineage", str(tmp_path / "candidates.jsonl"), "--report-dir", str(tmp_path / "reports")],
                          capture_output=True, text=True, timeout=540, env=_child_env(), check=False)
    assert proc.stdout, proc.stderr[-4000:]
    result = json.loads(proc.stdout)
    (out_dir / "bench_rmsnorm_gpu.json").write_text(json.dumps(result, indent=1, default=str))
    assert proc.returncode == 0, result.get("message")
    assert result["status"] == "ok" and result["gpu_measurement"] is True
    ceil = result["ceilings"]
    assert 500 < ceil["copy_gbps"] < 20000 and 50 < ceil["bf16_tflops"] < 5000
    assert result["baselines"] == {"eager": "run", "compile": "run", "liger": "run", "torch_rms_norm": "run"}
    assert "do_bench" in result["method"]
    for shape in result["shapes"]:
        for impl in ("kernel", "eager", "compile", "liger", "torch_rms_norm"):
            row = shape["results"][impl]
            assert row["correct"], (shape["label"], impl, row["message"])
            assert row["timing"]["gpu_measurement"] and row["timing"]["p20_ms"] <= row["timing"]["p50_ms"] <= row["timing"]["p80_ms"]
            assert 1 < row["pct_copy_bw"] < 150, (shape["label"], impl, row["pct_copy_bw"])
            assert 0 < row["host_us"] < 5000, (shape["label"], impl, row.get("host_us"))   # host time per call, 8 rows
        assert set(shape["speedup"]) == {"eager", "compile", "liger", "torch_rms_norm"}
    assert "% of copy BW" in result["summary"] and "us/call" in result["summary"]
    assert Path(result["reports"]["png"]).is_file()


def test_unwritten_output_on_the_gpu_is_incorrect_and_not_timed(tmp_path):
    kernel = write_case(tmp_path, "skip_last", module="affine_gpu_skip")
    result = bench_jobs.run_job(bench_jobs.job_spec(f"{kernel}::affine_kernel", baselines=["eager"], shapes=[[256, 1000]]),
                          timeout=300, env={"TRITON_INTERPRET": "0"})
    assert result["status"] == "incorrect", result.get("message")
    k = result["shapes"][0]["results"]["kernel"]
    assert k["check"]["unwritten"] == 256 and k["timing"] is None


ILLEGAL = '''
import torch
import triton
import triton.language as tl
from tritonify.kernels.bench import Contract


@triton.jit
def far_store_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs.to(tl.int64) + (1 << 40), x, mask=offs < n)   # a terabyte past the buffer


def far_store(x):
    y = torch.empty_like(x)
    far_store_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
    return y


CONTRACT = Contract(kernel="far_store_kernel", entry=far_store, reference=lambda x: x * 1,
                    inputs=lambda s, d, dev: (torch.randn(s, dtype=d, device=dev),), shapes=[(4096,)], dtype="float32")
'''


def test_illegal_address_ends_the_run_with_a_clear_message(tmp_path):
    (tmp_path / "far.py").write_text(ILLEGAL)
    result = bench_jobs.run_job(bench_jobs.job_spec(f"{tmp_path / 'far.py'}::far_store_kernel", baselines=["eager"]),
                          timeout=300, env={"TRITON_INTERPRET": "0"})
    assert result["status"] == "crashed", result
    assert "illegal" in result["message"].lower()


SYNCING_BASELINE = '''
import torch
import triton
import triton.language as tl
from tritonify.kernels.bench import Contract


@triton.jit
def double_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, 2 * tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def double(x):
    y = torch.empty_like(x)
    double_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
    return y


def syncing(x):
    if x.abs().max().item() < 0:      # a host sync: this call cannot be captured in a CUDA graph
        return x
    return x * 2


CONTRACT = Contract(kernel="double_kernel", entry=double, reference=lambda x: x * 2,
                    inputs=lambda s, d, dev: (torch.randn(s, dtype=d, device=dev),), shapes=[(4096,), (8192,)],
                    dtype="float32", baselines={"syncing": syncing})
'''


def test_a_baseline_that_cannot_be_captured_does_not_break_the_next_shape(tmp_path):
    """Seen on the H200 with Liger's cross-entropy: its failed graph capture left the CUDA generator
    marked as capturing, and every later random input failed. Both shapes must be measured."""
    (tmp_path / "sync.py").write_text(SYNCING_BASELINE)
    result = bench_jobs.run_job(bench_jobs.job_spec(f"{tmp_path / 'sync.py'}::double_kernel", baselines=["syncing"]),
                          timeout=300, env={"TRITON_INTERPRET": "0"})
    assert result["status"] == "ok", result.get("message")
    assert len(result["shapes"]) == 2
    for shape in result["shapes"]:
        assert shape["results"]["kernel"]["timing"]["method"] == "cuda_graph"
        synced = shape["results"]["syncing"]["timing"]
        assert synced["method"] == "do_bench" and "capture failed" in synced["note"]


def test_the_device_scripts_timings_agree_with_the_bytes_they_move():
    """events_ms, graph_ms, graph_of_calls_us and three_timings on a 256 MiB copy: each lands between
    the copy's floor at the H200's measured ceiling (about 4.3 TB/s read + write) and ten times it,
    and the graph and events figures of the same copy agree within a factor of two."""
    from tritonify.kernels.bench import timing

    src = torch.randn(1 << 27, device="cuda", dtype=torch.bfloat16)
    dst = torch.empty_like(src)
    call = lambda: dst.copy_(src)  # noqa: E731
    floor_us = 2 * src.numel() * 2 / 5e12 * 1e6   # bytes read + written at 5 TB/s, above the ceiling
    rec = timing.three_timings(call)
    values = {"events": rec["events_us"], "graph": rec["graph_us"],
              "events_median": 1e3 * timing.events_ms(call, statistic="median"),
              "graph_ms": 1e3 * timing.graph_ms(call),
              "graph_of_calls": timing.graph_of_calls_us(call, calls=10, replays=3)}
    for name, us in values.items():
        assert floor_us < us < 10 * floor_us, (name, us, floor_us)
    assert 0.5 < rec["graph_us"] / rec["events_us"] < 2.0
    assert rec["rep_ms"] >= 40.0
    assert torch.equal(dst, src)
