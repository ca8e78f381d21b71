"""`tritonify bench ... --gpus`: the sweep through the command line, and its messages for bad input."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from tritonify.kernels.sweep import cli as sweep_cli
from tritonify.kernels.sweep import devices

from tests.sweep.conftest import lineage_lines


def test_a_bad_gpus_value_is_a_message_not_a_traceback(sweep_case, capsys):
    import argparse

    from tritonify.cli.commands import bench

    kernel, *_ = sweep_case
    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    args = parser.parse_args([f"{kernel}::affine_kernel", "--gpus", "0,x", "--timer", "none"])
    assert bench.run(args) == 2
    assert "--gpus: bad GPU 'x'" in capsys.readouterr().err


def test_no_gpu_on_this_host_is_a_message(monkeypatch):
    monkeypatch.setattr(devices, "discover", lambda: ([], "NVML is unavailable (NVMLError_LibraryNotFound)"))
    with pytest.raises(devices.SelectionError, match="no GPU found: NVML is unavailable"):
        sweep_cli.choose_slots("all")
    h200 = devices.Device(index=0, name="NVIDIA H200", host="h")
    h100 = devices.Device(index=1, name="NVIDIA H100", host="h")
    monkeypatch.setattr(devices, "discover", lambda: ([h200, h100], None))
    with pytest.raises(devices.SelectionError, match="not comparable"):
        sweep_cli.choose_slots("all")
    slots, notes = sweep_cli.choose_slots("1")
    assert [s.label for s in slots] == ["gpu1"] and notes == []


def test_static_shapes_reads_the_contracts_literal_shapes(sweep_case, tmp_path):
    kernel, *_ = sweep_case
    assert sweep_cli.static_shapes(kernel, "affine_kernel") == [[4, 16], [3, 20]]
    assert sweep_cli.static_shapes(kernel, "other_kernel") is None
    (tmp_path / "computed.py").write_text("from x import Contract\nC = Contract(kernel='k', shapes=make())\n")
    assert sweep_cli.static_shapes(tmp_path / "computed.py", "k") is None


def test_ray_missing_is_a_message(monkeypatch):
    from tritonify.kernels.sweep import ray_backend

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ray_backend.RayUnavailable, match="pip install 'ray"):
        ray_backend.import_ray()


def test_bench_gpus_cpu_slots_runs_one_job_per_shape_into_one_report_and_lineage(sweep_case, tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    kernel, env, _seen, _ = sweep_case
    lineage_file = tmp_path / "candidates.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "tritonify", "bench", f"{kernel}::affine_kernel", "--gpus", "cpu:2", "--interpret",
         "--timer", "none", "--baselines", "eager", "--shapes", "2x8,4x8", "--format", "json",
         "--lineage", str(lineage_file), "--no-report"],
        capture_output=True, text=True, timeout=180, check=False,
        env={**os.environ, "SWEEP_SEEN": env["SWEEP_SEEN"]})
    assert proc.returncode == 0, proc.stderr[-2000:]
    merged = json.loads(proc.stdout)
    assert merged["status"] == "ok" and merged["target"] == "affine_sweep.py::affine_kernel"
    assert [s["label"] for s in merged["shapes"]] == ["2x8", "4x8"]
    assert sorted(j["placement"]["cuda_visible_devices"] for j in merged["jobs"]) in (["0", "1"], ["0", "0"],
                                                                                      ["1", "1"])
    records = lineage_lines(lineage_file)
    assert len(records) == 2 and {r["sweep_key"].split("/")[0] for r in records} == {merged["sweep_id"]}
    assert all(r["target"] == "affine_sweep.py::affine_kernel" for r in records)
    progress = [json.loads(line) for line in proc.stderr.splitlines() if line.startswith("{\"job\"")]
    assert [p["done"] for p in progress] == [1, 2] and all(p["slot"] in ("cpu0", "cpu1") for p in progress)
