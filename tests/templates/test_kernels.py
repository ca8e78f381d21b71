"""Runs ``kernel_checks.py`` (every template, forward and backward, against float64 autograd
references) in child pytests: on the CPU with ``TRITON_INTERPRET=1`` set before triton is imported
(one child per CPU, started in the background when the session begins: ``interpreter_run.py``), and
on a CUDA GPU (marked ``gpu``). The child is needed because the interpreter is chosen when
triton.language and each kernel are decorated, and other tests in this process import triton first."""
from __future__ import annotations

import re
import subprocess

import pytest

from tests.templates.interpreter_run import ROOT, checks_command, child_env

SHARD_LINE = re.compile(r"^check shard (\d+)/(\d+): (\d+) of (\d+) checks$", re.M)


def _run_checks(env_updates: dict[str, str], timeout: int) -> subprocess.CompletedProcess:
    return subprocess.run(checks_command(), cwd=ROOT, env=child_env(env_updates),
                          capture_output=True, text=True, timeout=timeout, check=False)


@pytest.mark.slow
@pytest.mark.timeout(660)  # the children have 600 s from here (the suite's 300 s default would stop them first)
def test_every_template_forward_and_backward_on_the_cpu_interpreter(interpreter_run):
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    shards = interpreter_run.wait(timeout=600)
    counts = []
    for shard in shards:
        where = f"shard {shard.index} of {len(shards)}:\n{shard.stdout[-6000:]}{shard.stderr[-2000:]}"
        assert shard.returncode is not None, "still running after 600 s, " + where
        assert shard.returncode == 0, where
        assert " passed" in shard.stdout and "failed" not in shard.stdout, where
        (line,) = SHARD_LINE.findall(shard.stdout)
        counts.append(tuple(int(v) for v in line))
    # the shards together ran every collected check, each in exactly one shard
    assert sorted(index for index, *_ in counts) == list(range(len(shards)))
    assert {(count, total) for _, count, _, total in counts} == {(len(shards), counts[0][3])}
    assert sum(kept for _, _, kept, _ in counts) == counts[0][3] > 0


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
