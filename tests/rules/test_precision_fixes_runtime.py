"""The precision examples (examples/triton/precision_*.py) run in Triton's CPU interpreter before
and after every fix TRI002/TRI013/TRI015/TRI016/TRI017/TRI022 offers (the preferred fix of each
finding, unsafe ones included), and still compute the right thing. This is what shows that the
rewrites produce kernels that run: `tl.cast` for TRI016, `tl.rsqrt`, the sigmoid GELU, the
`input_precision=` conditional, the deleted print and the float32 dtypes.

Skipped unless torch and triton are installed. One child process, small shapes (about 10 s)."""
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
CODES = ("TRI002", "TRI013", "TRI015", "TRI016", "TRI017", "TRI022")
NAMES = ("precision_grad_norm.py", "precision_matmul.py", "precision_gelu.py", "precision_rmsprop.py")

RUN = '''
import importlib.util, json, sys
import torch
import triton

_autotune = triton.autotune


def _one_config(configs, key, **kw):
    # autotuning benchmarks through a GPU driver; the CPU interpreter gets one config
    return _autotune(configs=configs[:1], key=key, **kw)


triton.autotune = _one_config


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def measure(folder, tag):
    torch.manual_seed(0)
    out = {}
    gn = load(f"{folder}/precision_grad_norm.py", tag + "_gn")
    g = torch.randn(10000) * 0.05
    ref = g * min(1.0, 1.0 / (g.double().norm().item() + 1e-6))
    out["grad_norm"] = float((gn.clip_grad_norm_(g.clone(), max_norm=1.0, eps=1e-6, block=1024) - ref).abs().max())
    mm = load(f"{folder}/precision_matmul.py", tag + "_mm")
    a, b = torch.randn(70, 50), torch.randn(50, 40)
    out["matmul"] = float((mm.matmul(a, b) - a @ b).abs().max())
    x = torch.randn(100, 48).to(torch.bfloat16)
    out["gram"] = float((mm.gram(x) - x.float().T @ x.float()).abs().max())
    ge = load(f"{folder}/precision_gelu.py", tag + "_ge")
    xx = (torch.randn(3000) * 3).requires_grad_()
    y = ge.GELU.apply(xx)
    out["gelu"] = float((y.detach() - torch.nn.functional.gelu(xx.detach())).abs().max())
    y.sum().backward()
    xt = xx.detach().clone().requires_grad_()
    torch.nn.functional.gelu(xt).sum().backward()
    out["gelu_grad"] = float((xx.grad - xt.grad).abs().max())
    rp = load(f"{folder}/precision_rmsprop.py", tag + "_rp")
    p, g, v = torch.randn(5000), torch.randn(5000), torch.rand(5000)
    v64 = 0.99 * v.double() + 0.01 * g.double() ** 2
    ref = p.double() - 1e-2 * g.double() / (v64.sqrt() + 1e-8)  # torch.optim.RMSprop's update
    got = rp.rmsprop_step_(p.clone(), g.clone(), v.clone(), lr=1e-2, alpha=0.99, eps=1e-8)
    out["rmsprop"] = float((got.double() - ref).abs().max())
    return out


print(json.dumps({"before": measure(sys.argv[1], "before"), "after": measure(sys.argv[2], "after")}))
'''


def _fix_everything(text: str, path: str) -> tuple[str, list[str]]:
    """Apply the preferred fix of every finding of our codes until none is left (ruff's loop)."""
    settings = Settings(select=CODES)
    seen = []
    for _ in range(6):
        findings = lint_text(text, path, settings).findings
        seen.extend(f.code for f in findings)
        if not findings:
            break
        text, applied = apply_fixes(text, findings, safe_only=False)
        if not applied:
            break
    return text, seen


def _code(text: str) -> str:
    """The file without its module docstring (which describes the findings)."""
    return text.split('"""', 2)[2]


def test_examples_fire_and_run_the_same_after_the_fixes(tmp_path):
    fixed_dir = tmp_path / "fixed"
    fixed_dir.mkdir()
    fired: set[str] = set()
    for name in NAMES:
        source = (EXAMPLES / name).read_text()
        new, codes = _fix_everything(source, name)
        fired |= set(codes)
        assert new != source
        assert lint_text(new, name, Settings(select=CODES)).findings == [], name
        (fixed_dir / name).write_text(new)
    assert fired == set(CODES)
    gelu = _code((fixed_dir / "precision_gelu.py").read_text())
    assert "device_print" not in gelu and "tl.sigmoid(1.5957691" in gelu
    norm = _code((fixed_dir / "precision_grad_norm.py").read_text())
    assert "float64" not in norm
    rms = _code((fixed_dir / "precision_rmsprop.py").read_text())
    assert "tl.cast(eps, tl.float32)" in rms and "tl.cast(alpha, tl.float32)" in rms and "tl.rsqrt(v + eps)" in rms
    mm = _code((fixed_dir / "precision_matmul.py").read_text())
    assert 'acc = tl.dot(a, b, acc, input_precision="tf32")' in mm

    script = tmp_path / "run.py"
    script.write_text(RUN)
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    proc = subprocess.run([sys.executable, str(script), str(EXAMPLES), str(fixed_dir)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    before, after = result["before"], result["after"]
    for key in ("grad_norm", "matmul", "gram", "gelu_grad", "rmsprop"):
        assert before[key] < 1e-3 and after[key] < 1e-3, (key, before[key], after[key])
    assert before["gelu"] < 1e-5          # exact erf GELU
    assert 1e-5 < after["gelu"] < 5e-4    # the sigmoid form: approximate, within the stated bound
