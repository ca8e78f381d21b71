import ast

from tritonify.diagnostics.model import Applicability, Severity
from tests.lintutil import fixed, lint, lint_fixture, marked_lines


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI017.py", "TRI017")
    assert [f.line for f in findings] == marked_lines("TRI017.py", "TRI017")
    by_line = {f.line: f for f in findings}
    loop_line = marked_lines("TRI017.py", "TRI017")[0]
    assert by_line[loop_line].severity is Severity.WARNING
    assert "inside this loop" in by_line[loop_line].message
    assert by_line[marked_lines("TRI017.py", "TRI017")[1]].severity is Severity.INFO


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
        x = language.load(x_ptr + language.arange(0, BLOCK))
        a = 1 / language.math.sqrt(x)
        b = 3 / language.sqrt(x)
        c = x / language.sqrt(x)
        d = 1 / language.exp(x)
        language.store(x_ptr + language.arange(0, BLOCK), a + b + c + d)
    """
    (f,) = lint(code, "TRI017")
    assert "language.rsqrt(x)" in fixed(code, f)


ROW_STATS = """
import triton
import triton.language as tl

@triton.jit
def l2_rows(x_ptr, y_ptr, D, eps, BT: tl.constexpr, BD: tl.constexpr):
    rows = tl.program_id(0) * BT + tl.arange(0, BT)
    cols = tl.arange(0, BD)
    x = tl.load(x_ptr + rows[:, None] * D + cols[None, :]).to(tl.float32)
    {stat}
    tl.store(y_ptr + rows[:, None] * D + cols[None, :], x * inv[:, None])
"""


def test_once_per_row_statistics_are_quiet():
    # the argument is a row reduction, directly, through a name, or clamped: one sqrt per row
    for stat in (
        "inv = 1 / tl.sqrt(tl.sum(x * x, 1) + eps)",
        "ss = tl.sum(x * x, axis=1) / D\n    inv = 1.0 / tl.sqrt(ss + eps)",
        "inv = 1.0 / tl.sqrt(tl.maximum(tl.sum(x * x, axis=1), 1e-12))",
    ):
        assert lint(ROW_STATS.format(stat=stat), "TRI017") == [], stat


def test_scalar_loads_are_quiet_but_tiles_fire():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(sq_ptr, x_ptr, n, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        sq = tl.load(sq_ptr + row)
        r = 1.0 / tl.sqrt(sq + 1e-6)
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n)
        tl.store(x_ptr + offs, x * r * (1.0 / tl.sqrt(x + 1.0)), mask=offs < n)
    """
    (f,) = lint(code, "TRI017")
    assert f.line == 12 and "on every element" in f.message


def test_not_reported_for_other_targets():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n)
        tl.store(x_ptr + offs, 1.0 / tl.sqrt(x + 1.0), mask=offs < n)
    """
    assert len(lint(code, "TRI017", path="pkg/ops/norm.py")) == 1
    assert lint(code, "TRI017", path="pkg/backend/_cambricon/ops/norm.py") == []
