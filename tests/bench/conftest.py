"""Fixtures for the bench harness tests: small kernel files with contracts, written to a temp folder.

Triton kernels here run on the CPU through the interpreter: ``TRITON_INTERPRET=1`` is set (with
monkeypatch) before a kernel file is imported, and passed in the job's env to child processes.
"""
from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("triton")

# A Triton kernel, y = 2*x + w[col], one program per row; MODE picks a planted bug.
TRITON_KERNEL = '''
import torch
import triton
import triton.language as tl


@triton.jit
def affine_kernel(x_ptr, w_ptr, y_ptr, n_cols, SCALE: tl.constexpr, SKIP_LAST: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    limit = n_cols - 1 if SKIP_LAST else n_cols
    mask = cols < limit
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * n_cols + cols, x * SCALE + w, mask=mask)


def affine(x, w, scale=2.0, skip_last=False):
    y = torch.empty_like(x)
    n_rows, n_cols = x.shape
    affine_kernel[(n_rows,)](x, w, y, n_cols, SCALE=scale, SKIP_LAST=skip_last, BLOCK=triton.next_power_of_2(n_cols))
    return y
'''

CONTRACT_TEMPLATE = '''
import os
import time

import torch

from {module} import affine
from tritonify.kernels.bench import Contract


def make_inputs(shape, dtype, device):
    return torch.randn(shape, dtype=dtype, device=device), torch.randn(shape[-1], dtype=dtype, device=device)


def reference(x, w):
    return 2.0 * x + w


def entry(x, w):
{entry_body}


CONTRACT = Contract(kernel="affine_kernel", entry=entry, inputs=make_inputs, reference=reference,
                    shapes=[(4, 16), (3, 20)], dtype="float32", liger=None)
'''

ENTRIES = {
    "good": "    return affine(x, w)",
    "skip_last": "    return affine(x, w, skip_last=True)",
    "wrong": "    return affine(x, w, scale=2.1)",
    "abort": "    os.abort()",
    "hang": "    time.sleep(120)",
    "raise": "    raise RuntimeError('planted failure in the launcher')",
    "print": "    print('user output on stdout'); return affine(x, w)",
    "hang_pid": "    open(os.environ['HANG_PID_FILE'], 'w').write(str(os.getpid())); time.sleep(120)",
    "oom": "    raise torch.OutOfMemoryError('CUDA out of memory. Tried to allocate 2.00 GiB')",
}


def write_case(folder: Path, variant: str, module: str = "affine") -> Path:
    """Write ``<module>.py`` (the Triton kernel) and ``<module>_contract.py`` (entry = ENTRIES[variant])."""
    folder.mkdir(parents=True, exist_ok=True)
    kernel = folder / f"{module}.py"
    kernel.write_text(TRITON_KERNEL)
    (folder / f"{module}_contract.py").write_text(
        CONTRACT_TEMPLATE.format(module=module, entry_body=ENTRIES[variant]))
    return kernel


@pytest.fixture
def interpret(monkeypatch):
    """Triton kernels defined from now on run in the CPU interpreter."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    yield


@pytest.fixture(autouse=True)
def fresh_modules(tmp_path_factory):
    """Forget user modules a test imported from its temp folder, so the next test imports its own files."""
    base = str(tmp_path_factory.getbasetemp())
    yield
    for name, mod in list(sys.modules.items()):
        if str(getattr(mod, "__file__", None) or "").startswith(base):
            del sys.modules[name]
    sys.path[:] = [p for p in sys.path if not p.startswith(base)]


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip()
