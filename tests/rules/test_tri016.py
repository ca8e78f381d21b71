import ast

from tests.lintutil import apply_fixes
from tritonify.diagnostics.model import Applicability
from tests.lintutil import fixed, lint, lint_fixture, marked_lines


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI016.py", "TRI016")
    assert [f.line for f in findings] == marked_lines("TRI016.py", "TRI016")


SNIPPET = """
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, n, eps, BLOCK: tl.constexpr):
    \"\"\"Docstring stays first.\"\"\"
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(x_ptr + offs, x / (x + eps), mask=offs < n)
"""


def test_message_cites_evidence_and_names_the_fix():
    (f,) = lint(SNIPPET, "TRI016")
    assert "`eps`" in f.message and "`x + eps`" in f.message
    assert "fp64" in f.message and "Liger-Kernel#1350" in f.message
    assert "eps = tl.cast(eps, tl.float32)" in f.message


def test_fix_inserts_cast_after_docstring_with_body_indentation():
    (f,) = lint(SNIPPET, "TRI016")
    assert f.fixes[0].applicability is Applicability.SAFE
    out = fixed(SNIPPET, f)
    lines = out.splitlines()
    doc = lines.index('    """Docstring stays first."""')
    assert lines[doc + 1] == "    eps = tl.cast(eps, tl.float32)"
    ast.parse(out)
    assert lint(out, "TRI016") == []


def test_fix_without_docstring_and_nested_indentation():
    code = """
    import triton
    import triton.language as tl

    class Ops:
        @staticmethod
        @triton.jit
        def k(x_ptr, sm_scale, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            q = tl.load(x_ptr + offs)
            tl.store(x_ptr + offs, tl.exp(q * sm_scale))
    """
    (f,) = lint(code, "TRI016")
    out = fixed(code, f)
    assert "    def k(x_ptr, sm_scale, BLOCK: tl.constexpr):\n        sm_scale = tl.cast(sm_scale, tl.float32)\n        offs" in out
    ast.parse(out)


def test_two_params_fix_over_two_passes():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, alpha, beta, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        tl.store(x_ptr + offs, tl.sigmoid(alpha * x + beta))
    """
    import textwrap

    text = textwrap.dedent(code)
    findings = lint(text, "TRI016")
    assert len(findings) == 2
    for _ in range(3):
        findings = lint(text, "TRI016")
        if not findings:
            break
        text, _ = apply_fixes(text, findings)
    assert "alpha = tl.cast(alpha, tl.float32)" in text and "beta = tl.cast(beta, tl.float32)" in text
    ast.parse(text)
    assert lint(text, "TRI016") == []


def test_use_before_cast_still_fires_and_helpers_are_skipped():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def helper(x, eps):
        return x * eps

    @triton.jit
    def k(x_ptr, eps, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        y = tl.sqrt(x + eps)
        eps = eps.to(tl.float32)
        tl.store(x_ptr + offs, helper(y, eps))
    """
    findings = lint(code, "TRI016")
    assert [f.line for f in findings] == [13]


def test_unrelated_names_and_int_params_are_quiet():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, n_cols, stride, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs * stride, mask=offs < n_cols)
        tl.store(x_ptr + offs, x * n_cols)
    """
    assert lint(code, "TRI016") == []


def test_row_values_and_plain_stores_are_quiet():
    # the promoted value stays on a row statistic or a plain multiply before the store
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, lse_ptr, out_ptr, n, beta, momentum, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=0.0)
        kl = tl.exp(tl.load(lse_ptr + row)) - 1.0
        tl.store(out_ptr + row, kl * beta)
        mean = tl.sum(x, 0) / n
        tl.store(out_ptr + n + row, (1 - momentum) * tl.load(out_ptr + n + row) + momentum * mean)
        var = tl.sum(x * x, 0) / n
        tl.store(x_ptr + row * n + offs, x * tl.rsqrt(var + eps), mask=offs < n)
    """
    assert lint(code, "TRI016") == []


def test_other_targets_are_quiet():
    assert len(lint(SNIPPET, "TRI016", path="ops/norm.py")) == 1
    assert lint(SNIPPET, "TRI016", path="flag_gems/runtime/backend/_kunlunxin/ops/norm.py") == []
    assert lint(SNIPPET, "TRI016", path="fla/ops/utils/triton_ascend/cumsum.py") == []


def test_math_before_the_promotion_does_not_count():
    # `acc / l` is computed before `* v_scale` promotes it; the earlier division of q reads q
    # before `q * scale` rebinds it
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(q_ptr, o_ptr, n, v_scale, scale, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        acc = tl.load(o_ptr + offs)
        l = tl.sum(acc, 0)
        acc = acc / l * v_scale
        q = tl.load(q_ptr + offs)
        q = q / tl.sqrt(tl.sum(q * q) + 1e-6)
        q = q * scale
        tl.store(o_ptr + offs, acc + q)
    """
    assert lint(code, "TRI016") == []


def test_results_unpacked_from_a_helper_are_not_taken_for_tiles():
    # which of `_pick`'s results is a tile cannot be told: the division stays unreported
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def _pick(x, m):
        return tl.argmax(x, 0), tl.max(x, 0), m

    @triton.jit
    def k(x_ptr, w_ptr, route_scale, eps, E: tl.constexpr):
        offs = tl.arange(0, E)
        x = tl.load(x_ptr + offs)
        total = 0.0
        idx, score, m = _pick(x, offs < E)
        total = total + score + eps
        tl.store(w_ptr + idx, route_scale / total)
    """
    assert lint(code, "TRI016") == []


def test_a_loop_carried_accumulator_is_reported_as_a_compile_error():
    """Issue 26: under torch.compile the fp64 scalar makes a loop-carried fp32 accumulator fp64,
    which Triton rejects: the message says so, instead of a slowdown."""
    code = """
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        acc += tl.exp(x * scale)
    tl.store(out_ptr + tl.arange(0, BLOCK), acc)
"""
    found = lint(code, "TRI016")
    assert len(found) == 1
    assert "loop-carried `acc`" in found[0].message and "compile error" in found[0].message
    plain = code.replace("        acc += tl.exp(x * scale)\n", "        tl.store(out_ptr + offs, tl.exp(x * scale), mask=offs < n)\n")
    assert all("loop-carried" not in f.message for f in lint(plain, "TRI016"))
