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


# Reduced from TritonBench-T programs Triton 3.6 rejected ("invalid operands of type pointer<fp32>
# and triton.language.int32"): a tensor parameter used as the number it points to. The host rebinds
# it from itself (`x = x.contiguous()`), which keeps it a tensor.
_POINTER_AS_NUMBER = """
    import torch
    import triton
    import triton.language as tl
    from torch import Tensor

    @triton.jit
    def relu_kernel(inp, out):
        val = tl.where(inp > 0, inp, 0)
        tl.store(out, val)

    def relu(inp: Tensor, out: Tensor = None) -> Tensor:
        if not inp.is_contiguous():
            inp = inp.contiguous()
        if out is None:
            out = torch.empty_like(inp)
        relu_kernel[(inp.numel(),)](inp, out)
        return out
    """


def test_a_launched_tensor_compared_with_a_number_is_reported():
    findings = lint(_POINTER_AS_NUMBER, "TRI024")
    assert [f.line for f in findings] == [9]
    assert "`inp > 0` uses the address as a number" in findings[0].message
    assert "`inp = inp.contiguous()`" in findings[0].message


def test_pointer_arithmetic_and_unknown_parameters_are_not():
    fine = _POINTER_AS_NUMBER.replace("val = tl.where(inp > 0, inp, 0)", "val = tl.load(inp + 1 - 1)")
    assert lint(fine, "TRI024") == []
    # rebound from something else than itself: its kind is not followed
    other = _POINTER_AS_NUMBER.replace("inp = inp.contiguous()", "inp = make(inp)")
    assert lint(other, "TRI024") == []
    # the host does not show it is a tensor: unknown
    plain = _POINTER_AS_NUMBER.replace("inp: Tensor", "inp").replace(
        "        if not inp.is_contiguous():\n            inp = inp.contiguous()\n", "").replace(
        "(inp.numel(),)", "(4,)").replace("torch.empty_like(inp)", "alloc()")
    assert lint(plain, "TRI024") == []
