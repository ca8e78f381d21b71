import ast

from tritonify.diagnostics.model import Applicability

from tests.lintutil import fixed, lint, lint_fixture, marked_lines


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI009.py", "TRI009")
    assert [f.line for f in findings] == marked_lines("TRI009.py", "TRI009")


def test_messages_distinguish_softmax_and_logsumexp():
    by_line = {f.line: f for f in lint_fixture("TRI009.py", "TRI009")}
    softmax, lse, _tile = marked_lines("TRI009.py", "TRI009")
    assert "softmax" in by_line[softmax].message and "88" in by_line[softmax].message
    assert "log-sum-exp" in by_line[lse].message and "add it back" in by_line[lse].message
    assert by_line[lse].fixes == []  # shifting alone would change the log-sum-exp


def test_fix_shifts_a_1d_row_with_the_sum_axis():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=float("-inf"))
        e = tl.exp(x)
        tl.store(y_ptr + offs, e / tl.sum(e, axis=0), mask=offs < n)
    """
    (f,) = lint(code, "TRI009")
    assert f.fixes[0].applicability is Applicability.UNSAFE
    out = fixed(code, f)
    assert "e = tl.exp(x - tl.max(x, axis=0))" in out
    ast.parse(out)
    assert lint(out, "TRI009") == []


def test_fix_keeps_dims_for_a_row_axis_of_a_tile():
    by_line = {f.line: f for f in lint_fixture("TRI009.py", "TRI009")}
    tile = marked_lines("TRI009.py", "TRI009")[2]
    (fix,) = by_line[tile].fixes
    assert fix.edits[0].new_text == "scaled - tl.max(scaled, axis=1, keep_dims=True)"


def test_exp2_and_libdevice_exp_count_too():
    code = """
    import triton
    import triton.language as tl
    from triton.language.extra import libdevice

    @triton.jit
    def k(x_ptr, y_ptr, BLOCK: tl.constexpr):
        x = tl.load(x_ptr + tl.arange(0, BLOCK))
        a = tl.exp2(x)
        b = libdevice.exp(x)
        tl.store(y_ptr + tl.arange(0, BLOCK), a / tl.sum(a, 0) + b / tl.sum(b, 0))
    """
    findings = lint(code, "TRI009")
    assert len(findings) == 2
    assert "above 128" in findings[0].message


def test_shift_by_a_loaded_lse_is_quiet():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, lse_ptr, y_ptr, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        x = tl.load(x_ptr + row * BLOCK + tl.arange(0, BLOCK))
        p = tl.exp(x - tl.load(lse_ptr + row))
        tl.store(y_ptr + row, tl.log(tl.sum(p, 0)))
    """
    assert lint(code, "TRI009") == []


def test_helper_parameters_are_the_callers_responsibility():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def _normalize(z):
        e = tl.exp(z)
        return e / tl.sum(e, axis=0)

    @triton.jit
    def k(x_ptr, y_ptr, BLOCK: tl.constexpr):
        x = tl.load(x_ptr + tl.arange(0, BLOCK))
        tl.store(y_ptr + tl.arange(0, BLOCK), _normalize(x - tl.max(x, axis=0)))
    """
    assert lint(code, "TRI009") == []


def test_where_with_minus_inf_string_keeps_the_shift():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        z = tl.where(offs < n, x - tl.max(x, axis=0), float("-inf"))
        e = tl.exp(z)
        tl.store(y_ptr + offs, e / tl.sum(e, axis=0))
    """
    assert lint(code, "TRI009") == []


def test_activation_forms_of_exp_are_not_softmaxes():
    # SiLU, tanh via exp, softplus: the exp is never the summed-and-divided value
    code = """
    import triton
    import triton.language as tl
    from triton.language.extra import libdevice

    @triton.jit
    def k(x_ptr, y_ptr, n, cap, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        x = x / (1 + tl.exp(-x))
        e2 = tl.exp(2 * x / cap)
        t = (e2 - 1) / (e2 + 1) * cap
        sp = tl.where(x > 20.0, x, libdevice.log1p(libdevice.exp(x)))
        ex = tl.exp(2 * sp / cap)
        sp = (ex - 1) / (ex + 1) * cap
        total = tl.sum(x * x + t + sp, 0)
        tl.store(y_ptr + offs, x / total, mask=offs < n)
    """
    assert lint(code, "TRI009") == []


def test_augmented_shift_and_stable_sigmoid_are_shifted():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        qk = tl.load(x_ptr + offs, mask=offs < n, other=-float("inf"))
        qk -= tl.max(qk, 0)
        p = tl.math.exp2(qk)
        z = tl.load(y_ptr + offs, mask=offs < n, other=0.0)
        neg = tl.where(z >= 0, -z, z)
        q = tl.exp2(neg * 1.4426950408889634)
        tl.store(y_ptr + offs, p / tl.sum(p, 0) + q / tl.sum(q, 0), mask=offs < n)
    """
    assert lint(code, "TRI009") == []
    unshifted = code.replace("qk -= tl.max(qk, 0)", "qk *= 2.0")
    (f,) = lint(unshifted, "TRI009")
    assert f.line == 10


def test_a_binding_in_the_other_branch_does_not_undo_the_shift():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(lse_ptr, out_ptr, N: tl.constexpr, BASE_E: tl.constexpr):
        lse = tl.load(lse_ptr + tl.arange(0, N))
        m = tl.max(lse, axis=0)
        lse -= m
        if BASE_E:
            lse = tl.log(tl.sum(tl.exp(lse), axis=0))
        else:
            lse = tl.log2(tl.sum(tl.exp2(lse), axis=0))
        tl.store(out_ptr, lse + m)
    """
    assert lint(code, "TRI009") == []
