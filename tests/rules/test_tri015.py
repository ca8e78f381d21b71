import ast

from tritonify.diagnostics.model import Applicability
from tests.lintutil import fixed, lint, lint_fixture, marked_lines


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI015.py", "TRI015")
    assert [f.line for f in findings] == marked_lines("TRI015.py", "TRI015")


CAST = """
import triton
import triton.language as tl

@triton.jit
def k(a_ptr, b_ptr, BM: tl.constexpr):
    r = tl.arange(0, BM)
    a = tl.load(a_ptr + r[:, None] * BM + r[None, :]).to(tl.float32)
    b = tl.load(b_ptr + r[:, None] * BM + r[None, :])
    c = tl.dot(a, b)
    tl.store(a_ptr + r[:, None] * BM + r[None, :], c)
"""


def test_missing_precision_message_and_two_unsafe_fixes():
    (f,) = lint(CAST, "TRI015")
    assert 'input_precision="ieee"' in f.message and '"tf32"' in f.message
    assert [fx.applicability for fx in f.fixes] == [Applicability.UNSAFE, Applicability.UNSAFE]
    tf32 = fixed(CAST, f, 0)
    ieee = fixed(CAST, f, 1)
    assert 'c = tl.dot(a, b, input_precision="tf32")' in tf32
    assert 'c = tl.dot(a, b, input_precision="ieee")' in ieee
    for out in (tf32, ieee):
        ast.parse(out)
        assert lint(out, "TRI015") == []


def test_allow_tf32_false_is_a_safe_rewrite():
    code = CAST.replace("c = tl.dot(a, b)", "c = tl.dot(a, b, allow_tf32=False)")
    (f,) = lint(code, "TRI015")
    assert "deprecated" in f.message
    assert f.fixes[0].applicability is Applicability.SAFE
    out = fixed(code, f)
    assert 'c = tl.dot(a, b, input_precision="ieee")' in out
    assert lint(out, "TRI015") == []


def test_allow_tf32_true_and_flag_rewrites_are_unsafe():
    code = CAST.replace("c = tl.dot(a, b)", "c = tl.dot(a, b, allow_tf32=True)")
    (f,) = lint(code, "TRI015")
    assert f.fixes[0].applicability is Applicability.UNSAFE
    assert 'c = tl.dot(a, b, input_precision="tf32")' in fixed(code, f)
    flag = CAST.replace("c = tl.dot(a, b)", "c = tl.dot(a, b, allow_tf32=TF32)")
    (g,) = lint(flag, "TRI015")
    assert 'input_precision="tf32" if TF32 else "ieee"' in fixed(flag, g)


def test_unknown_and_half_operands_are_quiet():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(a_ptr, b_ptr, BM: tl.constexpr):
        r = tl.arange(0, BM)
        a = tl.load(a_ptr + r[:, None] * BM + r[None, :])
        b = tl.load(b_ptr + r[:, None] * BM + r[None, :])
        c = tl.dot(a, b)
        d = tl.dot(a.to(tl.float16), b.to(tl.float16))
        e = tl.dot(a.to(tl.float32), b.to(tl.float32), None, "ieee")
        tl.store(a_ptr, c + d + e)
    """
    assert lint(code, "TRI015") == []


def test_pointer_dtype_comes_from_the_launch_site():
    code = """
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def k(a_ptr, b_ptr, BM: tl.constexpr):
        r = tl.arange(0, BM)
        ptrs = a_ptr + r[:, None] * BM + r[None, :]
        a = tl.load(ptrs)
        b = tl.load(b_ptr + r[:, None] * BM + r[None, :])
        tl.store(ptrs, tl.dot(a, b))

    def run():
        a = torch.randn(32, 32, device="cuda")
        b = torch.randn(32, 32, device="cuda", dtype=DTYPE)
        k[(1,)](a, b, BM=32)
    """
    # `a` is fp32 (torch default), so `b` must be too for tl.dot to compile
    assert [f.line for f in lint(code, "TRI015")] == [12]
    half = code.replace('a = torch.randn(32, 32, device="cuda")', 'a = torch.randn(32, 32, device="cuda").half()')
    assert lint(half, "TRI015") == []
    two = code + "    k[(1,)](a.half(), b, BM=32)\n"
    assert lint(two, "TRI015") == []  # launches disagree: dtype unknown
