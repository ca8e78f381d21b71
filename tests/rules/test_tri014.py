import ast

import pytest

from tritonify.diagnostics.model import Applicability

from tests.lintutil import FIXTURES, apply_fixes, fixed, lint, lint_fixture, marked_lines


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI014.py", "TRI014")
    assert [f.line for f in findings] == marked_lines("TRI014.py", "TRI014")


def test_filler_matches_the_reduction():
    by_line = {f.line: f for f in lint_fixture("TRI014.py", "TRI014")}
    softmax, row_min, squares, mixed, attention = marked_lines("TRI014.py", "TRI014")
    assert by_line[softmax].fixes[0].title == 'Add other=-float("inf")'
    assert by_line[row_min].fixes[0].title == 'Add other=float("inf")'
    assert by_line[squares].fixes[0].title == "Add other=0.0"
    assert by_line[attention].fixes[0].title == "Add other=0.0"
    assert by_line[mixed].fixes == []
    assert "no single `other=`" in by_line[mixed].message
    assert all(f.fixes[0].applicability is Applicability.SAFE for f in by_line.values() if f.fixes)


def test_fixed_fixture_is_quiet_and_parses():
    text = (FIXTURES / "TRI014.py").read_text()
    out, applied = apply_fixes(text, lint_fixture("TRI014.py", "TRI014"))
    assert applied == 4
    ast.parse(out)
    assert [f.line for f in lint(out, "TRI014")] == [marked_lines("TRI014.py", "TRI014")[3]]


MAX = """
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr, tl.max(x * 2.0, axis=0))
"""


def test_fix_text_goes_after_the_mask():
    (f,) = lint(MAX, "TRI014")
    out = fixed(MAX, f)
    assert 'x = tl.load(x_ptr + offs, mask=offs < n, other=-float("inf"))' in out
    assert lint(out, "TRI014") == []


def test_positional_mask_and_method_reduction():
    code = MAX.replace("mask=offs < n)", "offs < n)").replace("tl.max(x * 2.0, axis=0)", "(x * 2.0).max(0)")
    (f,) = lint(code, "TRI014")
    assert 'tl.load(x_ptr + offs, offs < n, other=-float("inf"))' in fixed(code, f)


def test_positional_other_and_rebinding_are_respected():
    assert lint(MAX.replace("mask=offs < n)", "offs < n, 0.0)"), "TRI014") == []
    rebound = MAX.replace("    tl.store(", "    x = tl.zeros((BLOCK,), dtype=tl.float32)\n    tl.store(")
    assert lint(rebound, "TRI014") == []


def test_custom_reduce_gets_no_fix():
    code = MAX.replace("tl.max(x * 2.0, axis=0)", "tl.reduce(x, 0, _combine)")
    (f,) = lint(code, "TRI014")
    assert f.fixes == []


def test_max_through_a_product_gets_zero_as_an_unsafe_fix():
    """-inf would become nan in `x * w` (0 * -inf): only 0.0, what GPUs return today, is offered,
    and as unsafe, because whether 0 is neutral for that max depends on the arithmetic. (x is
    filled with 1.0, not 0: a partner filled with 0 would zero the product on those lanes.)"""
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, w_ptr, scale_ptr, n, BLOCK: tl.constexpr):
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + cols, mask=cols < n, other=1.0)
        y = x * tl.load(w_ptr + cols, mask=cols < n)
        tl.store(scale_ptr, tl.max(tl.abs(y), axis=0))
    """
    (f,) = lint(code, "TRI014")
    assert f.fixes[0].title == "Add other=0.0"
    assert f.fixes[0].applicability is Applicability.UNSAFE
    assert "could become nan" in f.message


def test_shifted_and_scaled_values_keep_the_infinite_filler():
    code = MAX.replace("tl.max(x * 2.0, axis=0)", "tl.max((x - 1.0) * 0.5 + 3.0, axis=0)")
    (f,) = lint(code, "TRI014")
    assert f.fixes[0].title == 'Add other=-float("inf")'
    assert f.fixes[0].applicability is Applicability.SAFE
    negated = MAX.replace("tl.max(x * 2.0, axis=0)", "tl.max(-x, axis=0)")
    (g,) = lint(negated, "TRI014")
    assert g.fixes[0].applicability is Applicability.UNSAFE


def test_the_rule_runs_in_the_default_set():
    """Round 3 of the real-world study measured it at 97%: a user with no configuration hears it."""
    from tritonify.diagnostics.engine import lint_text
    from tritonify.diagnostics.settings import Settings

    path = FIXTURES / "TRI014.py"
    by_default = [f.line for f in lint_text(path.read_text(), str(path), Settings()).findings if f.code == "TRI014"]
    assert by_default == marked_lines("TRI014.py", "TRI014")


PRECISION = "TRI014_precision.py"


def _kernels(name: str) -> dict[str, tuple[int, int]]:
    tree = ast.parse((FIXTURES / name).read_text())
    return {f.name: (f.lineno, f.end_lineno) for f in tree.body if isinstance(f, ast.FunctionDef)}


@pytest.mark.parametrize("kernel", sorted(_kernels(PRECISION)))
def test_precision_fixture_kernel_by_kernel(kernel):
    """Each class of false alarm seen on real code stays quiet, and its near twin where the
    masked lanes do reach the result still fires: conjunctions with the mask, transposed and
    permuted tiles, masked rows of a reduction over columns (also where shapes come from the
    indices only), partners filled with 0 on the same lanes, `mask=True`, the tail of an
    inclusive scan whose uses only write valid lanes."""
    first, last = _kernels(PRECISION)[kernel]
    found = [f.line for f in lint_fixture(PRECISION, "TRI014") if first <= f.line <= last]
    assert found == [n for n in marked_lines(PRECISION, "TRI014") if first <= n <= last]


def test_precision_fixture_still_fires_somewhere():
    assert len(marked_lines(PRECISION, "TRI014")) == 4
    assert [f.line for f in lint_fixture(PRECISION, "TRI014")] == marked_lines(PRECISION, "TRI014")
