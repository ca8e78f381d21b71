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


def test_both_branch_and_ternary_messages_name_the_two_shapes():
    messages = {f.line: f.message for f in lint_fixture("TRI030.py", CODE)}
    both, ternary = marked_lines("TRI030.py", CODE)[2:]
    assert "scalar in the then block" in messages[both] and "1-D block in its else block" in messages[both]
    assert "Mismatched type for divisor" in messages[both]
    assert "picks a 1-D block or a scalar" in messages[ternary] and "tl.where" in messages[ternary]


# Reduced from a TritonBench-T program (avg pooling) Triton 3.6 rejected: the condition is a kernel
# parameter the host annotates `bool`; the launch passes it as is, so the `if` is a run-time one.
_ANNOTATED_FLAG = """
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def pool_kernel(x_ptr, out_ptr, width, include_pad, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        inside = offs < width
        counts = inside.to(tl.int32)
        if include_pad:
            divisor = width
        else:
            divisor = tl.where(counts == 0, 1, counts)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=inside) / divisor, mask=inside)

    def pool(x: torch.Tensor, width: int, include_pad: bool = True):
        out = torch.empty_like(x)
        pool_kernel[(1,)](x, out, width, include_pad, BLOCK=128)
        return out
    """


def test_a_host_parameter_annotated_as_a_number_is_that_number_at_the_launch():
    (f,) = lint(_ANNOTATED_FLAG, CODE)
    assert "divisor = tl.where" in _ANNOTATED_FLAG.splitlines()[f.line - 1]
    # a default of another type, or no annotation: the kind stays unknown, and so does the verdict
    assert lint(_ANNOTATED_FLAG.replace("include_pad: bool = True", "include_pad: bool = None"), CODE) == []
    assert lint(_ANNOTATED_FLAG.replace("width: int, include_pad: bool = True", "width, include_pad"), CODE) == []
