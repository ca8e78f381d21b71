"""Scaffolding a contract from a kernel's signature, statically."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
from tritonify.kernels.bench.scaffold import contract_for

ROOT = Path(__file__).resolve().parents[2]

WITH_LAUNCHER = '''
import torch
import triton
import triton.language as tl

@triton.jit
def rms_norm_kernel(x_ptr, w_ptr, y_ptr, stride, n_cols, eps, BLOCK: tl.constexpr):
    pass

def rms_norm(x, weight, eps=1e-6):
    y = torch.empty_like(x)
    rms_norm_kernel[(x.shape[0],)](x, weight, y, x.stride(0), x.shape[1], eps, BLOCK=1024)
    return y
'''

BARE = '''
import triton
import triton.language as tl

@triton.jit
def silu_mul_kernel(a_ptr, b_ptr, c_ptr, row_stride, n_cols, BLOCK_SIZE: tl.constexpr = 128):
    pass
'''


def test_launcher_becomes_the_entry():
    code = contract_for(WITH_LAUNCHER, "rms_norm_kernel", module_name="norm")
    tree = ast.parse(code)
    assert "from norm import rms_norm" in code
    assert "entry=rms_norm," in code and "kernel='rms_norm_kernel'" in code
    assert "liger='rms_norm'" in code
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "make_inputs")
    assert "return (x, weight, eps)" in ast.unparse(fn)
    assert "eps = 1e-06" in ast.unparse(fn)
    assert "NotImplementedError" in code          # the reference is a loud TODO


def test_bare_kernel_gets_a_launcher():
    code = contract_for(BARE, "silu_mul_kernel")
    ast.parse(code)
    assert "def launch(a, b):" in code
    assert "silu_mul_kernel[grid](a, b, out, a.stride(0), a.shape[-1], BLOCK_SIZE=128)" in code
    assert "return (a, b)" in code
    assert "your_kernel_module" in code and "liger='swiglu'" in code


def test_unknown_name_and_bad_source_are_value_errors():
    with pytest.raises(ValueError, match="no kernel or function named 'nope'.*rms_norm_kernel"):
        contract_for(WITH_LAUNCHER, "nope")
    with pytest.raises(ValueError, match="does not parse"):
        contract_for("def (:", "k")


def test_bench_write_contract_writes_the_scaffold_once_and_the_no_contract_error_points_to_it(tmp_path, capsys):
    from tritonify.cli.main import main

    kernel_file = tmp_path / "act.py"
    kernel_file.write_text((ROOT / "examples" / "triton" / "activation_tanh_glu.py").read_text())
    assert main(["bench", f"{kernel_file}::tanh_glu_kernel"]) == 2
    assert f"`tritonify bench {kernel_file}::tanh_glu_kernel --write-contract`" in capsys.readouterr().err
    assert main(["bench", f"{kernel_file}::tanh_glu_kernel", "--write-contract"]) == 0
    written = tmp_path / "act_contract.py"
    compile(written.read_text(), str(written), "exec")
    assert "kernel='tanh_glu_kernel'" in written.read_text() and f"wrote {written}" in capsys.readouterr().out
    before = written.read_text()
    assert main(["bench", f"{kernel_file}::tanh_glu_kernel", "--write-contract"]) == 2
    assert "exists" in capsys.readouterr().err and written.read_text() == before


def test_no_scaffold_for_a_kernel_whose_file_has_its_contract(tmp_path, capsys):
    from tritonify.cli.main import main

    kernel_file = tmp_path / "own.py"
    kernel_file.write_text("import triton\nfrom tritonify.kernels.bench import Contract\n\n"
                           "@triton.jit\ndef k(x_ptr):\n    pass\n\n"
                           "CONTRACT = Contract(kernel='k', entry=print, inputs=print, reference=print)\n")
    assert main(["bench", f"{kernel_file}::k", "--write-contract"]) == 2
    assert "k has a benchmark contract already" in capsys.readouterr().err
    assert not (tmp_path / "own_contract.py").exists()
