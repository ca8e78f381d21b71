"""A compile still running when the language server shuts down is killed, not left to its timeout."""
from __future__ import annotations

import sys
import threading
import time


from tritonify.tools.compile.runner import WorkerError, run_worker, stop_all_workers


def test_stop_all_workers_kills_a_running_compile(tmp_path):
    slow = tmp_path / "slow_python"
    slow.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(60)\n")
    slow.chmod(0o755)
    outcome = {}

    def compile_in_background():
        start = time.monotonic()
        try:
            run_worker("x = 1\n", str(tmp_path / "k.py"), {}, python=str(slow), timeout=60)
        except WorkerError as exc:
            outcome["error"] = str(exc)
        outcome["seconds"] = time.monotonic() - start

    thread = threading.Thread(target=compile_in_background)
    thread.start()
    deadline = time.monotonic() + 10
    killed = 0
    while not killed and time.monotonic() < deadline:   # wait until the worker has started
        time.sleep(0.1)
        killed = stop_all_workers()
    thread.join(15)
    assert killed == 1 and not thread.is_alive()
    assert outcome["seconds"] < 15 and "no result" in outcome["error"]


def test_nothing_to_stop_is_fine():
    assert stop_all_workers() == 0
