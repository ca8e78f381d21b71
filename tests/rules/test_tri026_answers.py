"""TRI026 remembers each Triton path's and each call form's answer per target versions
(`_lacking`, `_rejecting`): a later call of the same function in another form, in this file or
another, gets its own answer, never the one remembered for the first form."""
from __future__ import annotations

from tests.lintutil import lint
from tritonify.diagnostics.rules.triton import tri026_unknown_triton_api as tri026

KERNEL = """
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, {call})
"""


def _messages(call: str) -> list[str]:
    return [f.message for f in lint(KERNEL.format(call=call), "TRI026")]


def test_each_call_form_gets_its_own_answer():
    tri026._ANSWERS.clear()
    wrong = _messages("tl.sum(x, axis=0, keepdim=True) + x")
    assert len(wrong) == 1 and "keepdim" in wrong[0]
    # the same function, then the same path with a valid keyword, an extra positional, the wrong one again
    assert _messages("tl.sum(x, axis=0, keep_dims=True) + x") == []
    assert _messages("tl.sum(x, 0) + x") == []
    extra = _messages("tl.sum(x, 0, True, None, 1, 2) + x")
    assert len(extra) == 1 and "positional" in extra[0]
    assert _messages("tl.sum(x, axis=0, keepdim=True) + x") == wrong
    tri026._ANSWERS.clear()
    assert _messages("tl.sum(x, 0, True, None, 1, 2) + x") == extra   # as first asked: the same answer


def test_a_missing_name_is_answered_by_path():
    tri026._ANSWERS.clear()
    assert any("tanh" in m for m in _messages("tl.tanh(x)"))
    assert _messages("tl.sigmoid(x)") == []
    assert any("tanh" in m for m in _messages("tl.tanh(x) * 2"))
