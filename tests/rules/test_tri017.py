import ast

from tritonify.diagnostics.model import Applicability, Severity
from tests.lintutil import fixed, lint, lint_fixture, marked_lines


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI017.py", "TRI017")
    assert [f.line for f in findings] == marked_lines("TRI017.py", "TRI017")
    by_line = {f.line: f for f in findings}
    loop_line = marked_lines("TRI017.py", "TRI017")[1]
    assert by_line[loop_line].severity is Severity.WARNING
    assert "inside this loop" in by_line[loop_line].message
    assert by_line[marked_lines("TRI017.py", "TRI017")[0]].severity is Severity.INFO


SNIPPET = """
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = x * (1.0 / tl.sqrt(x * x + 1e-6))
    tl.store(x_ptr + offs, y)
"""


def test_safe_rsqrt_fix():
    (f,) = lint(SNIPPET, "TRI017")
    assert "tl.rsqrt(x * x + 1e-6)" in f.message
    assert f.fixes[0].applicability is Applicability.SAFE
    out = fixed(SNIPPET, f)
    assert "y = x * (tl.rsqrt(x * x + 1e-6))" in out
    ast.parse(out)
    assert lint(out, "TRI017") == []


def test_alias_in_fix_and_other_divisions_quiet():
    code = """
    import triton
    import triton.language as language

    @triton.jit
    def k(x_ptr, BLOCK: language.constexpr):
        x = language.load(x_ptr)
        a = 1 / language.math.sqrt(x)
        b = 3 / language.sqrt(x)
        c = x / language.sqrt(x)
        d = 1 / language.exp(x)
        language.store(x_ptr, a + b + c + d)
    """
    (f,) = lint(code, "TRI017")
    assert "language.rsqrt(x)" in fixed(code, f)
