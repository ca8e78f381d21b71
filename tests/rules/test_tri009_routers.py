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


ACCUMULATED = """
import triton
import triton.language as tl


@triton.jit
def renormalise_chosen_logits(topk_logits_ptr, weights_ptr, K: tl.constexpr):
    row = tl.program_id(0)
    denom = 0.0
    for k in tl.static_range(K):
        v = tl.load(topk_logits_ptr + row * K + k).to(tl.float32)
        denom += tl.exp(v)
    for k in tl.static_range(K):
        v = tl.load(topk_logits_ptr + row * K + k).to(tl.float32)
        tl.store(weights_ptr + row * K + k, tl.exp(v) / denom)


@triton.jit
def streaming_router(logits_ptr, weights_ptr, n_experts, BLOCK_E: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK_E,), dtype=tl.float32)
    for start in range(0, n_experts, BLOCK_E):
        cols = start + tl.arange(0, BLOCK_E)
        x = tl.load(logits_ptr + row * n_experts + cols, mask=cols < n_experts, other=float("-inf"))
        acc = acc + tl.exp(x)
    denom = tl.sum(acc, axis=0)
    for start in range(0, n_experts, BLOCK_E):
        cols = start + tl.arange(0, BLOCK_E)
        x = tl.load(logits_ptr + row * n_experts + cols, mask=cols < n_experts, other=float("-inf"))
        tl.store(weights_ptr + row * n_experts + cols, tl.exp(x) / denom, mask=cols < n_experts)
"""


def test_a_softmax_whose_sum_is_accumulated_in_a_loop_is_reported():
    """Routers that renormalise over their K chosen logits one scalar at a time (`denom += tl.exp(v)`,
    then `tl.exp(v) / denom`), and a streaming softmax over the experts in blocks, overflow exactly like
    the one-block form; the sum is a running one, so the message names the running max."""
    findings = lint(ACCUMULATED, "TRI009")
    assert sorted(f.line for f in findings) == [12, 25]
    assert all("running max" in f.message for f in findings)
    assert not any(f.fixes for f in findings), "a running sum needs a running max: no mechanical edit"


def test_accumulated_forms_that_are_shifted_or_not_divided_are_quiet():
    shifted = ACCUMULATED.replace("denom += tl.exp(v)", "denom += tl.exp(v - m)").replace(
        "tl.exp(v) / denom", "tl.exp(v - m) / denom").replace(
        "    denom = 0.0\n", "    denom = 0.0\n    m = tl.load(topk_logits_ptr + row * K)\n").replace(
        "acc = acc + tl.exp(x)", "acc = acc + tl.exp(x - m)").replace(
        "tl.exp(x) / denom", "tl.exp(x - m) / denom").replace(
        "    acc = tl.zeros((BLOCK_E,), dtype=tl.float32)\n",
        "    acc = tl.zeros((BLOCK_E,), dtype=tl.float32)\n    m = tl.load(logits_ptr + row * n_experts)\n")
    assert not lint(shifted, "TRI009")
    # a running sum of exps that is stored, never divided by nor logged, is not a softmax
    stored = ACCUMULATED.replace("tl.exp(v) / denom", "denom").replace("tl.exp(x) / denom", "denom")
    assert not lint(stored, "TRI009")


def test_a_sigmoid_router_renormalised_over_its_top_k_is_quiet():
    """Sigmoid scores cannot overflow (`1 / (1 + exp(-x))` goes to 0, not nan), and the renormalisation
    divides by a sum of sigmoids, not of exps: nothing to shift."""
    code = '''
import triton
import triton.language as tl


@triton.jit
def sigmoid_router(logits_ptr, weights_ptr, ids_ptr, n_experts, K: tl.constexpr, BLOCK_E: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_E)
    x = tl.load(logits_ptr + row * n_experts + cols, mask=cols < n_experts, other=float("-inf")).to(tl.float32)
    s = 1.0 / (1.0 + tl.exp(-x))
    kk = tl.arange(0, K)
    top = tl.zeros((K,), dtype=tl.float32)
    for k in tl.static_range(K):
        best = tl.argmax(s, axis=0)
        top = tl.where(kk == k, tl.max(s, axis=0), top)
        tl.store(ids_ptr + row * K + k, best)
        s = tl.where(cols == best, -1.0, s)
    tl.store(weights_ptr + row * K + kk, top / tl.sum(top, axis=0))
'''
    assert not lint(code, "TRI009")


def test_a_softmax_over_the_chosen_logits_after_top_k_is_reported():
    """Mixtral's order: top-k on the raw logits, then a softmax over the K values kept; the values are
    raw logits, so the same overflow."""
    code = '''
import triton
import triton.language as tl


@triton.jit
def topk_then_softmax(logits_ptr, weights_ptr, ids_ptr, n_experts, K: tl.constexpr, BLOCK_E: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_E)
    x = tl.load(logits_ptr + row * n_experts + cols, mask=cols < n_experts, other=float("-inf")).to(tl.float32)
    kk = tl.arange(0, K)
    top = tl.zeros((K,), dtype=tl.float32)
    for k in tl.static_range(K):
        best = tl.argmax(x, axis=0)
        top = tl.where(kk == k, tl.max(x, axis=0), top)
        tl.store(ids_ptr + row * K + k, best)
        x = tl.where(cols == best, float("-inf"), x)
    ew = tl.exp(top)
    tl.store(weights_ptr + row * K + kk, ew / tl.sum(ew, axis=0))
'''
    (f,) = lint(code, "TRI009")
    assert f.line == 18 and f.fixes, "the one-block form keeps its shift fix"
