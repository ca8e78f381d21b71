"""One host: a sweep's jobs spread over its device slots, pulled from one shared queue.

Each slot has a dispatcher thread that takes the next job from the queue and runs it with the
harness's ``bench_jobs.run_job``: a child process pinned to the slot by ``CUDA_VISIBLE_DEVICES``. So each
GPU has one worker process at a time, and a fresh one per job, so that a kernel that loses its CUDA
context cannot poison the next job. A fast slot simply takes more jobs.

A *lost* worker (killed from outside by SIGKILL, SIGTERM or SIGHUP, leaving no result) is not the
kernel's outcome: its job goes back to the queue and is retried on another slot, up to
``max_attempts`` runs in all. A crash of the kernel itself (SIGSEGV, SIGABRT, an illegal address), an
error, an incorrect result or a timeout is the job's result and is not retried. Every attempt is kept
in ``result["attempts"]``; the result's ``placement`` names the slot, host and GPU of the run that
counted. Results are recorded by the caller's ``Recorder`` as they arrive, once per job key.
"""
from __future__ import annotations

import queue
import signal
import threading
import time
from collections.abc import Callable

from tritonify.kernels.bench import bench_jobs
from tritonify.kernels.sweep.devices import Slot
from tritonify.kernels.sweep.merge import Recorder, settle

LOST_SIGNALS = (signal.SIGKILL, signal.SIGTERM, signal.SIGHUP)


def is_lost(result: dict) -> bool:
    """True when the job's process was killed from outside before writing a result (a lost worker)."""
    code = result.get("returncode")
    return result.get("status") == "crashed" and isinstance(code, int) and -code in [s.value for s in LOST_SIGNALS]


class _Queue:
    """Jobs waiting to run, each with the slots where its worker was already lost (tried elsewhere first)."""

    def __init__(self, specs: list[dict]):
        self._items: queue.Queue = queue.Queue()
        for index, spec in enumerate(specs):
            self._items.put((index, spec, []))
        self.pending = len(specs)
        self._lock = threading.Lock()

    def done(self) -> None:
        with self._lock:
            self.pending -= 1

    def take(self, slot: str, live_slots: int):
        """The next job for ``slot``, or None when the sweep is over; skips a job lost on this slot while
        another slot could take it."""
        while True:
            with self._lock:
                if self.pending <= 0:
                    return None
            try:
                index, spec, attempts = self._items.get(timeout=0.05)
            except queue.Empty:
                continue
            lost_here = any(a["slot"] == slot for a in attempts)
            tried = {a["slot"] for a in attempts}
            if lost_here and len(tried) < live_slots:
                self._items.put((index, spec, attempts))
                time.sleep(0.02)
                continue
            return index, spec, attempts

    def retry(self, index: int, spec: dict, attempts: list) -> None:
        self._items.put((index, spec, attempts))


def run_pool(specs: list[dict], slots: list[Slot], *, sweep_id: str, recorder: Recorder | None = None,
             max_attempts: int = 2, runner: Callable[..., dict] = bench_jobs.run_job,
             on_result: Callable[[dict], None] | None = None, **run_options) -> list[dict]:
    """Run every spec on the slots; returns the results in the order of ``specs``.

    ``run_options`` go to ``runner`` (``timeout``, ``python``, ``cancel``, ``on_progress``, ``on_log``).
    """
    if not slots:
        raise ValueError("a sweep needs at least one slot")
    work = _Queue(list(specs))
    cancel = run_options.setdefault("cancel", threading.Event())
    results: list[dict | None] = [None] * len(specs)

    def finish(index: int, spec: dict, result: dict, slot: Slot, attempts: list) -> None:
        result["placement"] = slot.placement()
        result["attempts"] = attempts
        results[index] = settle(result, spec, sweep_id=sweep_id, recorder=recorder, on_result=on_result)
        work.done()

    def dispatch(slot: Slot) -> None:
        while not cancel.is_set():
            item = work.take(slot.label, len(slots))
            if item is None:
                return
            index, spec, attempts = item
            try:
                result = runner(spec, env=slot.env, **run_options)
            except Exception as exc:  # a dispatcher must never die holding a job: that would stall the sweep
                result = {"status": "error", "job": spec.get("id"), "target": spec.get("target"), "shapes": [],
                          "message": f"the sweep could not run this job: {type(exc).__name__}: {exc}",
                          "summary": f"error: {type(exc).__name__}"}
            attempts = attempts + [{"slot": slot.label, "status": result.get("status"),
                                    "returncode": result.get("returncode")}]
            if is_lost(result) and len(attempts) < max_attempts:
                work.retry(index, spec, attempts)
                continue
            if is_lost(result):
                result["message"] = (f"{result.get('message', '')}; the worker was lost on every attempt "
                                     f"({', '.join(a['slot'] for a in attempts)})")
            finish(index, spec, result, slot, attempts)

    threads = [threading.Thread(target=dispatch, args=(slot,), name=f"sweep-{slot.label}", daemon=True)
               for slot in slots]
    for t in threads:
        t.start()
    try:
        for t in threads:
            t.join()
    except BaseException:  # Ctrl-C / SIGTERM in the caller: kill every running job's process group, then leave
        cancel.set()
        for t in threads:
            t.join(timeout=15)
        raise
    return [r for r in results if r is not None]
