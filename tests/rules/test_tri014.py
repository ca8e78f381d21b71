import ast

import pytest

from tritonify.diagnostics.model import Applicability

from tests.lintutil import FIXTURES, apply_fixes, fixed, lint, lint_fixture, marked_lines


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI014.py", "TRI014")
    assert [f.line for f in findings] == marked_lines("TRI014.py", "TRI014")


def test_filler_matches_the_reduction():
    by_line = {f.line: f for f in lint_fixture("TRI014.py", "TRI014")}
    softmax, row_min, mixed, variance, welford = marked_lines("TRI014.py", "TRI014")
    assert by_line[softmax].fixes[0].title == 'Add other=-float("inf")'
    assert by_line[row_min].fixes[0].title == 'Add other=float("inf")'
    assert all(by_line[n].fixes[0].applicability is Applicability.SAFE for n in (softmax, row_min))
    # no filler repairs these: the where-fix is offered for review
    assert "no `other=` repairs every use" in by_line[mixed].message
    assert by_line[mixed].fixes[0].applicability is Applicability.UNSAFE
    assert "`x - mean`" in by_line[variance].message and "`x - mean`" in by_line[welford].message


def test_fixed_fixture_is_quiet_and_parses():
    """The safe fixes (other=+-inf) and the where-fixes together repair every finding."""
    text = (FIXTURES / "TRI014.py").read_text()
    out, applied = apply_fixes(text, lint_fixture("TRI014.py", "TRI014"), safe_only=False)
    assert applied == 5
    ast.parse(out)
    assert lint(out, "TRI014") == []
    assert "xc = tl.where(mask, x - mean, 0.0)" in out
    assert "m2 += (tl.where(cols < n, x - mean, 0.0)) * (tl.where(cols < n, x - mean, 0.0))" in out


def test_sums_dots_and_scans_of_loaded_zeros_are_quiet():
    """0 is what every GPU backend loads on masked lanes, and it is neutral for these uses."""
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, w_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n)
        w = tl.load(w_ptr + offs, mask=offs < n)
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        acc += x * w
        tl.store(out_ptr, tl.sum(x * x) + tl.sum(acc) + tl.sum(tl.cumsum(x, 0)) + tl.max(tl.abs(x)))
    """
    assert lint(code, "TRI014") == []
    assert len(lint(code.replace("tl.sum(x * x)", "tl.sum(tl.exp(x))"), "TRI014")) == 1


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


def test_custom_reduce_fires_for_a_product_only():
    """0 on a masked lane zeroes a product; a combine function that cannot be read stays quiet."""
    product = MAX.replace("tl.max(x * 2.0, axis=0)", "tl.reduce(x, 0, _mul)") + \
        "\n@triton.jit\ndef _mul(a, b):\n    return a * b\n"
    (f,) = lint(product, "TRI014")
    assert "product" in f.message
    assert not any(fix.title.startswith("Add other") for fix in f.fixes)
    assert lint(MAX.replace("tl.max(x * 2.0, axis=0)", "tl.reduce(x, 0, _combine)"), "TRI014") == []


def test_max_through_a_product_gets_the_where_fix():
    """-inf would become nan in `x * w` (0 * -inf): no `other=` repairs it, so the max's operand is
    wrapped in `tl.where(mask, ..., -inf)` (for review); a max of absolute values is quiet."""
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, w_ptr, scale_ptr, n, BLOCK: tl.constexpr):
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + cols, mask=cols < n, other=1.0)
        y = x * tl.load(w_ptr + cols, mask=cols < n)
        tl.store(scale_ptr, tl.max(y, axis=0))
    """
    (f,) = lint(code, "TRI014")
    assert f.fixes[0].applicability is Applicability.UNSAFE
    assert 'tl.max(tl.where(cols < n, y, -float("inf")), axis=0)' in fixed(code, f)
    assert lint(code.replace("tl.max(y, axis=0)", "tl.max(tl.abs(y), axis=0)"), "TRI014") == []


def test_shifted_and_scaled_values_keep_the_infinite_filler():
    code = MAX.replace("tl.max(x * 2.0, axis=0)", "tl.max((x - 1.0) * 0.5 + 3.0, axis=0)")
    (f,) = lint(code, "TRI014")
    assert f.fixes[0].title == 'Add other=-float("inf")'
    assert f.fixes[0].applicability is Applicability.SAFE
    negated = MAX.replace("tl.max(x * 2.0, axis=0)", "tl.max(-x, axis=0)")
    (g,) = lint(negated, "TRI014")
    assert g.fixes[0].applicability is Applicability.UNSAFE


def test_the_rule_runs_in_the_default_set():
    """A user with no configuration hears it (it fires only where the masked lanes change a result)."""
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
