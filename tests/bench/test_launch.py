"""The contract launcher that `tritonify profile` uses when no command is given: it runs the
kernel through its contract on the CPU interpreter here (on a GPU, under ncu)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tritonify.kernels.bench.launch import largest, parse_shape, profile_command

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "bench" / "rmsnorm.py"


def test_profile_command_only_for_a_kernel_with_a_contract(tmp_path):
    argv = profile_command(str(EXAMPLE), "rmsnorm_kernel")
    assert argv == [sys.executable, "-m", "tritonify.kernels.bench.launch", f"{EXAMPLE}::rmsnorm_kernel"]
    assert profile_command(str(ROOT / "examples" / "triton" / "memory_scale.py"), "scale_kernel") is None
    assert profile_command(str(tmp_path / "missing.py"), "k") is None


def test_shapes():
    assert parse_shape("16384x4096") == (16384, 4096)
    assert largest([(2048, 4096), (16384, 4096), (4096, 8192)]) == (16384, 4096)
    for bad in ("", "0x4", "axb"):
        with pytest.raises(Exception):
            parse_shape(bad)


def _launch(*args):
    env = dict(os.environ, TRITON_INTERPRET="1")
    return subprocess.run([sys.executable, "-m", "tritonify.kernels.bench.launch", *args], capture_output=True,
                          text=True, timeout=300, env=env, check=False)


def test_launches_the_contracts_entry_on_the_interpreter():
    proc = _launch(f"{EXAMPLE}::rmsnorm_kernel", "--device", "cpu", "--shape", "8x64", "--warmup", "1")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "launched rmsnorm_kernel at 8x64 (bfloat16)" in proc.stderr


def test_a_wrong_kernel_name_is_a_clear_message():
    proc = _launch(f"{EXAMPLE}::no_such_kernel", "--device", "cpu")
    assert proc.returncode == 2 and "no contract for 'no_such_kernel'" in proc.stderr and "Traceback" not in proc.stderr
