import ast

from tests.lintutil import apply_fixes
from tritonify.diagnostics.model import Applicability, Severity

from tests.lintutil import FIXTURES, fixed, lint, lint_fixture, marked_lines


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI019.py", "TRI019")
    assert [f.line for f in findings] == marked_lines("TRI019.py", "TRI019")
    assert all(f.severity is Severity.ERROR for f in findings)


def test_fixes_annotate_every_parameter_form():
    text = (FIXTURES / "TRI019.py").read_text()
    findings = lint_fixture("TRI019.py", "TRI019")
    assert all(f.fixes[0].applicability is Applicability.SAFE for f in findings)
    out, applied = apply_fixes(text, findings)
    assert applied == len(findings)
    assert "def scale_kernel(x_ptr, y_ptr, n, scale, BLOCK_SIZE: tl.constexpr):" in out
    assert "BLOCK_N: tl.constexpr = 64, GROUP: tl.constexpr = 4):" in out
    assert "def unrolled_kernel(x_ptr, out_ptr, NUM_STAGES: tl.constexpr, BLOCK: tl.constexpr):" in out
    ast.parse(out)
    assert lint(out, "TRI019") == []


def test_one_finding_per_parameter():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, BLOCK):
        a = tl.arange(0, BLOCK)
        b = tl.zeros((BLOCK,), dtype=tl.float32)
        tl.store(x_ptr + a, b)
    """
    (f,) = lint(code, "TRI019")
    assert f.line == 7


def test_alias_of_triton_language_is_used_in_the_fix():
    code = """
    import triton
    import triton.language as language

    @triton.jit
    def k(x_ptr, BLOCK):
        language.store(x_ptr + language.arange(0, BLOCK), 1.0)
    """
    (f,) = lint(code, "TRI019")
    assert "def k(x_ptr, BLOCK: language.constexpr):" in fixed(code, f)


def test_block_pointer_shapes_and_method_reshape():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, n, BM, BN: tl.constexpr):
        p = tl.make_block_ptr(x_ptr, (n, n), (n, 1), (0, 0), block_shape=(BM, BN), order=(1, 0))
        x = tl.load(p)
        y = x.reshape(BN, BM)
        tl.store(p, tl.trans(y))
    """
    (f,) = lint(code, "TRI019")
    assert "`BM` is a block shape" in f.message


def test_sizes_and_runtime_loops_are_not_shapes():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, n, BLOCK: tl.constexpr):
        for i in range(0, n, BLOCK):
            offs = i + tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, 0.0, mask=offs < n)
    """
    assert lint(code, "TRI019") == []


def test_a_plain_local_bound_to_a_number_is_reported_with_a_constexpr_fix():
    from tests.lintutil import fixed
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr):
        block_size = 256
        offs = tl.program_id(0) * block_size + tl.arange(0, block_size)
        tl.store(x_ptr + offs, 1.0)
    """
    (f,) = lint(code, "TRI019")
    assert "plain local (line 7)" in f.message
    out = fixed(code, f)
    assert "    block_size: tl.constexpr = 256\n" in out
    compile(out, "fixed.py", "exec")


# Reduced from TritonBench-T programs Triton 3.6 rejected ("arange's arguments must be of type
# tl.constexpr"): the bound is a local holding a run-time value, a grid size or an element of a shape
# tuple the launch passes as it is.
_RUNTIME_BOUNDS = """
    import triton
    import triton.language as tl

    @triton.jit
    def grid_stride_kernel(x_ptr, out_ptr, n):
        width = tl.num_programs(0)
        offs = tl.program_id(0) * width + tl.arange(0, width)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

    @triton.jit
    def channels_kernel(x_ptr, out_ptr, x_shape, BLOCK: tl.constexpr):
        batch, channels = x_shape
        rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        cols = tl.arange(0, channels)
        tl.store(out_ptr + rows[:, None] * channels + cols[None, :], rows[:, None] + cols[None, :])

    def launch(x, out):
        grid_stride_kernel[(4,)](x, out, x.numel())
        channels_kernel[(4,)](x, out, x.shape, BLOCK=64)
    """


def test_a_bound_holding_a_run_time_value_is_reported():
    findings = lint(_RUNTIME_BOUNDS, "TRI019")
    assert [(f.line, f.message.split("`")[1]) for f in findings] == [(8, "width"), (15, "channels")]
    assert "`tl.num_programs(0)`, a run-time value" in findings[0].message and findings[0].fixes == []
    assert "tuple parameter `x_shape` (the launch on line 20 passes `x.shape`)" in findings[1].message


def test_a_constexpr_tuple_or_an_unlaunched_one_is_not():
    constexpr_shape = _RUNTIME_BOUNDS.replace("x_shape, BLOCK: tl.constexpr", "x_shape: tl.constexpr, BLOCK: tl.constexpr")
    assert [f.line for f in lint(constexpr_shape, "TRI019")] == [8]
    unlaunched = _RUNTIME_BOUNDS.replace("        channels_kernel[(4,)](x, out, x.shape, BLOCK=64)\n", "")
    assert [f.line for f in lint(unlaunched, "TRI019")] == [8]
