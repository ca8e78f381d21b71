from tritonify.diagnostics.model import Severity

from tests.lintutil import FIXTURES, lint, lint_fixture, marked_lines
from tests.rules.frontend_check import frontend_errors, marked_kernels, needs_triton

CODE = "TRI027"


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

CHAINED = """
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, h, w, H, W):
    if 0 <= h < H and 0 <= w < W:
        tl.store(x_ptr + h * W + w, 1.0)

def launch(x):
    k[(1,)](x, 1, 2, 3, 4)
"""


def test_chained_comparisons_follow_the_triton_version(monkeypatch):
    monkeypatch.setenv("TRITONIFY_TRITON_VERSION", "3.6.0")
    findings = lint(CHAINED, CODE)
    assert len(findings) == 2 and "simultaneous multiple comparison" in findings[0].message
    out = fixed(CHAINED, findings[0])
    assert "if ((0 <= h) & (h < H)) and 0 <= w < W:" in out
    compile(out, "fixed.py", "exec")
    monkeypatch.setenv("TRITONIFY_TRITON_VERSION", "3.9.0")
    assert lint(CHAINED, CODE) == []


def test_a_square_is_fixed_to_a_product():
    code = (FIXTURES / "TRI027.py").read_text()
    pow_finding = next(f for f in lint_fixture("TRI027.py", CODE) if "`x ** 2`" in f.message)
    assert "tl.store(out_ptr + offs, x * x)" in fixed(code, pow_finding)


def test_constexpr_powers_and_tuple_indexing_at_compile_time_are_fine():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, shape, BLOCK: tl.constexpr, P: tl.constexpr):
        offs = tl.arange(0, BLOCK * 2 ** P)
        for i in tl.static_range(2):
            tl.store(x_ptr + offs * shape[i], 1.0)

    def launch(x):
        k[(1,)](x, x.shape, BLOCK=64, P=1)
    """
    assert lint(code, CODE) == []


def test_a_tuple_indexed_by_a_run_time_loop_index_is_reported():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, shape, ndim):
        stride = 1
        for d in range(ndim):
            stride *= shape[d]
        tl.store(x_ptr, stride)

    def launch(x):
        k[(1,)](x, x.shape, x.dim())
    """
    (f,) = lint(code, CODE)
    assert "`shape[d]`" in f.message and "tl.static_range" in f.message


# Reduced from TritonBench-T programs Triton 3.6 rejected ("list index out of range"): the host
# function's parameter is launched as is; `torch.empty_like(x)` (or `x.numel()`) shows it is a
# tensor, so the kernel parameter is a pointer, whose `.shape` is `()`.
_SHAPE_OF_LAUNCHED_TENSOR = """
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def rsqrt_kernel(x, Y, BLOCK_SIZE: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offsets < x.shape[0]
        tl.store(Y + offsets, tl.rsqrt(tl.load(x + offsets, mask=mask)), mask=mask)

    def rsqrt(x):
        out = torch.empty_like(x)
        rsqrt_kernel[(1,)](x, out, BLOCK_SIZE=1024)
        return out
    """


def test_shape_of_a_host_parameter_used_as_a_tensor_is_reported():
    (f,) = lint(_SHAPE_OF_LAUNCHED_TENSOR, "TRI027")
    assert f.line == 9 and "x.shape[0]" in f.message


def test_a_host_parameter_whose_kind_the_host_tests_stays_unknown():
    code = _SHAPE_OF_LAUNCHED_TENSOR.replace("        out = torch.empty_like(x)\n",
                                             "        out = torch.empty_like(x) if isinstance(x, torch.Tensor) else x\n")
    assert lint(code, "TRI027") == []


# Reduced from TritonBench-T programs Triton 3.6 rejected ("list index out of range") that the host
# reader did not follow: the launched parameter is known to be a tensor by a guard that stops the
# function otherwise, by its annotation, or by an attribute only a tensor has.
_SHAPE_OF_GUARDED_INPUT = """
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def leaky_kernel(X, Y, slope, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < X.shape[0]
        v = tl.load(X + offs, mask=inside)
        tl.store(Y + offs, tl.where(v > 0, v, v * slope), mask=inside)

    def leaky(inp, out, slope=0.1):
        if not isinstance(inp, torch.Tensor):
            raise TypeError("a tensor, please")
        leaky_kernel[(4,)](inp, out, slope, BLOCK=256)
    """


def test_a_parameter_guarded_by_isinstance_that_raises_is_a_tensor():
    (f,) = lint(_SHAPE_OF_GUARDED_INPUT, "TRI027")
    assert f.line == 9 and "`X` is a pointer" in f.message
    asserted = _SHAPE_OF_GUARDED_INPUT.replace(
        '        if not isinstance(inp, torch.Tensor):\n            raise TypeError("a tensor, please")\n',
        "        assert isinstance(inp, torch.Tensor)\n")
    assert [f.line for f in lint(asserted, "TRI027")] == [9]


def test_a_guard_that_does_not_stop_the_function_decides_nothing():
    soft = _SHAPE_OF_GUARDED_INPUT.replace('raise TypeError("a tensor, please")', 'print("not a tensor")')
    assert lint(soft, "TRI027") == []
    other_class = _SHAPE_OF_GUARDED_INPUT.replace("isinstance(inp, torch.Tensor)", "isinstance(inp, (int, float))")
    assert lint(other_class, "TRI027") == []


def test_an_annotated_or_is_cuda_checked_parameter_is_a_tensor():
    plain = _SHAPE_OF_GUARDED_INPUT.replace(
        '        if not isinstance(inp, torch.Tensor):\n            raise TypeError("a tensor, please")\n', "")
    assert lint(plain, "TRI027") == []
    annotated = plain.replace("def leaky(inp, out,", "def leaky(inp: torch.Tensor, out,")
    assert [f.line for f in lint(annotated, "TRI027")] == [9]
    checked = plain.replace("        leaky_kernel[", "        assert inp.is_cuda\n        leaky_kernel[")
    assert [f.line for f in lint(checked, "TRI027")] == [9]


# Reduced from TritonBench-T triangular solves Triton 3.6 rejected ("Did you forget to add
# @triton.jit ?" on `x[j]`): the block is indexed inside a loop that later rebinds it. Triton
# compiles the body with the type the name has on entry, so the index is judged with that type
# (before, the types of the two readings of the body were joined, and the index was unknown).
_INDEXED_THEN_REBOUND = """
    import triton
    import triton.language as tl

    @triton.jit
    def solve_kernel(r_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        sol = tl.zeros((BLOCK,), dtype=tl.float32)
        for i in range(n):
            acc = 0.0
            for j in range(i):
                acc += tl.load(r_ptr + i * n + j) * sol[j]
            sol = tl.store(sol, tl.load(y_ptr + i) - acc, [i])   # (a misuse: store returns None)
        tl.store(out_ptr + offs, offs)
    """


def test_an_index_inside_a_loop_is_judged_with_the_type_on_entry():
    (f,) = lint(_INDEXED_THEN_REBOUND, "TRI027")
    assert "sol[j]" in f.message and f.line == 12
