"""The Ray backend on a local Ray cluster with CPU workers (TRITON_INTERPRET=1): a task whose Ray worker
is killed mid-job is retried by Ray and recorded once. Skipped when Ray is not installed."""
from __future__ import annotations

import signal
import threading

import pytest

pytest.importorskip("torch")
pytest.importorskip("triton")
ray = pytest.importorskip("ray")

from tritonify.kernels.bench import bench_jobs
from tritonify.kernels.sweep import ray_backend
from tritonify.kernels.sweep.merge import Recorder
from tritonify.kernels.sweep.ray_backend import run_ray

from tests.sweep.conftest import kill_quietly, lineage_lines, wait_for_pids


@pytest.fixture
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.mark.slow
def test_a_killed_ray_worker_is_retried_and_its_job_recorded_once(local_ray, sweep_case, tmp_path):
    kernel, env, _seen, marker = sweep_case
    specs = bench_jobs.expand_sweep([f"{kernel}::affine_kernel"], shapes=[(3, 8), (2, 8)], baselines=["eager"],
                              timer="none", device="cpu", env=env)
    killed = {}

    def kill_the_ray_worker():
        job_pid, ray_worker_pid = wait_for_pids(marker)
        killed["worker"] = ray_worker_pid
        kill_quietly(ray_worker_pid, signal.SIGKILL)      # the Ray worker running the task: Ray retries it
        kill_quietly(job_pid, signal.SIGKILL)             # and its orphaned job process

    killer = threading.Thread(target=kill_the_ray_worker, daemon=True)
    killer.start()
    path = tmp_path / "candidates.jsonl"
    results = run_ray(specs, None, sweep_id="ray1", recorder=Recorder(path), gpus_per_task=0, cpus_per_task=1,
                      max_retries=2, timeout=120)
    killer.join(timeout=5)
    assert "worker" in killed, "the hanging task was never killed"

    assert [r["status"] for r in results] == ["ok", "ok"], [r.get("message") for r in results]
    retried = results[0]
    assert retried["placement"]["backend"] == "ray" and retried["placement"]["host"]
    assert retried["placement"]["worker_pid"] != killed["worker"]       # it ran again on another worker
    records = lineage_lines(path)
    assert sorted(r["sweep_key"] for r in records) == sorted(f"ray1/{s['id']}" for s in specs)
    assert all(r["outcome"] == "ok" for r in records)

    # On a cluster without GPUs a task asking for one would wait forever: refused with a message instead.
    with pytest.raises(ray_backend.RayUnavailable, match="has no GPU"):
        run_ray(specs, None, sweep_id="ray2")


def test_an_unreachable_cluster_is_a_message(monkeypatch):
    from tritonify.kernels.sweep import ray_backend

    def refuse(**_):
        raise ConnectionError("could not connect to 10.0.0.1:6379")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", refuse)
    with pytest.raises(ray_backend.RayUnavailable, match="cannot reach the Ray cluster at '10.0.0.1:6379'"):
        run_ray([], "10.0.0.1:6379", sweep_id="x")
