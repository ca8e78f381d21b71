"""The one-host pool for real: 2 CPU slots, jobs of a tiny Triton kernel under TRITON_INTERPRET=1,
one worker killed mid-job and its job retried on the other slot, one merged lineage."""
from __future__ import annotations

import signal
import threading

import pytest

pytest.importorskip("torch")
pytest.importorskip("triton")

from tritonify.kernels.bench import bench_jobs
from tritonify.kernels.sweep.devices import cpu_slots
from tritonify.kernels.sweep.merge import Recorder, merged_result
from tritonify.kernels.sweep.pool import run_pool

from tests.sweep.conftest import kill_quietly, lineage_lines, wait_for_pids


@pytest.mark.slow
def test_two_slots_a_killed_worker_is_retried_elsewhere_and_recorded_once(sweep_case, tmp_path):
    kernel, env, seen, marker = sweep_case
    specs = bench_jobs.expand_sweep([f"{kernel}::affine_kernel"], shapes=[(2, 8), (3, 8), (4, 8)], baselines=["eager"],
                              timer="none", device="cpu", env=env)
    hanging = specs[1]["id"]                       # shape 3x8 hangs on its first attempt
    killed = {}

    def kill_the_hanging_worker():
        killed["pid"], _ = wait_for_pids(marker)
        kill_quietly(killed["pid"], signal.SIGKILL)

    killer = threading.Thread(target=kill_the_hanging_worker, daemon=True)
    killer.start()
    path = tmp_path / "candidates.jsonl"
    results = run_pool(
        specs, cpu_slots(2), sweep_id="sw1", recorder=Recorder(path, target="affine_sweep.py::affine_kernel"),
        timeout=120)
    killer.join(timeout=5)
    assert "pid" in killed, "the hanging job was never killed"

    assert [r["status"] for r in results] == ["ok", "ok", "ok"], [r.get("message") for r in results]
    retried = next(r for r in results if r["job"] == hanging)
    first, second = retried["attempts"]
    assert first["status"] == "crashed" and first["returncode"] == -signal.SIGKILL
    assert second["status"] == "ok" and second["slot"] != first["slot"]
    assert retried["placement"]["slot"] == second["slot"]
    assert all(len(r["attempts"]) == 1 for r in results if r["job"] != hanging)

    # Each job's child saw its slot's CUDA_VISIBLE_DEVICES, and the result says which one.
    visible = {f.read_text() for f in seen.iterdir()}
    assert visible == {"0", "1"}
    assert {r["placement"]["cuda_visible_devices"] for r in results} <= {"0", "1"}
    assert retried["placement"]["cuda_visible_devices"] == {"cpu0": "0", "cpu1": "1"}[second["slot"]]

    # One lineage: one record per job, the retried job once, each with its placement.
    records = lineage_lines(path)
    assert sorted(r["sweep_key"] for r in records) == sorted(f"sw1/{s['id']}" for s in specs)
    assert [r["placement"]["slot"] for r in records if r["job"] == hanging] == [second["slot"]]
    assert all(r["outcome"] == "ok" and r["correct"] for r in records)

    merged = merged_result(results)
    assert merged["status"] == "ok" and [s["label"] for s in merged["shapes"]] == ["2x8", "3x8", "4x8"]
    assert all(s["placement"]["host"] for s in merged["shapes"])
