"""candidates.jsonl: append-only, crash-safe, statuses, promote/reject."""
from __future__ import annotations

import json
import multiprocessing

import pytest
from tritonify.kernels.bench import lineage


def _result(status="ok", target="k.py::k", ms=1.0, speed=2.0):
    return {"target": target, "status": status, "summary": "s", "gpu": {"name": "G"}, "versions": {"torch": "x"},
            "shapes": [{"label": "4x4", "shape": [4, 4], "dtype": "float32", "speedup": {"eager": speed},
                        "results": {"kernel": {"correct": status == "ok", "timing": {"p50_ms": ms}},
                                    "eager": {"correct": True, "timing": {"p50_ms": ms * speed}}}}]}


def test_first_run_is_baseline_then_candidates(tmp_path):
    path = tmp_path / "candidates.jsonl"
    a = lineage.record_run(path, _result(), git={"commit": "abc", "dirty": True})
    b = lineage.record_run(path, _result(ms=0.5), name="v2", parent=a["id"])
    assert a["status"] == "baseline" and b["status"] == "candidate"
    runs = lineage.view(path)
    assert [r["id"] for r in runs] == [a["id"], b["id"]]
    assert runs[1]["shapes"][0]["ms"] == {"kernel": 0.5, "eager": 1.0}
    assert runs[1]["shapes"][0]["speedup"] == {"eager": 2.0}
    assert runs[0]["git"] == {"commit": "abc", "dirty": True} and runs[1]["parent"] == a["id"]


def test_failed_runs_start_rejected_and_cannot_be_promoted(tmp_path):
    path = tmp_path / "candidates.jsonl"
    bad = lineage.record_run(path, _result(status="incorrect"))
    crashed = lineage.record_run(path, {"target": "k.py::k", "status": "crashed", "shapes": []})
    assert bad["status"] == "rejected" and not bad["correct"]
    assert crashed["status"] == "rejected" and crashed["outcome"] == "crashed"
    with pytest.raises(lineage.LineageError, match="cannot be promoted"):
        lineage.set_status(path, bad["id"], "promoted")


def test_promote_and_reject_by_id_prefix_and_name(tmp_path):
    path = tmp_path / "candidates.jsonl"
    a = lineage.record_run(path, _result())
    b = lineage.record_run(path, _result(), name="fast")
    lineage.set_status(path, a["id"][:6], "rejected", note="slower")
    lineage.set_status(path, "fast", "promoted")
    status = {r["id"]: (r["status"], r.get("status_note")) for r in lineage.view(path)}
    assert status == {a["id"]: ("rejected", "slower"), b["id"]: ("promoted", "")}
    with pytest.raises(lineage.LineageError, match="no run with id or name"):
        lineage.set_status(path, "zzz", "promoted")
    with pytest.raises(lineage.LineageError, match="promoted or rejected"):
        lineage.set_status(path, "fast", "baseline")


def test_a_torn_last_line_is_skipped_and_the_next_append_starts_clean(tmp_path):
    path = tmp_path / "candidates.jsonl"
    first = lineage.record_run(path, _result())
    with open(path, "ab") as f:                    # a crash mid-write: half a record, no newline
        f.write(b'{"type": "run", "id": "torn", "sha')
    second = lineage.record_run(path, _result())
    assert [r["id"] for r in lineage.view(path)] == [first["id"], second["id"]]
    lines = path.read_bytes().splitlines()
    assert len(lines) == 3 and json.loads(lines[2])["id"] == second["id"]


def _append_many(path, n):
    for i in range(n):
        lineage.append(path, {"type": "run", "id": f"p{i}", "name": "x" * 2000})


def test_concurrent_appends_keep_every_line_whole(tmp_path):
    path = tmp_path / "candidates.jsonl"
    procs = [multiprocessing.get_context("fork").Process(target=_append_many, args=(path, 25)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    lines = path.read_bytes().splitlines()
    assert len(lines) == 100 and all(json.loads(line)["name"] == "x" * 2000 for line in lines)


def test_read_missing_file_and_foreign_lines(tmp_path):
    assert lineage.read(tmp_path / "none.jsonl") == []
    path = tmp_path / "c.jsonl"
    path.write_text('[1, 2]\n{"type": "other"}\nnot json\n')
    assert lineage.read(path) == []


def test_a_run_that_measured_nothing_leaves_no_record(tmp_path):
    path = tmp_path / "candidates.jsonl"
    no_gpu = {"target": "k.py::k", "status": "error", "no_gpu": True, "shapes": [], "message": "no CUDA GPU"}
    for result in (no_gpu, {"target": "k.py::k", "status": "error", "shapes": []},
                   {"target": "k.py::k", "status": "cancelled", "shapes": []}):
        assert lineage.measured_nothing(result).startswith("not recorded")
        assert lineage.record_run(path, result) is None
    assert not path.exists()
    assert "no CUDA GPU" in lineage.measured_nothing(no_gpu)
    # a crash or an incorrect result is a finding about the kernel: recorded (rejected)
    assert lineage.measured_nothing({"status": "crashed", "shapes": []}) is None
    assert lineage.record_run(path, _result(status="incorrect"))["status"] == "rejected"
