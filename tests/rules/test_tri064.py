import textwrap

from tritonify.diagnostics.engine import lint_text
from tritonify.diagnostics.model import Severity
from tritonify.diagnostics.registry import get_rule
from tritonify.diagnostics.settings import Settings

from tests.lintutil import FIXTURES, lint, lint_fixture, marked_lines
from tests.rules.frontend_check import frontend_errors, marked_kernels, needs_triton

HEADER = """
    import triton
    import triton.language as tl
"""


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI064.py", "TRI064")
    assert [f.line for f in findings] == marked_lines("TRI064.py", "TRI064")
    assert all(f.severity is Severity.ERROR for f in findings)


@needs_triton
def test_marked_kernels_are_exactly_the_ones_triton_rejects():
    path = FIXTURES / "TRI064.py"
    errors = frontend_errors(path)
    expected = marked_kernels(path, "TRI064")
    wrong = {name: errors[name] for name, marked in expected.items() if marked != (errors[name] is not None)}
    assert wrong == {}


def test_opt_in_for_its_cost_and_not_given_twice_with_tri021():
    # opt-in: its shape inference costs the default set its speed target (the rule's comment has the figures)
    assert not get_rule("TRI064").rule.default and not get_rule("TRI021").rule.default
    text = (FIXTURES / "TRI064.py").read_text()
    default = lint_text(text, "TRI064.py", Settings()).findings
    assert [f for f in default if f.code == "TRI064"] == []
    selected = lint_text(text, "TRI064.py", Settings(select=("TRI064",))).findings
    assert sorted(f.line for f in selected if f.code == "TRI064") == marked_lines("TRI064.py", "TRI064")
    both = lint_text(text, "TRI064.py", Settings(select=("TRI021", "TRI064"))).findings
    assert [f.code for f in both] == ["TRI064"] * len(marked_lines("TRI064.py", "TRI064"))


def test_messages_name_the_ranks():
    messages = {f.line: f.message for f in lint_fixture("TRI064.py", "TRI064")}
    lines = marked_lines("TRI064.py", "TRI064")
    assert "rank 2 but the pointer block has rank 1" in messages[lines[1]]
    assert "mask `inside` has rank 3" in messages[lines[2]]
    assert "with 1 dim" in messages[lines[4]] and "`tl.trans(a)`" in messages[lines[4]]


def test_a_tuple_of_dims_or_a_name_is_read_as_triton_reads_it():
    code = HEADER + """
    @triton.jit
    def k(a_ptr, o_ptr, DIMS: tl.constexpr):
        r = tl.program_id(0) * 0 + tl.arange(0, 16)
        a = tl.load(a_ptr + r[:, None] * 16 + r[None, :])
        ok = tl.permute(a, DIMS) + a.permute(*DIMS) + tl.trans(a, (1, 0))
        bad = tl.permute(a, (0, 1, 2))
        tl.store(o_ptr + r[:, None] * 16 + r[None, :], ok)
    """
    (f,) = lint(code, "TRI064")
    assert "bad = tl.permute(a, (0, 1, 2))" in code.splitlines()[f.line - 1] and "with 3 dims" in f.message


def test_a_vendor_fork_is_not_judged():
    code = textwrap.dedent(HEADER + """
    @triton.jit
    def k(x_ptr, out_ptr):
        pid = tl.program_id(0)
        acc = tl.zeros((16, 32), dtype=tl.float32)
        tl.store(out_ptr + pid * 32 + tl.arange(0, 32), acc)
    """)
    assert [f.code for f in lint_text(code, "ops/plain.py", Settings(select=("TRI064",))).findings] == ["TRI064"]
    assert lint_text(code, "backend/_ascend/ops/plain.py", Settings(select=("TRI064",))).findings == []


def test_transposed_and_batched_dots_are_fine_and_a_3d_by_2d_dot_is_not():
    code = HEADER + """
    @triton.jit
    def k(q_ptr, k_ptr, o_ptr):
        pid = tl.program_id(0)
        r = tl.arange(0, 32)
        d = tl.arange(0, 64)
        q = tl.load(q_ptr + r[:, None] * 64 + d[None, :])
        kk = tl.load(k_ptr + r[:, None] * 64 + d[None, :])
        s = tl.dot(q, tl.trans(kk))
        s2 = tl.dot(q, kk.T)
        batch = tl.zeros((2, 32, 64), dtype=tl.float16)
        ok3 = tl.dot(batch, tl.zeros((2, 64, 16), dtype=tl.float16))
        bad = tl.dot(batch, kk)
        tl.store(o_ptr + r[:, None] * 32 + r[None, :], s + s2)
    """
    (f,) = lint(code, "TRI064")
    assert "bad = tl.dot(batch, kk)" in code.splitlines()[f.line - 1]
    assert "rank 3" in f.message and "rank 2" in f.message


def test_reduction_methods_and_keep_dims():
    code = HEADER + """
    @triton.jit
    def k(x_ptr, o_ptr):
        pid = tl.program_id(0)
        r = tl.arange(0, 16)
        x = tl.load(x_ptr + r[:, None] * 16 + r[None, :])
        m = tl.max(x, axis=1, keep_dims=True)   # [16, 1]
        y = x - m                               # fine
        s = y.sum(axis=2)
        tl.store(o_ptr + r[:, None] * 16 + r[None, :], y)
    """
    (f,) = lint(code, "TRI064")
    assert "axis 2" in f.message and "rank 2" in f.message and "y.sum(axis=2)" in code.splitlines()[f.line - 1]
