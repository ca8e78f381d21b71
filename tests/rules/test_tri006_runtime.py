"""TRI006's premise for loop variables and loaded indices, and its fixes, checked by running
Triton's CPU interpreter in a child process.

The kernels store the addresses they compute instead of dereferencing them, so no tensor of
2**31 elements is needed: a stride of 2**30 times row 2 shows whether the offset wrapped. Skipped unless torch
and triton are installed. Takes a few seconds."""
import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest
from tests.lintutil import apply_fixes

from tests.lintutil import lint

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None or importlib.util.find_spec("triton") is None,
    reason="needs torch and triton (CPU interpreter)",
)

KERNELS = '''
import torch
import triton
import triton.language as tl


@triton.jit
def loop_offsets(base_ptr, out_ptr, stride, n_rows):
    for row in range(tl.program_id(0), n_rows, tl.num_programs(0)):
        # a one-wide tile: a one-element access by the loop index would be taken for a per-row vector
        address = base_ptr + row * stride + tl.arange(0, 1)
        tl.load(address, mask=row < 0)  # an address the linter sees; masked off, never read
        tl.store(out_ptr + row + tl.arange(0, 1), address.to(tl.int64))


@triton.jit
def gather_offsets(idx_ptr, base_ptr, out_ptr, stride_row):
    i = tl.program_id(0)
    idx = tl.load(idx_ptr + i)
    address = base_ptr + idx * stride_row
    tl.load(address, mask=i < 0)
    tl.store(out_ptr + i, address.to(tl.int64))
'''

RUN = '''

import json
stride = 2**30
base = torch.zeros(1, dtype=torch.int8)  # one-byte elements: an address difference is the offset
out = {}
loop = torch.zeros(3, dtype=torch.int64)
loop_offsets[(1,)](base, loop, stride, 3)
out["loop"] = [a - base.data_ptr() for a in loop.tolist()]
for dtype in (torch.int32, torch.int64):
    gathered = torch.zeros(3, dtype=torch.int64)
    gather_offsets[(3,)](torch.tensor([0, 1, 2], dtype=dtype), base, gathered, stride)
    out[str(dtype)] = [a - base.data_ptr() for a in gathered.tolist()]
print(json.dumps(out))
'''


def _run(source: str, tmp_path) -> dict:
    script = tmp_path / "kernel_run.py"
    script.write_text(source + RUN)
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    proc = subprocess.run([sys.executable, str(script)], check=False, capture_output=True, text=True, env=env, timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_int32_loop_variable_and_loaded_index_wrap_and_the_fixes_repair_both(tmp_path):
    source = textwrap.dedent(KERNELS)
    findings = lint(source, "TRI006")
    assert [f.message.split("`")[1] for f in findings] == ["row * stride", "idx * stride_row"]
    repaired, _ = apply_fixes(source, findings)
    assert "tl.cast(row, tl.int64) * stride" in repaired and "idx.to(tl.int64) * stride_row" in repaired
    assert lint(repaired, "TRI006") == []

    wrapped = [0, 2**30, -(2**31)]  # row 2 * 2**30 = 2**31 wraps in int32
    exact = [0, 2**30, 2**31]
    before = _run(source, tmp_path)
    assert before == {"loop": wrapped, "torch.int32": wrapped, "torch.int64": exact}  # int64 indices are fine
    after = _run(repaired, tmp_path)
    assert after == {"loop": exact, "torch.int32": exact, "torch.int64": exact}
