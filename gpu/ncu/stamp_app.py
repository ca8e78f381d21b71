"""Run `run_cases.py` with wall-clock stamps appended to $STAMP_FILE: where a profiled run's time goes.

    STAMP_FILE=/tmp/s.txt python3 stamp_app.py --only planted_c_uncoalesced

Stamps (seconds since the epoch, one `name time` per line): `start` (the interpreter runs this
file), `torch` (torch and triton imported), `end` (at exit, after the cases ran). The caller
records when it spawned the process and when the process ended; the differences split a run
into start-up, imports, the cases and teardown (under ncu: ncu's start, the injection, the
replay passes and the report's writing).
"""
from __future__ import annotations

import atexit
import os
import runpy
import sys
import time
from pathlib import Path

STAMPS = os.environ.get("STAMP_FILE")


def stamp(name: str) -> None:
    if STAMPS:
        with open(STAMPS, "a") as f:
            f.write(f"{name} {time.time():.4f}\n")


stamp("start")
atexit.register(stamp, "end")
import torch  # noqa: E402,F401
import triton  # noqa: E402,F401

stamp("torch")
HERE = Path(__file__).resolve().parent
sys.argv = [str(HERE / "run_cases.py"), *sys.argv[1:]]
runpy.run_path(str(HERE / "run_cases.py"), run_name="__main__")
