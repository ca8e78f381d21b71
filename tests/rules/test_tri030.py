from tritonify.diagnostics.model import Severity

from tests.lintutil import FIXTURES, lint, lint_fixture, marked_lines
from tests.rules.frontend_check import frontend_errors, marked_kernels, needs_triton

CODE = "TRI030"


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


def test_the_message_names_the_loop_and_the_shapes():
    first = lint_fixture("TRI030.py", CODE)[0]
    assert "`term` is a scalar before the loop on line 15 and becomes a 1-D block" in first.message
    assert "tl.zeros([BLOCK], dtype=tl.float32)" in first.message


def test_names_first_bound_inside_an_earlier_loop_are_not_carried():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        for i in range(n):
            b = tl.load(x_ptr + offs[:, None] + offs[None, :])
        for j in range(n):
            b = tl.load(x_ptr + offs)
            tl.store(x_ptr + offs, b)
    """
    assert lint(code, CODE) == []
