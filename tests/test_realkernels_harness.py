"""The real-kernel harness (benchmarks/realkernels): fixes applied to copies of pinned code, the vLLM
file loaded alone with its line numbers kept, errors against float64. CPU only; the Triton kernel
runs under TRITON_INTERPRET=1."""
from __future__ import annotations

import importlib.util
import os
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.realkernels import case  # noqa: E402


def _module(tmp_path, name, text):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_patched_copy_applies_the_edit_in_a_copy_and_names_a_missing_anchor(tmp_path):
    mod = _module(tmp_path, "rk_launcher", """
        def count():
            return 132

        def launch(rows):
            sm_count = count()
            return sm_count, -(-rows // sm_count)
        """)
    fixed = case.patched_copy(mod.launch, {"sm_count = count()": "sm_count = count() * K"}, {"K": 2})
    assert fixed(8192) == (264, 32) and mod.launch(8192) == (132, 63)
    with pytest.raises(ValueError, match="rk_launcher.launch: the fix's anchor"):
        case.patched_copy(mod.launch, {"not there": "x"})


def test_patched_module_writes_to_the_patch_dir_and_leaves_the_original(tmp_path, monkeypatch):
    monkeypatch.setenv("RK_PATCH_DIR", str(tmp_path / "fixed"))
    src = tmp_path / "src"
    src.mkdir()
    mod = _module(src, "rk_twice", """
        def fwd(x):
            return x + 1

        def bwd(x):
            return x + 1
        """)
    with pytest.raises(ValueError, match="occurs 2 times"):
        case.patched_module(mod, {"return x + 1": "return x + 2"}, "t1")
    copy = case.patched_module(mod, {"return x + 1": "return x + 2"}, "t2", first=True)
    assert (copy.fwd(1), copy.bwd(1), mod.fwd(1)) == (3, 2, 2)
    assert Path(copy.__file__).parent == tmp_path / "fixed"
    assert sorted(p.name for p in src.iterdir() if p.suffix == ".py") == ["rk_twice.py"]


def test_rel_errors_in_float64_and_nan_is_infinite():
    torch = pytest.importorskip("torch")
    ref = torch.randn(64, dtype=torch.float64)
    out = (ref * (1 + 1e-3)).float()
    (e,) = case.rel_errors(out, ref)
    assert e == pytest.approx(1e-3, rel=1e-3)
    bad = out.clone()
    bad[3] = float("nan")
    assert case.rel_errors(bad, ref) == [float("inf")]


def test_vllm_file_loads_alone_with_its_line_numbers(tmp_path, monkeypatch):
    from benchmarks.realkernels import vllm_attention as va

    pinned = tmp_path / "src" / "vllm" / va.FILE
    pinned.parent.mkdir(parents=True)
    pinned.write_text("import logging\n\nfrom vllm.platforms import current_platform\n"
                      "from vllm.triton_utils import tl, triton\n\nis_hip_ = current_platform.is_rocm()\n"
                      "BLOCK = tl.constexpr(64)\n")
    monkeypatch.setenv("RK_SRC", str(tmp_path / "src"))
    monkeypatch.setenv("RK_PATCH_DIR", str(tmp_path / "fixed"))
    monkeypatch.setattr(va, "_MODULE", [])
    mod = va.load()
    assert mod.is_hip_ is False and mod.BLOCK.value == 64
    loaded = Path(mod.__file__)
    assert loaded.name == "triton_decode_attention.py" and loaded.parent == tmp_path / "fixed"
    assert len(loaded.read_text().splitlines()) == len(pinned.read_text().splitlines())
    assert pinned.read_text().count("vllm.platforms") == 1   # the pinned copy is untouched


def test_branch_free_tanh_fix_in_a_triton_kernel_copy(tmp_path):
    """N's fix on a libdevice tanh, applied the way benchmarks/realkernels applies it (a module copy),
    matches float64 tanh on fresh random inputs (tanh.approx.f32 is PTX: GPU only). Its own process:
    TRITON_INTERPRET must be set before triton.language (tl.sigmoid is a @jit function) is imported."""
    pytest.importorskip("torch")
    import subprocess

    (tmp_path / "rk_tanh_kernel.py").write_text(textwrap.dedent("""
        import triton
        import triton.language as tl
        from triton.language.extra.libdevice import tanh


        @triton.jit
        def tanh_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            x = tl.load(x_ptr + offs, mask=mask, other=0.0)
            t = tanh(x)
            tl.store(y_ptr + offs, t, mask=mask)
        """))
    script = textwrap.dedent(f"""
        import sys
        sys.path[:0] = [{str(ROOT)!r}, {str(tmp_path)!r}]
        import torch
        import rk_tanh_kernel as mod
        from benchmarks.realkernels import case
        from benchmarks.realkernels.liger import BRANCH_FREE_TANH
        fixed = case.patched_module(mod, {{"t = tanh(x)": "t = " + BRANCH_FREE_TANH["sigmoid"].format("x")}}, "fix")
        x = 4 * torch.randn(1000)
        y = torch.full_like(x, float("nan"))
        fixed.tanh_kernel[(4,)](x, y, x.numel(), BLOCK=256)
        assert torch.isfinite(y).all()
        print((y.double() - torch.tanh(x.double())).abs().max().item())
        """)
    env = {**os.environ, "TRITON_INTERPRET": "1", "RK_PATCH_DIR": str(tmp_path / "fixed")}
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert float(p.stdout.split()[-1]) < 1e-6
