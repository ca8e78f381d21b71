import textwrap
import time

from tritonify.diagnostics.engine import lint_text
from tritonify.diagnostics.model import Severity
from tritonify.diagnostics.settings import Settings

from tests.lintutil import FIXTURES, lint, lint_fixture, marked_lines
from tests.rules.frontend_check import frontend_errors, marked_kernels, needs_triton

HEADER = """
    import triton
    import triton.language as tl
"""


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI021.py", "TRI021")
    assert [f.line for f in findings] == marked_lines("TRI021.py", "TRI021")
    assert all(f.severity is Severity.ERROR for f in findings)


@needs_triton
def test_marked_kernels_are_exactly_the_ones_triton_rejects():
    path = FIXTURES / "TRI021.py"
    errors = frontend_errors(path)
    expected = marked_kernels(path, "TRI021")
    assert set(errors) == set(expected)
    wrong = {name: errors[name] for name, marked in expected.items() if marked != (errors[name] is not None)}
    assert wrong == {}


def test_messages_carry_the_inferred_shapes():
    messages = [f.message for f in lint_fixture("TRI021.py", "TRI021")]
    assert any("[32, 64]" in m and "[32, 32]" in m and "K 64 vs 32" in m for m in messages)
    assert any("[16, 32] and [16]" in m for m in messages)
    assert any("autotune configs" in m for m in messages)


def test_a_default_passed_at_the_launch_is_not_trusted():
    code = HEADER + """
    @triton.jit
    def k(x_ptr, y_ptr, BLOCK_A: tl.constexpr = 16, BLOCK_B: tl.constexpr = 32):
        pid = tl.program_id(0)
        a = tl.load(x_ptr + tl.arange(0, BLOCK_A))
        b = tl.load(y_ptr + tl.arange(0, BLOCK_B))
        tl.store(x_ptr + tl.arange(0, BLOCK_A), a + b)

    def launch(x, y):
        k[(1,)](x, y, BLOCK_A=32)
    """
    assert lint(code, "TRI021") == []
    assert len(lint(code.replace("k[(1,)](x, y, BLOCK_A=32)", "k[(1,)](x, y)"), "TRI021")) == 1


def test_helpers_and_unknown_sizes_stay_quiet():
    code = HEADER + """
    @triton.jit
    def scale_rows(x, w):
        return x * w[:, None] + tl.sum(x, axis=1)[:, None]

    @triton.jit
    def k(x_ptr, o_ptr, n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
        pid = tl.program_id(0)
        rm = tl.arange(0, BLOCK_M)
        rn = tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + rm[:, None] * n + rn[None, :])
        w = tl.load(x_ptr + rn)
        tl.store(o_ptr + rm[:, None] * n + rn[None, :], scale_rows(x, w) + w)
    """
    assert lint(code, "TRI021") == []


def test_a_long_file_lints_fast():
    kernel = """
@triton.jit
def k{i}(a_ptr, b_ptr, c_ptr, K, BLOCK_M: tl.constexpr = 32, BLOCK_N: tl.constexpr = 32, BLOCK_K: tl.constexpr = 16):
    pid = tl.program_id(0)
    rm = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(k + rk)[None, :] < K, other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * BLOCK_N + rn[None, :], mask=(k + rk)[:, None] < K, other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BLOCK_N + rn[None, :], acc - tl.max(acc, axis=1)[:, None])
"""
    code = "import triton\nimport triton.language as tl\n" + "".join(kernel.format(i=i) for i in range(240))
    assert len(code.splitlines()) > 3000
    lint(code, "TRI021")  # warm imports
    start = time.process_time()
    assert lint(code, "TRI021") == []
    assert time.process_time() - start < 1.5


EXAMPLE = FIXTURES.parents[2] / "examples" / "triton" / "constructs_attention_scores.py"


def test_example_fires_once_per_kernel_without_cascading():
    findings = lint(EXAMPLE.read_text(), "TRI021")
    assert len(findings) == 2
    assert "K 64 vs 32" in findings[0].message
    assert "[64, 32] and [32, 1]" in findings[1].message


@needs_triton
def test_example_kernels_do_not_compile():
    errors = frontend_errors(EXAMPLE)
    assert "equal reduction dimensions" in errors["attention_scores_kernel"]
    assert "incompatible dimensions" in errors["add_key_bias_kernel"]


def test_a_method_reduction_without_arguments_is_read_not_crashed_on():
    # `x.sum()` (no axis) in a TritonBench-T program made TRI021 raise IndexError (internal error)
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def total_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
        x = tl.load(x_ptr + tl.arange(0, BLOCK))
        tl.store(out_ptr, x.sum())
    """
    result = lint_text(textwrap.dedent(code), "total.py", Settings(select=("TRI021",)))
    assert result.error is None and result.findings == []


# Reduced from TritonBench-T matmuls Triton 3.6 rejected ("input and other must have equal reduction
# dimensions"): the block sizes have no defaults; the one launch passes them, as host constants.
_LAUNCHED_SIZES = HEADER + """
    @triton.jit
    def mm_kernel(a_ptr, b_ptr, c_ptr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
        pid = tl.program_id(0)
        rm = pid * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = tl.arange(0, BLOCK_N)
        rk = tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None] * BLOCK_K + rk[None, :])
        b = tl.load(b_ptr + rn[:, None] * BLOCK_K + rk[None, :])
        c = tl.dot(a, b)
        tl.store(c_ptr + rm[:, None] * BLOCK_N + rn[None, :], c)

    def mm(a, b, c):
        BLOCK_M = 64
        BLOCK_K = 32
        mm_kernel[(4,)](a, b, c, BLOCK_M=BLOCK_M, BLOCK_N=64, BLOCK_K=BLOCK_K)
    """


def test_sizes_every_launch_passes_as_one_integer_are_known():
    (f,) = lint(_LAUNCHED_SIZES, "TRI021")
    assert "c = tl.dot(a, b)" in textwrap.dedent(_LAUNCHED_SIZES).splitlines()[f.line - 1]
    assert "K 32 vs 64" in f.message


def test_launches_that_disagree_or_cannot_be_read_leave_the_sizes_unknown():
    square = "        mm_kernel[(4,)](a, b, c, BLOCK_M=64, BLOCK_N=32, BLOCK_K=32)\n"
    assert lint(_LAUNCHED_SIZES + square, "TRI021") == []
    assert lint(_LAUNCHED_SIZES.replace("BLOCK_M = 64", "BLOCK_M = 64 if a.shape[0] > 64 else 32")
                .replace("BLOCK_K = 32", "BLOCK_K = min(32, a.shape[1])"), "TRI021") == []
    assert lint(_LAUNCHED_SIZES.replace("BLOCK_N=64, BLOCK_K=BLOCK_K)", "**cfg)"), "TRI021") == []
