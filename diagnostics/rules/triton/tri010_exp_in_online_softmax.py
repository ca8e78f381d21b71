"""TRI010 exp-in-online-softmax: `tl.exp` on the scores of an attention loop, where
`tl.exp2` with log2(e) folded into the existing scale saves a multiply per element.

Only where the multiply costs: in an attention loop (one that computes `tl.dot`), an exp whose
argument carries the scores elementwise (`tl.exp(qk - m[:, None])`). Not the per-row rescale
`tl.exp(m_old - m_new)` (the max went through a reduction), not a decay gate computed from loads,
not an exp whose `if` has an exp2 branch beside it (a deliberate choice), and not an online
softmax without `tl.dot` (a streaming loop over logits: memory-bound, the multiply is hidden),
and not a decode or split-KV kernel (its name says `decode`, or a parameter names the splits:
a few query rows against a long KV, memory-bound too).
Only where the code targets NVIDIA or an unknown target (`ctx.target`): the `ex2.approx`
lowering is NVIDIA's.
The dense prefill/extend flash-attention tiles, where the gain was measured, are TRI063 (in the
default set); this rule reports the rest. The detection is `_score_exps.py`, shared with TRI063.
"""
from __future__ import annotations

from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Finding, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._score_exps import LOG2E, exp2_fixes, score_exps
from tritonify.diagnostics.rules.triton.tri063_exp_in_dense_attention_tile import dense_tile

RULE = Rule(
    code="TRI010",
    name="exp-in-online-softmax",
    summary="tl.exp on attention scores in a tl.dot loop (tl.exp2 with log2(e) folded into the scale is faster)",
    severity=Severity.INFO,
    fixable=True, safe_fix=False,
    # Opt-in: 4 of 8 findings were true positives in round 2 of the real-world study
    # (benchmarks/realworld/labels/round2_*.csv), under the 90% the default set requires.
    default=False,
)


def check(ctx: PythonContext) -> Iterator[Finding]:
    for found in score_exps(ctx):
        if dense_tile(ctx, found) is not None:
            continue  # TRI063's
        message = (
            f"`tl.exp` in an attention loop (tl.dot) lowers to a multiply by log2(e) plus `ex2`; call "
            f"`tl.exp2` and fold {LOG2E} into the scale you already apply after `tl.dot` "
            f"(`qk_scale = sm_scale * {LOG2E}`, running max in the same base): 5-8% faster on an H200"
        )
        yield ctx.finding(found.call, message, exp2_fixes(ctx, found.call))
