"""TRI009 on MoE router softmaxes (issue 28): the 2-D (tokens x experts) forms routers are written in,
a row sum broadcast back with ``[:, None]`` or ``keep_dims=True``, are unshifted softmaxes like any
other; the max-shifted router of the MoE template is quiet."""
from pathlib import Path

from tests.lintutil import lint

ROUTERS = """
import triton
import triton.language as tl


@triton.jit
def router_2d(logits_ptr, w_ptr, n_tokens, n_experts, K: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_E: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    cols = tl.arange(0, BLOCK_E)
    mask = (rows[:, None] < n_tokens) & (cols[None, :] < n_experts)
    x = tl.load(logits_ptr + rows[:, None] * n_experts + cols[None, :], mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x)
    probs = e / tl.sum(e, axis=1)[:, None]
    for k in tl.static_range(K):
        best = tl.argmax(probs, axis=1)
        tl.store(w_ptr + rows * K + k, tl.max(probs, axis=1), mask=rows < n_tokens)
        probs = tl.where(cols[None, :] == best[:, None], float("-inf"), probs)


@triton.jit
def router_keep_dims(logits_ptr, w_ptr, n_experts, BLOCK_T: tl.constexpr, BLOCK_E: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    cols = tl.arange(0, BLOCK_E)
    x = tl.load(logits_ptr + rows[:, None] * n_experts + cols[None, :])
    scores = tl.exp(x.to(tl.float32))
    scores = scores / tl.sum(scores, axis=-1, keep_dims=True)
    tl.store(w_ptr + rows[:, None] * n_experts + cols[None, :], scores)
"""


def test_unshifted_router_softmaxes_are_reported():
    findings = lint(ROUTERS, "TRI009")
    assert len(findings) == 2
    assert all("max" in f.message for f in findings)


def test_the_moe_templates_router_is_quiet():
    source = (Path(__file__).resolve().parents[2] / "kernels" / "templates" / "moe.py").read_text()
    assert not lint(source, "TRI009")
