from tritonify.diagnostics.model import Severity

from tests.lintutil import FIXTURES, lint, lint_fixture, marked_lines
from tests.rules.frontend_check import frontend_errors, marked_kernels, needs_triton

CODE = "TRI025"


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture(f"{CODE}.py", CODE)
    assert [f.line for f in findings] == marked_lines(f"{CODE}.py", CODE)
    assert all(f.severity is Severity.ERROR for f in findings)


@needs_triton
def test_marked_kernels_are_exactly_the_ones_triton_rejects():
    path = FIXTURES / f"{CODE}.py"
    errors = frontend_errors(path)
    expected = marked_kernels(path, CODE)
    assert set(errors) == set(expected)
    wrong = {name: errors[name] for name, marked in expected.items() if marked != (errors[name] is not None)}
    assert wrong == {}


from tests.lintutil import fixed  # noqa: E402


def test_the_fix_adds_the_offsets_the_mask_names():
    code = (FIXTURES / "TRI025.py").read_text()
    load = next(f for f in lint_fixture("TRI025.py", CODE) if "tl.load" in f.message)
    assert "`x_ptr + offs`" in load.message
    out = fixed(code, load)
    assert "x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)" in out
    compile(out, "fixed.py", "exec")


def test_a_block_value_through_a_block_pointer_is_fine():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        p = x_ptr + offs
        tl.store(p, tl.load(p, mask=offs < n) * 2, mask=offs < n)
    """
    assert lint(code, CODE) == []


def test_a_mask_bound_to_a_name_still_names_the_offsets():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr, tl.load(x_ptr + offs, mask=mask), mask=mask)
    """
    (f,) = lint(code, CODE)
    assert "`out_ptr + offs`" in f.message
    assert "tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)" in fixed(code, f)
