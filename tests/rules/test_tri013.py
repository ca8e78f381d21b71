import ast
import math

from tritonify.diagnostics.model import Applicability, Severity
from tests.lintutil import fixed, lint, lint_fixture, marked_lines


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI013.py", "TRI013")
    assert [f.line for f in findings] == marked_lines("TRI013.py", "TRI013")
    assert all(f.severity is Severity.INFO for f in findings)


SNIPPET = """
import triton
import triton.language as tl
from triton.language.extra import libdevice

@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = 0.5 * x * (1.0 + libdevice.erf(x * 0.7071067811865476))
    tl.store(x_ptr + offs, y)
"""


def test_message_and_unsafe_sigmoid_fix():
    (f,) = lint(SNIPPET, "TRI013")
    assert "tl.sigmoid(1.5957691 * x * (1 + 0.044715 * x * x))" in f.message
    assert "5e-4" in f.message
    assert f.fixes[0].applicability is Applicability.UNSAFE
    out = fixed(SNIPPET, f)
    assert "y = x * tl.sigmoid(1.5957691 * x * (1 + 0.044715 * x * x))" in out
    ast.parse(out)
    assert lint(out, "TRI013") == []


def test_fix_keeps_extra_factors_and_parenthesises_operands():
    code = SNIPPET.replace(
        "y = 0.5 * x * (1.0 + libdevice.erf(x * 0.7071067811865476))",
        "y = (x + 1) * 0.5 * (1.0 + libdevice.erf((x + 1) / 1.4142135623730951)) * x",
    )
    (f,) = lint(code, "TRI013")
    out = fixed(code, f)
    assert "y = (x + 1) * tl.sigmoid(1.5957691 * (x + 1) * (1 + 0.044715 * (x + 1) * (x + 1))) * x" in out


def test_sigmoid_form_is_within_stated_error_of_exact_gelu():
    worst = 0.0
    for i in range(-8000, 8001):
        x = i / 1000
        exact = 0.5 * x * (1 + math.erf(x / math.sqrt(2)))
        approx = x / (1 + math.exp(-1.5957691 * x * (1 + 0.044715 * x * x)))
        worst = max(worst, abs(exact - approx))
    assert 1e-4 < worst < 4.8e-4


def test_not_gelu_shapes_are_quiet():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        a = 0.5 * (1.0 + tl.erf(x * 0.7071067811865476))
        b = 0.5 * x * (1.0 + tl.erf(x * 0.5))
        c = 0.5 * x * (1.0 - tl.erf(x * 0.7071067811865476))
        tl.store(x_ptr + offs, a + b + c)
    """
    assert lint(code, "TRI013") == []


def test_host_code_is_quiet():
    code = """
    import math
    def gelu(x):
        return 0.5 * x * (1 + math.erf(x * 0.7071067811865476))
    """
    assert lint(code, "TRI013") == []
