from tritonify.diagnostics.model import Severity

from tests.lintutil import FIXTURES, lint, lint_fixture, marked_lines
from tests.rules.frontend_check import frontend_errors, marked_kernels, needs_triton

CODE = "TRI028"


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
