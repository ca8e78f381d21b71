import ast

from tritonify.diagnostics.model import Applicability
from tests.lintutil import fixed, lint, lint_fixture, marked_lines


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI002.py", "TRI002")
    assert sorted({f.line for f in findings}) == marked_lines("TRI002.py", "TRI002")
    # the launch line passes two float64 tensors: one finding per argument
    launch_line = marked_lines("TRI002.py", "TRI002")[-2]
    assert sum(f.line == launch_line for f in findings) == 2


KERNEL = """
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    acc = x.to(tl.float64) * 2
    tl.store(out_ptr + offs, acc, mask=offs < n)
"""


def test_message_names_the_fix_and_fix_is_unsafe_float32():
    (f,) = lint(KERNEL, "TRI002")
    assert "cast to float64" in f.message
    assert "fp32 accumulation" in f.message and "constexpr" in f.message
    assert f.fixes[0].applicability is Applicability.UNSAFE
    out = fixed(KERNEL, f)
    assert "acc = x.to(tl.float32) * 2" in out
    ast.parse(out)
    assert lint(out, "TRI002") == []


def test_aliases_and_from_imports():
    code = """
    import triton
    import triton.language as language
    from triton.language import float64

    @triton.jit
    def k(p, BLOCK: language.constexpr):
        a = language.zeros([BLOCK], dtype=language.float64)
        b = language.load(p + language.arange(0, BLOCK)).to(float64)
        language.store(p + language.arange(0, BLOCK), a + b)
    """
    findings = lint(code, "TRI002")
    assert len(findings) == 2
    out = fixed(code, findings[0])
    assert "dtype=language.float32" in out
    assert "language.float32" in fixed(code, findings[1])


def test_constexpr_flag_branch_is_quiet_but_plain_if_is_not():
    gated = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(p, n, FP64: tl.constexpr, BLOCK: tl.constexpr):
        x = tl.load(p + tl.arange(0, BLOCK))
        if FP64:
            x = x.to(tl.float64)
        if n > 4:
            x = x.to(tl.float64)
        tl.store(p + tl.arange(0, BLOCK), x)
    """
    findings = lint(gated, "TRI002")
    assert [f.line for f in findings] == [11]


def test_dtype_checks_are_quiet():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(p):
        x = tl.load(p)
        if x.dtype == tl.float64:
            x = x * 2
        tl.static_assert(p.dtype.element_ty != tl.float64)
        tl.store(p, x)
    """
    assert lint(code, "TRI002") == []


def test_literal_next_to_known_float_tensor_is_quiet():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(p, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(p + offs).to(tl.float32)
        y = x * 1e-40
        z = offs * 1e-40
        tl.store(p + offs, y + z)
    """
    findings = lint(code, "TRI002")
    assert [f.line for f in findings] == [10]
    assert "int tensor" in findings[0].message


def test_host_trace_through_locals_and_fix():
    code = """
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs))

    def run(x):
        xd = x.double()
        xd = xd.contiguous()
        y = torch.empty_like(xd)
        k[(1,)](xd, y_ptr=y, n=x.numel(), BLOCK=128)
    """
    findings = lint(code, "TRI002")
    assert [f.line for f in findings] == [15, 15]
    assert "x.double()" in findings[0].message and "as `x_ptr`" in findings[0].message
    assert "as `y_ptr`" in findings[1].message
    out = fixed(code, findings[0])
    assert "xd = x.float()" in out
    assert lint(out, "TRI002") == []


def test_host_reassignment_and_unknown_dtypes_are_quiet():
    code = """
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr, 1.0)

    def run(x, dtype):
        x = x.double()
        x = x.float()
        k[(1,)](x, BLOCK=128)
        k[(1,)](torch.empty(4, dtype=dtype), BLOCK=128)
        k[(1,)](x.to("cuda"), BLOCK=128)

    def other(t):
        k[(1,)](t, BLOCK=128)
    """
    assert lint(code, "TRI002") == []


def test_no_kernels_no_findings():
    code = """
    import torch
    x = torch.zeros(3, dtype=torch.float64)
    y = 1e-300
    """
    assert lint(code, "TRI002") == []


def test_deliberate_fp64_forms_are_quiet():
    # a dtype-following branch, a kernel named for fp64, a scale computed once per row in fp64,
    # an fp64 running max of values already reduced
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def trace_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        dt = x_ptr.type.element_ty
        if dt == tl.float64:
            acc_dtype = tl.float64
        else:
            acc_dtype = tl.float32
        acc = tl.zeros((BLOCK,), dtype=acc_dtype)
        tl.store(out_ptr, tl.sum(acc, 0))

    @triton.jit
    def weights_fp64_kernel(w_ptr, out_ptr, n):
        acc = tl.zeros([1], dtype=tl.float64)[0]
        for i in range(n):
            acc = acc + tl.load(w_ptr + i).to(tl.float64)
        tl.store(out_ptr, acc)

    @triton.jit
    def scale_kernel(x_ptr, s_ptr, y_ptr, K, FP8_MAX: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs).to(tl.float32)
        amax = tl.max(tl.abs(x), axis=0).to(tl.float64)
        scale = (FP8_MAX / amax).to(tl.float32)
        row_max = tl.zeros((BLOCK,), dtype=tl.float64) - float("inf")
        for k in range(0, K, BLOCK):
            part = tl.load(x_ptr + k + offs[:, None] * K + offs[None, :])
            row_max = tl.maximum(row_max, tl.max(tl.abs(part), axis=1))
        tl.store(s_ptr + offs, row_max.to(tl.float32) * scale)
    """
    assert lint(code, "TRI002") == []


def test_fp64_on_tiles_still_fires():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        acc = tl.zeros((BLOCK,), dtype=tl.float64)
        for s in range(0, n, BLOCK):
            x = tl.load(x_ptr + s + offs)
            acc += x
        tl.store(out_ptr + offs, tl.exp(x.to(tl.float64)))
    """
    assert [f.line for f in lint(code, "TRI002")] == [8, 12]
    assert lint(code, "TRI002", path="flag_gems/runtime/backend/_hygon/ops/pow.py") == []
