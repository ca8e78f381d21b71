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
    a = tl.exp(tl.load(a_ptr + r[:, None] * BM + r[None, :]).to(tl.float32))
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


def test_allow_tf32_is_an_explicit_choice_and_quiet():
    # deprecated (triton#3498) but honoured: renaming it changes nothing, so it is not reported
    for kw in ("allow_tf32=False", "allow_tf32=True", "allow_tf32=TF32"):
        assert lint(CAST.replace("c = tl.dot(a, b)", f"c = tl.dot(a, b, {kw})"), "TRI015") == [], kw


def test_loads_cast_up_are_quiet_but_fp32_storage_and_computed_values_fire():
    code = """
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, y_ptr, g_ptr, BM: tl.constexpr):
        r = tl.arange(0, BM)
        x = tl.load(x_ptr + r[:, None] * BM + r[None, :]).to(tl.float32)
        xt = tl.trans(x)
        g = tl.dot(xt, x)
        y = tl.load(y_ptr + r[:, None] * BM + r[None, :]).to(tl.float32)
        h = tl.dot(y, y)
        p = tl.exp(x)
        q = tl.dot(p, x)
        causal = tl.where(r[:, None] >= r[None, :], 1.0, 0.0).to(tl.float32)
        q += tl.dot(causal, x)
        lo = (tl.load(x_ptr + r[:, None] * BM + r[None, :]).to(tl.uint8) & 15).to(tl.float32)
        q += tl.dot(x, lo)
        tl.store(g_ptr + r[:, None] * BM + r[None, :], g + h + q)

    def run(x, g):
        y = torch.randn(64, 64, device=x.device, dtype=torch.float32)
        k[(1,)](x.bfloat16(), y, g, BM=64)
    """
    assert [f.line for f in lint(code, "TRI015")] == [13, 15]   # h (fp32 storage) and q (computed)


def test_other_targets_are_quiet():
    assert len(lint(CAST, "TRI015", path="ops/mm.py")) == 1
    assert lint(CAST, "TRI015", path="fla/ops/common/backends/triton_ascend/chunk_o.py") == []
    assert lint(CAST, "TRI015", path="flag_gems/runtime/backend/_kunlunxin/ops/mm.py") == []


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
