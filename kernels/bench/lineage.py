"""Lineage: every run appended to ``candidates.jsonl``, and its promotion or rejection.

The file is append-only JSON lines, so history is never rewritten:
* a *run* record: ``{"type": "run", "id", "time", "name", "parent", "status", "target", "outcome",
  "correct", "shapes": [{"label", "shape", "correct", "ms": {impl: median}, "speedup": {baseline: x}}],
  "git": {"commit", "dirty"}, "gpu", "versions", "gpu_measurement", "summary"}``;
* a *status* record: ``{"type": "status", "id": <run id>, "status": "promoted"|"rejected", "time", "note"}``.
The current status of a run is its own, overridden by its latest status record (``view``).

Statuses: ``baseline`` (the first run of a target without a parent), ``candidate`` (later runs, until
decided), ``promoted``, ``rejected`` (set by command; an incorrect, crashed or timed-out run starts rejected).

Crash safety: each record is one ``os.write`` of a whole line to a file opened with O_APPEND, under an
exclusive ``flock``, then fsync. A write torn by a crash leaves at most one unterminated last line;
the next append starts on a fresh line and readers skip lines that are not valid JSON.
"""
from __future__ import annotations

import contextlib
import json
import os
import time
import uuid
from pathlib import Path

FILE_NAME = "candidates.jsonl"
STATUSES = ("baseline", "candidate", "promoted", "rejected")


class LineageError(ValueError):
    """A lineage command that cannot be done (unknown run, bad status); the message says why."""


def default_path(kernel_file: str | Path) -> Path:
    """``candidates.jsonl`` beside the kernel file: the history lives with the kernel it describes."""
    return Path(kernel_file).resolve().parent / FILE_NAME


@contextlib.contextmanager
def _locked(fd: int):
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: O_APPEND single writes still keep lines whole
        yield
        return
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


def append(path: Path, record: dict) -> None:
    """Append one record as one line, crash-safely (see the module docstring)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = (json.dumps(record, default=str, separators=(",", ":")) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        with _locked(fd):
            size = os.fstat(fd).st_size
            if size:
                with open(path, "rb") as f:
                    f.seek(size - 1)
                    if f.read(1) != b"\n":      # a torn last line: start ours on a fresh one
                        data = b"\n" + data
            os.write(fd, data)
            os.fsync(fd)
    finally:
        os.close(fd)


def read(path: Path) -> list[dict]:
    """Every valid record, in order; torn or foreign lines are skipped."""
    records = []
    try:
        lines = Path(path).read_bytes().splitlines()
    except FileNotFoundError:
        return []
    for raw in lines:
        try:
            rec = json.loads(raw)
        except ValueError:
            continue
        if isinstance(rec, dict) and rec.get("type") in ("run", "status"):
            records.append(rec)
    return records


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def run_record(result: dict, *, name: str | None = None, parent: str | None = None,
               git: dict | None = None, existing: list[dict] | None = None) -> dict:
    """The lineage record of one bench result (the worker's dict, or a timeout/crash dict)."""
    target = result.get("target") or ""
    outcome = result.get("status", "error")
    runs_of_target = [r for r in (existing or []) if r.get("type") == "run" and r.get("target") == target]
    if outcome != "ok":
        status = "rejected"
    elif parent is None and not runs_of_target:
        status = "baseline"
    else:
        status = "candidate"
    shapes = []
    for s in result.get("shapes", []):
        res = s.get("results", {})
        shapes.append({
            "label": s.get("label"), "shape": s.get("shape"), "dtype": s.get("dtype"),
            "correct": res.get("kernel", {}).get("correct"),
            "ms": {impl: r["timing"]["p50_ms"] for impl, r in res.items() if r.get("timing")},
            "speedup": s.get("speedup", {}),
            "pct_copy_bw": res.get("kernel", {}).get("pct_copy_bw"),
        })
    return {
        "type": "run", "id": uuid.uuid4().hex[:10], "time": _now(),
        "name": name or target, "parent": parent, "status": status, "target": target, "outcome": outcome,
        "correct": outcome == "ok" and all(s["correct"] for s in shapes) if shapes else False,
        "message": result.get("message", ""), "summary": result.get("summary", ""),
        "shapes": shapes, "git": git or {}, "gpu": result.get("gpu"), "versions": result.get("versions"),
        "gpu_measurement": result.get("gpu_measurement", False), "job": result.get("job"),
    }


def measured_nothing(result: dict) -> str | None:
    """Why a result must not be recorded, or None to record it. A run that learned nothing about the
    kernel (no GPU, a missing package, an unfinished contract, a cancel before any result) leaves no
    record: the lineage is a history of measurements, and such a record would only say "rejected"."""
    if result.get("shapes"):
        return None
    if result.get("no_gpu"):
        return "not recorded: no CUDA GPU was visible, so nothing was measured"
    if result.get("status") in ("error", "cancelled"):
        return "not recorded: the run ended before measuring the kernel"
    return None


def record_run(path: Path, result: dict, *, name: str | None = None, parent: str | None = None,
               git: dict | None = None) -> dict | None:
    """Append the run's record and return it; None (nothing written) when it measured nothing."""
    if measured_nothing(result):
        return None
    record = run_record(result, name=name, parent=parent, git=git, existing=read(path))
    append(path, record)
    return record


def view(path: Path) -> list[dict]:
    """Run records with their current status (status records folded in), oldest first."""
    runs: dict[str, dict] = {}
    for rec in read(path):
        if rec["type"] == "run":
            runs[rec["id"]] = dict(rec)
        elif rec.get("id") in runs:
            runs[rec["id"]]["status"] = rec.get("status")
            runs[rec["id"]]["status_note"] = rec.get("note")
    return list(runs.values())


def resolve(path: Path, ref: str) -> dict:
    """The run a command means: its id (or a unique id prefix), else the latest run with that name."""
    runs = view(path)
    if not runs:
        raise LineageError(f"no runs recorded in {path}")
    by_id = [r for r in runs if r["id"] == ref] or [r for r in runs if r["id"].startswith(ref)]
    if len(by_id) == 1:
        return by_id[0]
    if len(by_id) > 1:
        raise LineageError(f"{ref!r} is the start of several run ids; give more of it")
    named = [r for r in runs if r.get("name") == ref]
    if named:
        return named[-1]
    raise LineageError(f"no run with id or name {ref!r} in {path}")


def set_status(path: Path, ref: str, status: str, note: str = "") -> dict:
    """Promote or reject a run (by id or name); returns the status record appended."""
    if status not in ("promoted", "rejected"):
        raise LineageError(f"status must be promoted or rejected, not {status!r}")
    run = resolve(path, ref)
    if status == "promoted" and run.get("outcome") != "ok":
        raise LineageError(f"run {run['id']} ({run.get('name')}) was {run.get('outcome')}: an incorrect or "
                           "failed run cannot be promoted")
    record = {"type": "status", "id": run["id"], "status": status, "time": _now(), "note": note}
    append(path, record)
    return record
