"""The one-host pool's scheduling with a stand-in runner (no child processes): fast and exact."""
from __future__ import annotations

import threading

from tritonify.kernels.bench import bench_jobs
from tritonify.kernels.sweep.devices import cpu_slots
from tritonify.kernels.sweep.merge import Recorder
from tritonify.kernels.sweep.pool import is_lost, run_pool


def _ok(spec, env):
    return {"status": "ok", "job": spec["id"], "target": spec["target"], "shapes": [], "env_seen": dict(env)}


def _killed(spec, signal_number):
    return {"status": "crashed", "job": spec["id"], "target": spec["target"], "shapes": [], "returncode": -signal_number,
            "message": "killed"}


def test_is_lost_only_for_kills_from_outside():
    assert is_lost({"status": "crashed", "returncode": -9}) and is_lost({"status": "crashed", "returncode": -15})
    assert not is_lost({"status": "crashed", "returncode": -11})      # SIGSEGV: the kernel's own crash
    assert not is_lost({"status": "crashed", "returncode": 1})
    assert not is_lost({"status": "timeout"})


def test_every_job_runs_once_pinned_and_is_recorded_once(tmp_path):
    specs = bench_jobs.expand_sweep(["/k.py::k"], shapes=[(i, 8) for i in range(1, 9)], timer="none")
    lock, calls = threading.Lock(), []

    def runner(spec, env, **_):
        with lock:
            calls.append((spec["id"], env["CUDA_VISIBLE_DEVICES"]))
        return _ok(spec, env)

    path = tmp_path / "candidates.jsonl"
    results = run_pool(specs, cpu_slots(2), sweep_id="s1", recorder=Recorder(path), runner=runner)
    assert [r["job"] for r in results] == [s["id"] for s in specs]
    assert sorted(c[0] for c in calls) == sorted(s["id"] for s in specs)
    for r in results:
        assert r["env_seen"]["CUDA_VISIBLE_DEVICES"] == r["placement"]["cuda_visible_devices"]
        assert r["sweep_key"] == f"s1/{r['job']}" and len(r["attempts"]) == 1
    assert len(path.read_text().splitlines()) == 8


def test_a_lost_worker_is_retried_on_the_other_slot_a_kernel_crash_is_not(tmp_path):
    specs = bench_jobs.expand_sweep(["/k.py::k"], shapes=[(1, 8), (2, 8), (3, 8)], timer="none")
    lost_id, segv_id = specs[0]["id"], specs[1]["id"]
    runs = []

    def runner(spec, env, **_):
        runs.append((spec["id"], env["CUDA_VISIBLE_DEVICES"]))
        if spec["id"] == lost_id and len([r for r in runs if r[0] == lost_id]) == 1:
            return _killed(spec, 9)
        if spec["id"] == segv_id:
            return _killed(spec, 11)
        return _ok(spec, env)

    path = tmp_path / "candidates.jsonl"
    results = {r["job"]: r for r in run_pool(specs, cpu_slots(2), sweep_id="s", recorder=Recorder(path),
                                             runner=runner)}
    lost = results[lost_id]
    assert lost["status"] == "ok"
    assert [a["status"] for a in lost["attempts"]] == ["crashed", "ok"]
    assert lost["attempts"][0]["slot"] != lost["attempts"][1]["slot"] == lost["placement"]["slot"]
    assert results[segv_id]["status"] == "crashed" and len(results[segv_id]["attempts"]) == 1
    keys = [r["sweep_key"] for r in lineage_records(path)]
    assert sorted(keys) == sorted(f"s/{s['id']}" for s in specs)


def test_a_job_lost_on_every_attempt_ends_with_a_message_and_one_record(tmp_path):
    spec = bench_jobs.job_spec("/k.py::k", timer="none")
    path = tmp_path / "candidates.jsonl"
    results = run_pool([spec], cpu_slots(2), sweep_id="s", recorder=Recorder(path), max_attempts=2,
                       runner=lambda spec, env, **_: _killed(spec, 9))
    assert results[0]["status"] == "crashed" and "lost on every attempt (cpu" in results[0]["message"]
    assert {a["slot"] for a in results[0]["attempts"]} == {"cpu0", "cpu1"}
    assert [r["outcome"] for r in lineage_records(path)] == ["crashed"]


def test_a_runner_exception_becomes_an_error_result_not_a_stalled_sweep():
    def runner(spec, env, **_):
        raise OSError("no such interpreter")

    results = run_pool([bench_jobs.job_spec("/k.py::k")], cpu_slots(1), sweep_id="s", runner=runner)
    assert results[0]["status"] == "error" and "OSError: no such interpreter" in results[0]["message"]


def lineage_records(path):
    from tritonify.kernels.bench import lineage

    return lineage.read(path)
