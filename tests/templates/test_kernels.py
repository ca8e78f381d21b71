"""Runs ``kernel_checks.py`` (every template, forward and backward, against float64 autograd
references) in a child pytest: on the CPU with ``TRITON_INTERPRET=1`` set before triton is imported,
and on a CUDA GPU (marked ``gpu``). The child is needed because the interpreter is chosen when
triton.language and each kernel are decorated, and other tests in this process import triton first."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECKS = Path(__file__).with_name("kernel_checks.py")


def _run_checks(env_updates: dict[str, str], timeout: int) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "TRITONIFY_TEST_DEVICE")}
    env.update(env_updates)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(CHECKS)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False)


@pytest.mark.slow
@pytest.mark.timeout(660)  # the child has 600 s (the suite's 300 s default would stop it first)
def test_every_template_forward_and_backward_on_the_cpu_interpreter():
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    proc = _run_checks({"TRITON_INTERPRET": "1", "TRITONIFY_TEST_DEVICE": "cpu"}, timeout=600)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and "failed" not in proc.stdout


@pytest.mark.gpu
def test_every_template_forward_and_backward_on_the_gpu():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    proc = _run_checks({"TRITONIFY_TEST_DEVICE": "cuda"}, timeout=900)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and "failed" not in proc.stdout


def test_the_checks_refuse_to_run_on_the_cpu_without_the_interpreter():
    """Without the interpreter on the CPU the kernels cannot launch: say so instead of 90 tracebacks."""
    pytest.importorskip("torch")
    proc = _run_checks({"TRITONIFY_TEST_DEVICE": "cpu"}, timeout=120)
    assert proc.returncode != 0
    assert "TRITON_INTERPRET=1" in proc.stdout + proc.stderr
