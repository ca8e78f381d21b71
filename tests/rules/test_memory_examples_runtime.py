"""The memory examples (examples/triton/memory_*.py) run in Triton's CPU interpreter before and
after Tritonify's own fixes, in one child process: each finding is a real failure (a compile
error, a wrong result, a write past the end of the output) and the fixed file is right.
TRI005 and TRI006 are not here: the interpreter accepts small dots, and an int32 overflow needs
a tensor of more than 2**31 elements. Skipped unless torch and triton are installed."""
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tritonify.diagnostics.engine import lint_text
from tests.lintutil import apply_fixes
from tritonify.diagnostics.settings import Settings

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None or importlib.util.find_spec("triton") is None,
    reason="needs torch and triton (CPU interpreter)",
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "triton"

# example -> (codes whose fixes are applied, apply unsafe fixes too)
FIXED = {
    "memory_softmax.py": ("TRI007,TRI014", False),
    "memory_scale.py": ("TRI019", False),
    "memory_rms_norm.py": ("TRI004,TRI006,TRI014", True),
    "memory_vector_add.py": ("TRI007", True),
}

DRIVER = r'''
import importlib.util, json, sys
import torch

def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod

def attempt(fn):
    try:
        return fn()
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {str(exc)[-200:]}"}

def softmax(m):
    torch.manual_seed(0)
    x = torch.randn(8, 1000) - 5.0          # negative logits: a 0 in a padded lane is not neutral
    big = torch.zeros(8 * 1000 + 1024)     # room past the output to catch a stray store
    out = big[:8000].view(8, 1000)
    m.softmax_kernel[(8,)](out, x, x.stride(0), out.stride(0), 1000, BLOCK_SIZE=1024)
    return {"err": float((out - torch.softmax(x, 1)).abs().max()), "wrote_past_end": bool(big[8000:].abs().sum() > 0)}

def scale(m):
    t = torch.randn(5000)
    return {"err": float((m.scale(t, 0.5) - t * 0.5).abs().max())}

def rms_norm(m):
    torch.manual_seed(0)
    x, w = torch.randn(4, 1000), torch.rand(1000)
    ref = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    return {"err": float((m.rms_norm(x, w) - ref).abs().max())}

def vector_add(m):
    n, pad = 98_000, 1024
    a, b = torch.rand(n + pad), torch.rand(n + pad)
    out = torch.full((n + pad,), -1.0)
    grid = (triton_cdiv(n, 1024),)
    m.add_kernel[grid](a, b, out, n, BLOCK_SIZE=1024)
    return {"err": float((out[:n] - (a[:n] + b[:n])).abs().max()), "wrote_past_end": bool((out[n:] != -1.0).any())}

def triton_cdiv(a, b):
    return (a + b - 1) // b

checks = {"memory_softmax.py": softmax, "memory_scale.py": scale, "memory_rms_norm.py": rms_norm,
          "memory_vector_add.py": vector_add}
result = {}
for name, before, after in json.loads(sys.argv[1]):
    result[name] = {
        "before": attempt(lambda: checks[name](load(before, "before_" + name[:-3]))),
        "after": attempt(lambda: checks[name](load(after, "after_" + name[:-3]))),
    }
print(json.dumps(result))
'''


def _fixed(path: Path, codes: str, unsafe: bool) -> tuple[str, int]:
    text = path.read_text()
    findings = lint_text(text, str(path), Settings(select=tuple(codes.split(",")))).findings
    return apply_fixes(text, findings, safe_only=not unsafe)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("memory")
    jobs = []
    for name, (codes, unsafe) in FIXED.items():
        out, applied = _fixed(EXAMPLES / name, codes, unsafe)
        assert applied, f"no fix applied to {name}"
        target = tmp / f"fixed_{name}"
        target.write_text(out)
        jobs.append((name, str(EXAMPLES / name), str(target)))
    driver = tmp / "driver.py"
    driver.write_text(DRIVER)
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    proc = subprocess.run([sys.executable, str(driver), json.dumps(jobs)], capture_output=True, text=True,
                          env=env, timeout=300, cwd=tmp, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_fixed_examples_are_quiet():
    for name, (codes, unsafe) in FIXED.items():
        out, _ = _fixed(EXAMPLES / name, codes, unsafe)
        assert lint_text(out, name, Settings(select=tuple(codes.split(",")))).findings == [], name


def test_softmax_without_other_and_store_mask_is_wrong_and_the_safe_fixes_repair_it(runs):
    before, after = runs["memory_softmax.py"]["before"], runs["memory_softmax.py"]["after"]
    assert before["err"] > 1e-3 and before["wrote_past_end"]
    assert after["err"] < 1e-6 and not after["wrote_past_end"]


def test_missing_constexpr_does_not_compile_and_the_fix_does(runs):
    before, after = runs["memory_scale.py"]["before"], runs["memory_scale.py"]["after"]
    assert "arange's arguments must be of type tl.constexpr" in before["error"]
    assert after["err"] == 0.0


def test_hidden_size_as_block_does_not_compile_and_next_power_of_2_does(runs):
    before, after = runs["memory_rms_norm.py"]["before"], runs["memory_rms_norm.py"]["after"]
    assert "arange's range must be a power of 2" in before["error"]
    assert after["err"] < 1e-4


def test_unmasked_vector_add_writes_past_the_end_and_the_mask_stops_it(runs):
    before, after = runs["memory_vector_add.py"]["before"], runs["memory_vector_add.py"]["after"]
    assert before["wrote_past_end"]
    assert after["err"] == 0.0 and not after["wrote_past_end"]
