from tritonify.diagnostics.model import Severity

from tests.lintutil import FIXTURES, lint, lint_fixture, marked_lines
from tests.rules.frontend_check import frontend_errors, marked_kernels, needs_triton

CODE = "TRI024"


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


HEADER = """
import torch
import triton
import triton.language as tl
"""


def test_the_message_names_what_the_launch_passes():
    (first, *_) = lint_fixture("TRI024.py", CODE)
    assert "x.data_ptr()" in first.message and "line 20" in first.message


def test_unknown_parameters_stay_quiet():
    code = HEADER + """
@triton.jit
def k(x_addr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_addr + offs, tl.load(x_addr + offs, mask=offs < n), mask=offs < n)
"""
    assert lint(code, CODE) == []


def test_a_launch_that_passes_a_tensor_on_one_path_and_an_int_on_another_is_unknown():
    code = HEADER + """
@triton.jit
def k(x_addr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_addr + offs, 1.0)

def a(x):
    k[(1,)](x, BLOCK=128)

def b(x):
    k[(1,)](x.data_ptr(), BLOCK=128)
"""
    assert lint(code, CODE) == []


def test_a_host_name_rebound_from_itself_does_not_recurse():
    code = HEADER + """
@triton.jit
def k(x_addr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_addr + offs, 1.0, mask=offs < n)

def launch(x):
    n = x.numel()
    n = n + 1
    addr = x.data_ptr()
    addr = addr + 0
    k[(1,)](addr, n, BLOCK=128)
"""
    from tritonify.diagnostics.engine import lint_text
    from tritonify.diagnostics.settings import Settings
    import textwrap
    result = lint_text(textwrap.dedent(code), "kernel.py", Settings(select=(CODE,)))
    assert not any("gave up" in note for note in result.notes)
    assert result.error is None
