"""Recording once per job key, the merged report, and ratios only between results of one GPU model."""
from __future__ import annotations

import pytest
from tritonify.kernels.bench import lineage
from tritonify.kernels.sweep import ratios
from tritonify.kernels.sweep.merge import Recorder, job_key, merged_result


def _result(job, ms, model, label="64x64", status="ok", slot="gpu0"):
    timing = {"p50_ms": ms, "gpu_measurement": True} if ms is not None else None
    return {"schema": "tritonify.bench/1", "job": job, "target": "/abs/k.py::k", "status": status, "message": "",
            "gpu": {"name": model}, "gpu_measurement": ms is not None, "contract": "k",
            "shapes": [{"label": label, "shape": [64, 64], "speedup": {},
                        "results": {"kernel": {"status": "ok", "correct": True, "timing": timing}}}],
            "placement": {"slot": slot, "host": "node-a", "gpu_model": model, "cuda_visible_devices": slot[-1]}}


def test_a_job_key_is_recorded_once_even_across_recorders(tmp_path):
    path = tmp_path / "candidates.jsonl"
    key = job_key("sweep1", {"id": "job-a"})
    first = Recorder(path, target="k.py::k")
    assert first.record(key, _result("job-a", 1.0, "H200"))["sweep_key"] == "sweep1/job-a"
    assert first.record(key, _result("job-a", 0.5, "H200")) is None          # a retry that also finished
    assert Recorder(path).record(key, _result("job-a", 0.7, "H200")) is None  # a resumed sweep
    assert Recorder(path, target="k.py::k").record(job_key("sweep1", {"id": "job-b"}), _result("job-b", 2.0, "H200")) is not None
    runs = lineage.view(path)
    assert [r["sweep_key"] for r in runs] == ["sweep1/job-a", "sweep1/job-b"]
    assert runs[0]["shapes"][0]["ms"] == {"kernel": 1.0}                       # the first result won
    assert runs[0]["target"] == "k.py::k" and runs[0]["placement"]["host"] == "node-a"
    assert runs[0]["status"] == "baseline" and runs[1]["status"] == "candidate"


def test_merged_result_keeps_each_shapes_placement_and_the_worst_status():
    a = _result("a", 1.0, "NVIDIA H200", label="1x1", slot="gpu0")
    b = _result("b", 2.0, "NVIDIA H200", label="2x2", slot="gpu1", status="incorrect")
    merged = merged_result([a, b])
    assert [s["label"] for s in merged["shapes"]] == ["1x1", "2x2"]
    assert [s["placement"]["slot"] for s in merged["shapes"]] == ["gpu0", "gpu1"]
    assert merged["status"] == "incorrect" and "job b" in merged["message"]
    assert merged["gpu"]["name"] == "NVIDIA H200"
    mixed = merged_result([a, _result("c", 1.0, "NVIDIA H100", label="3x3")])
    assert mixed["gpu"]["name"] == "mixed: NVIDIA H100, NVIDIA H200" and mixed["status"] == "ok"
    assert merged_result([])["status"] == "error"


def test_ratios_only_between_results_of_one_gpu_model():
    ref = _result("ref", 2.0, "NVIDIA H200")
    same = _result("fast", 1.0, "NVIDIA H200", slot="gpu1")
    other = _result("other", 0.5, "NVIDIA H100 80GB HBM3")
    assert ratios.speedup(same, ref, "64x64") == pytest.approx(2.0)
    with pytest.raises(ratios.MixedGpuError, match="other ran on NVIDIA H100 80GB HBM3, ref on NVIDIA H200"):
        ratios.speedup(other, ref, "64x64")
    rows = ratios.compare([ref, same, other], ref)
    assert [(r["job"], r["speedup"]) for r in rows] == [("fast", pytest.approx(2.0)), ("other", None)]
    assert "not compared" in rows[1]["refused"] and "refused" not in rows[0]
    untimed = _result("untimed", None, "NVIDIA H200")
    assert ratios.speedup(untimed, ref, "64x64") is None


def test_the_gpu_model_comes_from_the_child_then_the_slot_and_cpu_runs_are_their_own_model():
    r = _result("a", 1.0, None)
    assert ratios.gpu_model(r) == ratios.CPU
    r["placement"]["gpu_model"] = "NVIDIA H200"
    assert ratios.gpu_model(r) == "NVIDIA H200"
    with pytest.raises(ratios.MixedGpuError):
        ratios.speedup(_result("cpu", 1.0, None), _result("gpu", 1.0, "NVIDIA H200"), "64x64")
