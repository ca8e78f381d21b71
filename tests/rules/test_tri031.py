from tritonify.diagnostics.model import Severity

from tests.lintutil import FIXTURES, lint, lint_fixture, marked_lines
from tests.rules.frontend_check import frontend_errors, marked_kernels, needs_triton

CODE = "TRI031"


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


def test_the_fix_decorates_the_helper():
    code = (FIXTURES / "TRI031.py").read_text()
    (f,) = lint_fixture("TRI031.py", CODE)
    out = fixed(code, f)
    assert "@triton.jit\ndef gelu(x):" in out
    compile(out, "fixed.py", "exec")


def test_decorated_or_shadowed_names_are_left_alone():
    code = """
    import functools
    import triton
    import triton.language as tl

    @functools.cache
    def table():
        return 3

    def scale(x):
        return x

    @triton.jit
    def k(x_ptr, scale):
        tl.store(x_ptr, scale(tl.load(x_ptr)) + table())
    """
    assert lint(code, CODE) == []
