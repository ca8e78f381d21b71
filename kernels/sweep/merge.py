"""Merging a sweep: one lineage record per job key, and one report for the whole sweep.

A job may run more than once (a lost worker's job is retried elsewhere; Ray retries a task whose worker
died; a sweep may be resumed). Each job therefore has an idempotency key, ``<sweep id>/<job id>``, that
travels into its lineage record (``sweep_key``). ``Recorder`` appends a record only for a key not yet in
``candidates.jsonl`` nor recorded by itself, so the first result of a job wins and a retry that also
finishes is dropped. Only the coordinating process records (workers return results, never write the
lineage), so this check needs no lock beyond the lineage's own append lock.

The records themselves are the harness's (``lineage.run_record`` / ``lineage.append``) with the
placement (host, GPU, pinning, attempts) added.
"""
from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from pathlib import Path

from tritonify.kernels.bench import lineage
from tritonify.kernels.bench.runner import KERNEL, SCHEMA, summary_line

SWEEP_SCHEMA = "tritonify.sweep/1"
_WORST_FIRST = ("crashed", "timeout", "error", "incorrect", "cancelled", "lost", "ok")


def new_sweep_id() -> str:
    return uuid.uuid4().hex[:10]


def job_key(sweep_id: str, spec: dict) -> str:
    """The idempotency key of one job of one sweep."""
    return f"{sweep_id}/{spec['id']}"


class Recorder:
    """Appends each job's lineage record once per key (see the module docstring); thread-safe."""

    def __init__(self, path: Path | None, *, name: str | None = None, parent: str | None = None,
                 git: dict | None = None, target: str | None = None):
        self.path = Path(path) if path else None
        self.target = target     # the name the lineage knows the target by (the CLI's is relative)
        self.name, self.parent, self.git = name, parent, git or {}
        self._lock = threading.Lock()
        self._seen = {r.get("sweep_key") for r in lineage.read(self.path)} - {None} if self.path else set()

    def record(self, key: str, result: dict) -> dict | None:
        """The record appended, or None when ``key`` was already recorded (a duplicate) or there is no file."""
        with self._lock:
            if key in self._seen:
                return None
            self._seen.add(key)
            if self.path is None or lineage.measured_nothing(result):
                return None
            named = {**result, "target": self.target} if self.target else result
            record = lineage.run_record(named, name=self.name, parent=self.parent, git=self.git,
                                        existing=lineage.read(self.path))
            record["sweep_key"] = key
            record["placement"] = result.get("placement")
            record["attempts"] = result.get("attempts")
            lineage.append(self.path, record)
            return record


def settle(result: dict, spec: dict, *, sweep_id: str, recorder: Recorder | None,
           on_result: Callable[[dict], None] | None) -> dict:
    """A backend's last step for each finished job: key it, record it (once per key), announce it."""
    result["sweep_key"] = job_key(sweep_id, spec)
    if recorder is not None:
        recorder.record(result["sweep_key"], result)
    if on_result is not None:
        on_result(result)
    return result


def _worst(statuses: list[str]) -> str:
    for status in _WORST_FIRST:
        if status in statuses:
            return status
    return statuses[0] if statuses else "error"


def merged_result(results: list[dict]) -> dict:
    """One result in the harness's schema for every job of a sweep over one target (shapes concatenated).

    Each shape keeps the placement that measured it; ``gpu`` is the first job's when every job ran on one
    GPU model and says "mixed" otherwise, so the header never claims one GPU for numbers from two.
    """
    if not results:
        return {"schema": SCHEMA, "status": "error", "message": "the sweep ran no job", "shapes": [], "summary": ""}
    base = next((r for r in results if r.get("shapes")), results[0])
    merged = {k: v for k, v in base.items() if k not in ("shapes", "job", "placement", "attempts", "log_tail")}
    merged["shapes"] = []
    for r in results:
        for s in r.get("shapes", []):
            merged["shapes"].append({**s, "placement": r.get("placement")})
    models = sorted({str((r.get("placement") or {}).get("gpu_model")) for r in results})
    if len(models) > 1:
        merged["gpu"] = {"name": "mixed: " + ", ".join(models), "device": "several"}
    merged["status"] = _worst([r.get("status", "error") for r in results])
    failed = [r for r in results if r.get("status") != "ok"]
    merged["message"] = "; ".join(f"job {r.get('job')}: {r.get('message') or r.get('status')}" for r in failed)
    merged["jobs"] = [{"job": r.get("job"), "status": r.get("status"), "placement": r.get("placement"),
                       "attempts": r.get("attempts")} for r in results]
    merged["sweep"] = SWEEP_SCHEMA
    timed = any(s["results"].get(KERNEL, {}).get("timing") for s in merged["shapes"])
    merged["summary"] = summary_line(merged) if merged["shapes"] and (timed or merged["status"] != "crashed") \
        else (failed[0].get("summary", "") if failed else "")
    return merged
