"""A tiny Triton kernel contract for sweeps on the CPU (the bench tests' affine kernel, run interpreted).

The entry records the ``CUDA_VISIBLE_DEVICES`` its process saw (one file per process under
``SWEEP_SEEN``), and, when ``SWEEP_HANG_ONCE`` names a file that does not exist yet, writes its pid and
its parent's pid there and hangs at the shape with 3 rows, so a test can kill the worker mid-job; the
retry finds the file and runs normally.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.bench.conftest import CONTRACT_TEMPLATE, TRITON_KERNEL

ENTRY = """\
    with open(os.path.join(os.environ['SWEEP_SEEN'], str(os.getpid())), 'w') as f:
        f.write(os.environ.get('CUDA_VISIBLE_DEVICES', '<unset>'))
    marker = os.environ.get('SWEEP_HANG_ONCE')
    if marker and x.shape[0] == 3 and not os.path.exists(marker):
        with open(marker + '.tmp', 'w') as f:
            f.write(str(os.getpid()) + ' ' + str(os.getppid()))
        os.replace(marker + '.tmp', marker)
        time.sleep(120)
    return affine(x, w)"""


@pytest.fixture
def sweep_case(tmp_path):
    """(kernel file, env for its jobs, folder of seen CUDA_VISIBLE_DEVICES, hang-once marker path)."""
    folder = tmp_path / "case"
    folder.mkdir()
    kernel = folder / "affine_sweep.py"
    kernel.write_text(TRITON_KERNEL)
    (folder / "affine_sweep_contract.py").write_text(CONTRACT_TEMPLATE.format(module="affine_sweep", entry_body=ENTRY))
    seen = tmp_path / "seen"
    seen.mkdir()
    marker = tmp_path / "hang_once"
    env = {"TRITON_INTERPRET": "1", "SWEEP_SEEN": str(seen), "SWEEP_HANG_ONCE": str(marker)}
    return kernel, env, seen, marker


def wait_for_pids(marker: Path, timeout: float = 90.0) -> tuple[int, int]:
    """(pid, parent pid) the hanging job wrote, once it is there."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if marker.is_file():
            pid, ppid = marker.read_text().split()
            return int(pid), int(ppid)
        time.sleep(0.1)
    raise AssertionError(f"the job never reached its hang point ({marker})")


def kill_quietly(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def lineage_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
