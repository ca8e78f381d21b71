"""benchmarks/freshcode/ground_truth.py --union: a second device call merged into the ground truth."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "freshcode" / "ground_truth.py"
ENV = {"triton": "3.6.0", "torch": "2.11.0+cu130", "python": "3.12.3", "gpu": "NVIDIA H200"}


def _built(tmp: Path, ids: list[str]) -> Path:
    built = tmp / "built"
    (built / "programs").mkdir(parents=True)
    for i in ids:
        (built / "programs" / f"{i}.py").write_text("import triton\n")
    manifest = {"programs": [{"id": i, "operator": f"op_{i}.py", "sources": [f"m.jsonl:{n}"]}
                             for n, i in enumerate(ids)]}
    (built / "manifest.json").write_text(json.dumps(manifest))
    return built


def _runs(path: Path, env: dict, records: list[dict], candidates: int) -> Path:
    header = {"environment": env, "candidates": candidates, "workers": 14, "timeout_s": 15.0}
    path.write_text("\n".join(json.dumps(r) for r in [header, *records]) + "\n")
    return path


def _ground_truth(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def test_a_second_call_is_merged_as_the_union_with_both_headers(tmp_path):
    built = _built(tmp_path, ["a1", "b2", "c3"])
    first = _runs(tmp_path / "r1.jsonl", ENV, [{"id": "a1", "status": "passed"}], 3)
    earlier = tmp_path / "gt1.json"
    assert _ground_truth(first, built, earlier).returncode == 0
    second = _runs(tmp_path / "r2.jsonl", ENV, [{"id": "b2", "status": "timeout"},
                                                {"id": "a1", "status": "timeout"}], 2)
    out = tmp_path / "gt.json"
    done = _ground_truth(second, built, out, "--union", earlier)
    assert done.returncode == 0, done.stderr
    truth = json.loads(out.read_text())
    # a program in both calls keeps the earlier record
    assert [(p["id"], p["outcome"]) for p in truth["programs"]] == [("a1", "passed"), ("b2", "timeout")]
    assert truth["run"]["programs_run"] == 2 and truth["run"]["device_calls"] == 2
    assert [r["programs_run"] for r in truth["runs"]] == [1, 1]
    assert [r["candidates"] for r in truth["runs"]] == [3, 2]


def test_a_union_across_environments_is_refused(tmp_path):
    built = _built(tmp_path, ["a1", "b2"])
    earlier = tmp_path / "gt1.json"
    _ground_truth(_runs(tmp_path / "r1.jsonl", ENV, [{"id": "a1", "status": "passed"}], 2), built, earlier)
    other = {**ENV, "triton": "3.9.0"}
    done = _ground_truth(_runs(tmp_path / "r2.jsonl", other, [{"id": "b2", "status": "passed"}], 1),
                         built, tmp_path / "gt.json", "--union", earlier)
    assert done.returncode != 0 and "one environment" in done.stderr
    assert not (tmp_path / "gt.json").exists()
