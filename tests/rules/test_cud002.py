"""CUD002 double-math-function-on-float: positives, negatives, compiler differences, fixes."""
import textwrap

import pytest

from tritonify.diagnostics.model import Applicability
from tests.lintutil import fixed, lint, lint_fixture
from tests.rules.test_cud001 import cuda_marked_lines, kernel


def cud002(code: str, path: str = "kernel.cu"):
    return lint(code, "CUD002", path=path)


def test_cu_fixture_flags_exactly_the_marked_lines():
    lines = sorted({f.line for f in lint_fixture("CUD002.cu", "CUD002")})
    assert lines == cuda_marked_lines("CUD002.cu", "CUD002")


def test_embedded_fixture_flags_exactly_the_marked_host_lines():
    lines = sorted({f.line for f in lint_fixture("CUD002_embedded.py", "CUD002")})
    assert lines == cuda_marked_lines("CUD002_embedded.py", "CUD002")


@pytest.mark.parametrize("body, name", [
    ("y[i] = exp(v * 0.5);", "exp"),
    ("y[i] = ::exp(v * 0.5);", "::exp"),
    ("y[i] = std::tanh(v * 0.7978845608);", "std::tanh"),
    ("y[i] = rsqrt(v + 1e-5);", "rsqrt"),
    ("y[i] = pow(v, 2.0);", "pow"),
    ("y[i] = fmax(v * 0.5, v);", "fmax"),
    ("y[i] = pow(v, 3);", "pow"),            # nvcc: the double pow
    ("y[i] = log(v * M_PI);", "log"),
])
def test_fires_when_the_double_overload_is_selected(body, name):
    (f,) = cud002(kernel(body))
    assert f"`{name}`" in f.message


@pytest.mark.parametrize("body", [
    "y[i] = exp(v);",                 # float overload (measured: no FP64 instruction)
    "y[i] = ::exp(v) + std::exp(v) + sqrt(v) + tanh(v) + fabs(v) + rsqrt(v);",
    "y[i] = exp(v * 0.5f);",
    "y[i] = expf(v * 0.5);",          # float function: CUD001's business
    "y[i] = pow(v, 2.0f) + powf(v, 2);",
    "y[i] = exp(d * 0.5);",           # genuinely double
    "double r = exp(v * 0.5); y[i] = r;",   # double destination
    "y[i] = v * exp(1.0);",           # a constant call: CUD001's business
    "y[i] = sqrt(n * 1.0);",          # integer-derived: not float math
])
def test_quiet_when_the_float_overload_or_double_is_meant(body):
    assert cud002(kernel(body)) == [], body


def test_pow_float_int_depends_on_the_compiler():
    code = '''
    import cupy
    from torch.utils.cpp_extension import load_inline
    SRC = """__global__ void k(float* y) { y[0] = pow(y[0], 2); }"""
    a = load_inline("a", cpp_sources="", cuda_sources=SRC)
    b = cupy.RawKernel("""extern "C" __global__ void k(float* y) { y[0] = pow(y[0], 2); }""", "k")
    c = cupy.RawKernel("""extern "C" __global__ void k(float* y) { y[0] = pow(y[0], 2); }""", "k", backend="nvcc")
    '''
    assert sorted(f.line for f in cud002(code, path="host.py")) == [4, 7]


def test_fix_calls_the_float_function():
    code = kernel("y[i] = std::exp(v * 0.5) + pow(v, 2);")
    findings = cud002(code)
    assert len(findings) == 2
    assert all(f.fixes[0].applicability is Applicability.SAFE for f in findings)
    out = fixed(code, findings[0])
    out = textwrap.dedent(out)
    assert "y[i] = expf(v * 0.5) + pow(v, 2);" in out
    from tests.lintutil import apply_fixes

    both, applied = apply_fixes(textwrap.dedent(code), findings)
    assert applied == 2 and "expf(v * 0.5) + powf(v, 2)" in both
    assert cud002(both) == []


def test_exact_range_covers_the_call():
    code = "__global__ void k(float* y) {\n  y[0] = 2.f * exp(y[1] * 0.5);\n}\n"
    (f,) = cud002(code)
    assert (f.line, f.column, f.end_line, f.end_column) == (2, 15, 2, 30)


def test_host_function_is_quiet():
    assert cud002("float h(float x) { return exp(x * 0.5); }\n") == []
