import ast

from tritonify.diagnostics.model import Applicability
from tests.lintutil import fixed, lint, lint_fixture, marked_lines


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI036.py", "TRI036")
    assert [f.line for f in findings] == marked_lines("TRI036.py", "TRI036")


SNIPPET = """
import triton
import triton.language as tl

@triton.jit
def router(logits_ptr, ids_ptr, n, K: tl.constexpr, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    x = tl.load(logits_ptr + cols, mask=cols < n, other=float("-inf"))
    p = tl.exp(x - tl.max(x, axis=0))
    p = p / tl.sum(p, axis=0)
    for k in tl.static_range(K):
        i = tl.argmax(p, axis=0)
        tl.store(ids_ptr + k, i)
        p = tl.where(cols == i, 0.0, p)
"""


def test_fix_masks_with_minus_infinity_and_is_offered_for_review():
    (f,) = lint(SNIPPET, "TRI036")
    assert "-inf" in f.message and "tie" in f.message
    assert f.fixes[0].applicability is Applicability.UNSAFE
    out = fixed(SNIPPET, f)
    assert 'p = tl.where(cols == i, float("-inf"), p)' in out
    ast.parse(out)
    assert not lint(out, "TRI036")


def test_the_mask_outside_a_loop_or_on_another_tensor_is_quiet():
    code = SNIPPET.replace("        p = tl.where(cols == i, 0.0, p)", "        q = tl.where(cols == i, 0.0, p)")
    assert not lint(code, "TRI036")
    code = SNIPPET.replace("    p = tl.exp(x - tl.max(x, axis=0))\n    p = p / tl.sum(p, axis=0)\n",
                           "    p = x - 1.0\n")
    assert not lint(code, "TRI036"), "scores of unknown sign: a mask of 0 is not known to tie"
