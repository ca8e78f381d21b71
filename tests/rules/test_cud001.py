"""CUD001 double-literal-in-float-math: positives, negatives, fixes, CLI."""
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tritonify.diagnostics.model import Applicability
from tests.lintutil import FIXTURES, fixed, lint, lint_fixture


def cuda_marked_lines(name: str, code: str) -> list[int]:
    """Lines of a fixture carrying a `// CODE` marker (inside CUDA, also inside Python strings)."""
    lines = (FIXTURES / name).read_text().splitlines()
    return [i for i, line in enumerate(lines, 1) if f"// {code}" in line]


def kernel(body: str, params: str = "const float* x, float* y, int n, double d") -> str:
    return f"__global__ void k({params}) {{\n  int i = threadIdx.x;\n  float v = x[i];\n{textwrap.indent(textwrap.dedent(body), '  ')}}}\n"


def cud001(code: str, path: str = "kernel.cu"):
    return lint(code, "CUD001", path=path)


def test_cu_fixture_flags_exactly_the_marked_lines():
    lines = sorted({f.line for f in lint_fixture("CUD001.cu", "CUD001")})
    assert lines == cuda_marked_lines("CUD001.cu", "CUD001")


def test_fixture_flags_both_literals_of_the_gelu_chain():
    findings = [f for f in lint_fixture("CUD001.cu", "CUD001") if "0.7978845608" in f.message or "`0.044715`" in f.message]
    assert len(findings) == 2


def test_embedded_fixture_flags_exactly_the_marked_host_lines():
    lines = sorted({f.line for f in lint_fixture("CUD001_embedded.py", "CUD001")})
    assert lines == cuda_marked_lines("CUD001_embedded.py", "CUD001")


@pytest.mark.parametrize("body", [
    "y[i] = v * 0.5 + 1.0;",          # a chain stays FP64 even with exact constants
    "y[i] = v * 0.1;",                # 0.1 is not a float: no folding
    "y[i] = sqrtf(v + 1e-5);",        # layernorm's epsilon
    "float a = v; a += 1e-5;",
    "if (v > 0.1) y[i] = v;",
    "float inv = 1.0 / n;",           # double division stored as float
    "y[i] = v * (1.0 / 3.0);",
    "auto a = v * 0.5; y[i] = a;",    # auto makes `a` a double
    "y[i] = expf(v * 0.3);",
])
def test_fires_on_float_math_promoted_to_double(body):
    assert cud001(kernel(body)), body


@pytest.mark.parametrize("body", [
    "y[i] = v * 0.5;",                # nvcc -O3 folds it back to FP32 (measured)
    "y[i] = v / 2.0;",
    "if (v > 0.0) y[i] = v;",
    "float a = v; a *= 0.5; y[i] = a;",
    "float a = 0.5; y[i] = a * v;",   # initialisation: converted at compile time
    "double r = v * 0.1; y[i] = r;",  # double destination: FP64 on purpose
    "y[i] = d * 0.1;",                # double operand
    "y[i] = (double)v * 0.1;",
    "int h = n * 0.5; y[h] = v;",     # integer context
    "y[i] = fmaxf(v, 0.0);",          # argument converted at compile time
    "y[i] = v > 0.f ? v : 0.0;",
    "y[i] = v * 0.5f + 1.0f;",
    "long double q = 1.0L; y[i] = v;",
])
def test_quiet_where_fp64_is_not_produced_or_intended(body):
    assert cud001(kernel(body)) == [], body


def test_host_code_template_and_half_are_quiet():
    code = """
    float host(float x) { return x * 0.1 + 1.0; }
    template <typename T> __global__ void t(T* y) { y[0] = y[0] * 0.1 + 1.0; }
    __global__ void h(__half* y) { y[0] = y[0] * 0.1; }
    """
    assert cud001(code) == []


def test_constexpr_double_is_quiet_and_device_lambda_is_checked():
    code = """
    constexpr double kEps = 1e-5;
    __global__ void k(float* y) { y[0] = y[0] + kEps; }
    void launch(float* y) {
      auto f = [] __device__ (float a) { return a * 0.1 + 1.0f; };
    }
    """
    findings = cud001(code)
    lambda_line = textwrap.dedent(code).splitlines()[4]
    assert [(f.line, f.column) for f in findings] == [(5, lambda_line.index("0.1"))]


def test_exact_position_and_message():
    code = "__global__ void k(float* y) {\n  y[0] = y[0] * 0.7978845608;\n}\n"
    (f,) = cud001(code)
    assert (f.line, f.column, f.end_line, f.end_column) == (2, 16, 2, 28)
    assert "`0.7978845608f`" in f.message and "FP64" in f.message


def test_fix_adds_the_suffix_and_the_result_is_clean():
    code = kernel("y[i] = v * 0.5 + 1.0;\nfloat e = sqrtf(v + 1e-5);\ny[i] += e * M_PI;\n")
    findings = cud001(code)
    assert len(findings) == 4
    assert all(f.fixes[0].applicability is Applicability.SAFE for f in findings)
    from tests.lintutil import apply_fixes

    out, applied = apply_fixes(textwrap.dedent(code), findings)
    assert applied == 4
    assert "y[i] = v * 0.5f + 1.0f;" in out
    assert "sqrtf(v + 1e-5f)" in out
    assert "e * static_cast<float>(M_PI)" in out
    assert cud001(out) == []


def test_fix_is_unsafe_when_the_value_is_not_a_normal_float():
    findings = cud001(kernel("y[i] = v * 1e-40 + 1.0f;"))
    (f,) = findings
    assert f.fixes[0].applicability is Applicability.UNSAFE
    assert fixed(kernel("y[i] = v * 1e-40 + 1.0f;"), f).count("1e-40f") == 1


def test_noqa_comment_in_cuda_suppresses():
    assert cud001(kernel("y[i] = v * 0.1;  // noqa: CUD001\n")) == []
    assert cud001(kernel("y[i] = v * 0.1;  // noqa\n")) == []
    assert len(cud001(kernel("y[i] = v * 0.1;  // noqa: CUD002\n"))) == 1


def test_broken_cuda_still_reports_what_parses():
    code = "__global__ void k(float* y) {\n  y[0] = y[0] * 0.1;\n  y[1] = ((;\n}\n"
    assert [f.line for f in cud001(code)] == [2]


def test_cli_check_on_a_cu_file(tmp_path: Path):
    src = tmp_path / "norm.cu"
    src.write_text(kernel("y[i] = rsqrtf(v + 1e-5);"))
    run = subprocess.run([sys.executable, "-m", "tritonify", "check", str(src)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 1, run.stderr
    assert f"{src}:4:21: CUD001" in run.stdout   # text output: 1-based columns
    fix = subprocess.run([sys.executable, "-m", "tritonify", "check", "--fix", str(src)], capture_output=True, text=True, timeout=60)
    assert fix.returncode == 0, fix.stdout + fix.stderr
    assert "rsqrtf(v + 1e-5f)" in src.read_text()
