"""TRI012's premise and its safe fix, checked by running Triton's CPU interpreter in a child process.

Skipped unless torch and triton are installed. Takes a few seconds."""
import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.lintutil import fixed, lint

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None or importlib.util.find_spec("triton") is None,
    reason="needs torch and triton (CPU interpreter)",
)

KERNEL = '''
import time
import torch
import triton
import triton.language as tl


def cpu_bench(fn, quantiles=None):
    times = []
    for _ in range(3):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return [min(times)] * (len(quantiles) if quantiles else 1)


@triton.autotune(
    configs=[triton.Config({"BLOCK": b}) for b in (32, 64, 128, 256)],
    key=["n"],
    do_bench=cpu_bench,
)
@triton.jit
def vector_sum(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(y_ptr, tl.sum(x, axis=0))
'''

RUN = '''

import json
torch.manual_seed(0)
x = torch.rand(120)
out = {"expected": x.sum().item()}
for name, kernel in (("before", vector_sum), ("after", vector_sum_fixed)):
    calls = []
    for _ in range(2):
        y = torch.zeros(1)
        kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, y, x.numel())
        calls.append(y.item())
    out[name] = calls
print(json.dumps(out))
'''


def _run(before: str, after: str, tmp_path) -> dict:
    """Both kernels in one child process (one interpreter start-up)."""
    script = tmp_path / "kernel_run.py"
    script.write_text(before + after.replace("def vector_sum(", "def vector_sum_fixed(") + RUN)
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    proc = subprocess.run([sys.executable, str(script)], check=False, capture_output=True, text=True, env=env, timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_autotuned_atomic_add_is_wrong_on_first_call_and_the_safe_fix_repairs_it(tmp_path):
    (finding,) = lint(KERNEL, "TRI012")
    repaired = fixed(KERNEL, finding, 0)
    assert 'restore_value=["y_ptr"]' in repaired
    result = _run(textwrap.dedent(KERNEL), repaired, tmp_path)
    expected = result["expected"]
    assert result["before"][0] == pytest.approx(13 * expected, rel=1e-4)  # 4 configs x 3 runs + the launch
    assert result["before"][1] == pytest.approx(expected, rel=1e-5)
    assert result["after"] == pytest.approx([expected] * 2, rel=1e-5)
