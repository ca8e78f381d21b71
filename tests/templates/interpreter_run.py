"""The CPU-interpreter run of ``kernel_checks.py``: child pytests (``TRITON_INTERPRET=1`` set before
triton is imported), one per CPU up to four, each running every n-th check (``check_shards.py``).

``tests/templates/conftest.py`` starts them as soon as collection shows that the session will run
``test_every_template_forward_and_backward_on_the_cpu_interpreter``, at the lowest CPU priority
(nice 19), so they use what the rest of the suite leaves idle (it mostly waits on servers and child
processes) and take almost nothing from a test that measures time. When that test is reached it
waits for them, first raising them back to the suite's own priority where the system allows it
(root or CAP_SYS_NICE; elsewhere they run on at nice 19, which costs nothing when nothing else
runs). While a test marked ``e2e`` runs (a real editor, its typing latency measured) they are stopped
(SIGSTOP, SIGCONT after it), so that no background work shares the CPUs with it. Each child writes
its output to a file, so none can block on a full pipe."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHECKS = Path(__file__).with_name("kernel_checks.py")
TEST_NAME = "test_every_template_forward_and_backward_on_the_cpu_interpreter"
BACKGROUND_NICE = 19
MAX_SHARDS = 4


def child_env(env_updates: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "TRITONIFY_TEST_DEVICE")}
    env.update(env_updates)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


def checks_command(*extra: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra, str(CHECKS)]


def shard_count() -> int:
    return max(1, min(MAX_SHARDS, len(os.sched_getaffinity(0))))


@dataclass
class ShardResult:
    index: int
    returncode: int | None   # None: still running at the deadline (then killed)
    stdout: str
    stderr: str


class InterpreterRun:
    """The shards of one interpreter run, started at once in the background."""

    def __init__(self, shards: int | None = None) -> None:
        self.shards = shards or shard_count()
        self.folder = Path(tempfile.mkdtemp(prefix="tritonify-interpreter-checks-"))
        # torch's intra-op threads, split between the shards instead of each shard taking every CPU
        threads = str(max(1, len(os.sched_getaffinity(0)) // self.shards))
        self.procs: list[subprocess.Popen] = []
        for index in range(self.shards):
            env = child_env({"TRITON_INTERPRET": "1", "TRITONIFY_TEST_DEVICE": "cpu",
                             "TRITONIFY_CHECK_SHARD": f"{index}/{self.shards}"})
            env.setdefault("OMP_NUM_THREADS", threads)
            with open(self.folder / f"{index}.out", "wb") as out, open(self.folder / f"{index}.err", "wb") as err:
                # nice(1) execs the child, so the pid is the child's own
                self.procs.append(subprocess.Popen(
                    ["nice", "-n", str(BACKGROUND_NICE), *checks_command("-p", "tests.templates.check_shards")],
                    cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err))

    def _raise_priority(self) -> None:
        """Back to this process's niceness, every thread of every shard (Linux sets it per thread)."""
        target = os.getpriority(os.PRIO_PROCESS, 0)
        for proc in self.procs:
            for task in Path(f"/proc/{proc.pid}/task").glob("*"):
                try:
                    os.setpriority(os.PRIO_PROCESS, int(task.name), target)
                except (PermissionError, ProcessLookupError, OSError):
                    pass

    def _signal(self, sig: int) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                try:
                    os.kill(proc.pid, sig)
                except ProcessLookupError:
                    pass

    def pause(self) -> None:
        self._signal(signal.SIGSTOP)

    def resume(self) -> None:
        self._signal(signal.SIGCONT)

    def wait(self, timeout: float) -> list[ShardResult]:
        """Every shard's outcome, waiting at most `timeout` seconds from now; a shard still running
        then is killed and reported with returncode None."""
        self.resume()
        self._raise_priority()
        deadline = time.monotonic() + timeout
        codes: list[int | None] = []
        for proc in self.procs:
            try:
                codes.append(proc.wait(timeout=max(0.0, deadline - time.monotonic())))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                codes.append(None)
        return [ShardResult(i, code, self._read(f"{i}.out"), self._read(f"{i}.err")) for i, code in enumerate(codes)]

    def _read(self, name: str) -> str:
        return (self.folder / name).read_text(errors="replace")

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        shutil.rmtree(self.folder, ignore_errors=True)
