"""TRI009's premise and its fix, run in Triton's CPU interpreter in a child process: the unshifted
softmax turns large logits into nan, and the rewritten kernel (axis=1 with keep_dims) matches
torch.softmax. Skipped unless torch and triton are installed."""
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
import torch
import triton
import triton.language as tl


@triton.jit
def tile_softmax(x_ptr, y_ptr, n_rows, n_cols, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.arange(0, BLOCK_C)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=float("-inf"))
    e = tl.exp(x)
    tl.store(y_ptr + rows[:, None] * n_cols + cols[None, :], e / tl.sum(e, axis=1)[:, None], mask=mask)
'''

RUN = '''

import json
torch.manual_seed(0)
x = torch.randn(6, 10) * 60.0      # logits well past 88
out = {}
for name, kernel in (("before", tile_softmax), ("after", tile_softmax_fixed)):
    y = torch.empty_like(x)
    kernel[(3,)](x, y, 6, 10, BLOCK_R=2, BLOCK_C=16)
    out[name] = {"nan": bool(torch.isnan(y).any()), "err": float((y - torch.softmax(x, 1)).abs().max())}
print(json.dumps(out))
'''


def _run(before: str, after: str, tmp_path) -> dict:
    """Both kernels in one child process (one interpreter start-up)."""
    script = tmp_path / "softmax_run.py"
    script.write_text(before + after.replace("def tile_softmax(", "def tile_softmax_fixed(") + RUN)
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    proc = subprocess.run([sys.executable, str(script)], check=False, capture_output=True, text=True, env=env, timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_unshifted_softmax_overflows_and_the_fix_matches_torch(tmp_path):
    (finding,) = lint(KERNEL, "TRI009")
    repaired = fixed(KERNEL, finding, 0)
    assert "tl.exp(x - tl.max(x, axis=1, keep_dims=True))" in repaired
    result = _run(textwrap.dedent(KERNEL), repaired, tmp_path)
    assert result["before"]["nan"] is True
    assert result["after"]["nan"] is False and result["after"]["err"] < 1e-6
