"""Where the time of a lint while typing goes: timestamped events of the server and its lint
workers, for the latency benchmark (benchmarks/server_latency_realworld.py --trace).

Off unless the environment variable TRITONIFY_LATENCY_TRACE names a file (the lint workers
inherit it); then each process appends one JSON line per event to that file:
`{"t": <time.monotonic()>, "pid": ..., "ev": <name>, ...fields}`. `time.monotonic` is the
system's monotonic clock, the same in every process of the machine, so the events of the server
and of its workers can be put in one order. Garbage-collector passes are events too
("gc", with the generation and how long the pass took), so a pause of the collector shows
where it falls.
"""
from __future__ import annotations

import gc
import json
import os
import time

ENV = "TRITONIFY_LATENCY_TRACE"
_path = os.environ.get(ENV) or None
_file = None
_gc_started: float | None = None


def enabled() -> bool:
    return _path is not None


def event(name: str, **fields) -> None:
    """Record event `name` now (nothing when tracing is off; a trace that cannot be written is dropped)."""
    global _file, _path
    if _path is None:
        return
    try:
        if _file is None:
            _file = open(_path, "a", encoding="utf-8", buffering=1)   # noqa: SIM115 - kept open for the process
            if _gc_trace not in gc.callbacks:
                gc.callbacks.append(_gc_trace)
        _file.write(json.dumps({"t": time.monotonic(), "pid": os.getpid(), "ev": name, **fields}) + "\n")
    except (OSError, TypeError, ValueError):
        _path = None


def _gc_trace(phase: str, info: dict) -> None:
    global _gc_started
    if phase == "start":
        _gc_started = time.monotonic()
    elif _gc_started is not None:
        took = time.monotonic() - _gc_started
        _gc_started = None
        if took >= 0.002:   # the many short passes of generation 0 would drown the rest
            event("gc", generation=info.get("generation"), ms=round(took * 1000, 1), collected=info.get("collected"),
                  frozen=gc.get_freeze_count())
