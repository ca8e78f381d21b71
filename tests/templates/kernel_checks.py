"""Every template, forward and backward, against float64 autograd references.

Odd sizes (not powers of two, not multiples of any block) exercise the masks; each dtype of
bf16/fp16/fp32; fresh random inputs per case (never zeros or constants).

Not collected by the main test run (the name does not start with ``test_``): ``test_kernels.py`` runs
this file in a child pytest, on the CPU with ``TRITON_INTERPRET=1`` set before triton is imported
(the interpreter is fixed when ``triton.language`` and each kernel are decorated, so it cannot be
switched on inside a process that imported triton already), and on a CUDA GPU with
``TRITONIFY_TEST_DEVICE=cuda``.
"""
from __future__ import annotations

import importlib
import importlib.util
import os

import pytest
import torch
import triton
from tritonify.kernels.templates import list_templates

from tests.templates.helpers import (
    DEVICE,
    DTYPES,
    as_reference,
    assert_close,
    fresh_generator,
    leaf,
    randn,
)

if DEVICE == "cpu" and os.environ.get("TRITON_INTERPRET") != "1":
    raise RuntimeError("kernel_checks.py runs on the CPU only with TRITON_INTERPRET=1 set before the process starts")

MODULES = {t.name: importlib.import_module(f"tritonify.kernels.templates.{t.module}") for t in list_templates()}


def _one_config(tuner) -> None:
    """One config compiled per key instead of every one: the first that the tuner's own prune keeps for the
    key where it has a prune (Triton skips the prune of a one-config list, and a template's first config
    may not fit a layer's shape or shared memory: the conv2d forward's first asked 262 KB of the 227 KB on
    the H200 for a stride-2 case, 2026-12-03), the first config otherwise."""
    prune = getattr(tuner, "early_config_prune", None)
    if prune is None:
        tuner.configs = tuner.configs[:1]
        return
    tuner.early_config_prune = lambda configs, *args, **kwargs: list(prune(configs, *args, **kwargs))[:1]


if DEVICE != "cpu" and os.environ.get("TRITONIFY_TEMPLATE_CHECKS_ONE_CONFIG") == "1":
    # a short device run: compile the first autotune config only (every config is compiled, timed
    # and checked at full size by the benchmark harness run instead)
    for _module in MODULES.values():
        for _value in vars(_module).values():
            if isinstance(_value, triton.runtime.autotuner.Autotuner):
                _one_config(_value)

SHAPES = [(3, 37), (5, 130), (2, 3, 67)]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_rms_norm_forward_backward(dtype, shape):
    m, g = MODULES["rms_norm"], fresh_generator()
    x, w = randn(*shape, dtype=dtype, gen=g), randn(shape[-1], dtype=dtype, gen=g, scale=0.1, shift=1.0)
    dy = randn(*shape, dtype=dtype, gen=g)
    xk, wk, xr, wr = leaf(x), leaf(w), as_reference(x), as_reference(w)
    y = m.rms_norm(xk, wk, 1e-6)
    y.backward(dy)
    yr = m.rms_norm_reference(xr, wr, 1e-6)
    yr.backward(dy.double())
    assert y.dtype == dtype and y.shape == x.shape
    assert_close(y, yr, dtype, "y")
    assert_close(xk.grad, xr.grad, dtype, "dx")
    assert_close(wk.grad, wr.grad, dtype, "dweight", scale=4)  # a sum over rows


def test_rms_norm_refuses_rows_wider_than_registers():
    m = MODULES["rms_norm"]
    with pytest.raises(ValueError, match="exceeds"):
        m.rms_norm(torch.randn(1, m.RMS_NORM_MAX_HIDDEN + 1, device=DEVICE), torch.randn(m.RMS_NORM_MAX_HIDDEN + 1, device=DEVICE))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES[:2], ids=str)
def test_add_rms_norm_forward_backward(dtype, shape):
    m, g = MODULES["add_rms_norm"], fresh_generator()
    x, r = randn(*shape, dtype=dtype, gen=g), randn(*shape, dtype=dtype, gen=g)
    w = randn(shape[-1], dtype=dtype, gen=g, scale=0.1, shift=1.0)
    dy, ds = randn(*shape, dtype=dtype, gen=g), randn(*shape, dtype=dtype, gen=g)
    ks, rs = [leaf(t) for t in (x, r, w)], [as_reference(t) for t in (x, r, w)]
    y, s = m.add_rms_norm(*ks, 1e-6)
    torch.autograd.backward([y, s], [dy, ds])
    yr, sr = m.add_rms_norm_reference(*rs, 1e-6)
    torch.autograd.backward([yr, sr], [dy.double(), ds.double()])
    assert_close(y, yr, dtype, "y")
    assert_close(s, sr, dtype, "x + residual")
    for got, ref, what in zip(ks, rs, ("dx", "dresidual", "dweight")):
        assert_close(got.grad, ref.grad, dtype, what, scale=4 if what == "dweight" else 1)


def test_add_rms_norm_without_residual_gradient():
    """Only y is used downstream: the residual stream's gradient is None inside the backward."""
    m, g = MODULES["add_rms_norm"], fresh_generator()
    x, r, w = randn(4, 33, dtype=torch.float32, gen=g), randn(4, 33, dtype=torch.float32, gen=g), randn(33, dtype=torch.float32, gen=g)
    ks, rs = [leaf(t) for t in (x, r, w)], [as_reference(t) for t in (x, r, w)]
    m.add_rms_norm(*ks, 1e-6)[0].sum().backward()
    m.add_rms_norm_reference(*rs, 1e-6)[0].sum().backward()
    for got, ref, what in zip(ks, rs, ("dx", "dresidual", "dweight")):
        assert_close(got.grad, ref.grad, torch.float32, what)


@pytest.mark.parametrize("name", ["swiglu", "tanh_glu", "relu2_glu", "geglu_sigmoid"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(3, 37), (2, 5, 130)], ids=str)
def test_glu_variants_forward_backward(name, dtype, shape):
    m, g = MODULES[name], fresh_generator()
    a, b, dc = (randn(*shape, dtype=dtype, gen=g, scale=2.0) for _ in range(3))
    ak, bk, ar, br = leaf(a), leaf(b), as_reference(a), as_reference(b)
    a_before, b_before = a.clone(), b.clone()
    c = getattr(m, name)(ak, bk)
    c.backward(dc)
    cr = getattr(m, f"{name}_reference")(ar, br)
    cr.backward(dc.double())
    assert_close(c, cr, dtype, "c")
    assert_close(ak.grad, ar.grad, dtype, "da")
    assert_close(bk.grad, br.grad, dtype, "db")
    assert torch.equal(ak.detach(), a_before) and torch.equal(bk.detach(), b_before), "inputs must stay intact"


def test_glu_refuses_mismatched_shapes():
    with pytest.raises(ValueError, match="differ"):
        MODULES["swiglu"].swiglu(torch.randn(3, 4, device=DEVICE), torch.randn(3, 5, device=DEVICE))


def test_geglu_sigmoid_is_the_sigmoid_approximation_not_the_tanh_gelu():
    """Swapping it for gelu_tanh changes results by up to ~0.02: the reference must say which it is."""
    m, g = MODULES["geglu_sigmoid"], fresh_generator()
    a, b = randn(4, 64, dtype=torch.float32, gen=g, scale=2.0), torch.ones(4, 64, device=DEVICE)
    approx = m.geglu_sigmoid(a, b)
    tanh_gelu = torch.nn.functional.gelu(a, approximate="tanh")
    assert (approx - tanh_gelu).abs().max() > 5e-3
    assert_close(approx, m.geglu_sigmoid_reference(a.double(), b.double()), torch.float32, "c")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("rows,vocab,smoothing,reduction", [(5, 37, 0.0, "mean"), (4, 130, 0.1, "mean"),
                                                            (3, 5003, 0.2, "sum")], ids=str)
def test_cross_entropy_forward_backward(dtype, rows, vocab, smoothing, reduction):
    """vocab 5003 is wider than the interpreter's 4096 block: the online softmax crosses chunks."""
    m, g = MODULES["cross_entropy"], fresh_generator()
    logits = randn(rows, vocab, dtype=dtype, gen=g, scale=3.0)
    target = torch.randint(0, vocab, (rows,), generator=g).to(DEVICE)
    target[1] = -100
    lk, lr = leaf(logits), as_reference(logits)
    loss = m.cross_entropy(lk, target, -100, smoothing, reduction)
    loss.backward(torch.tensor(1.5, device=DEVICE))
    ref = m.cross_entropy_reference(lr, target, -100, smoothing, reduction)
    ref.backward(torch.tensor(1.5, dtype=torch.float64, device=DEVICE))
    assert loss.dtype == torch.float32
    assert_close(loss, ref, torch.float32, "loss")
    assert_close(lk.grad, lr.grad, dtype, "dlogits")
    assert (lk.grad[1] == 0).all(), "an ignored row gets no gradient"


def test_cross_entropy_writes_the_gradient_into_the_logits_and_leaves_them_alone_without_grad():
    m, g = MODULES["cross_entropy"], fresh_generator()
    logits = randn(4, 50, dtype=torch.float32, gen=g)
    target = torch.randint(0, 50, (4,), generator=g).to(DEVICE)
    untouched = logits.clone()
    m.cross_entropy(logits, target)  # no grad wanted: the logits are only read
    assert torch.equal(logits, untouched)
    lk = leaf(logits)
    loss = m.cross_entropy(lk, target)
    ref = (torch.softmax(untouched.double(), -1) - torch.nn.functional.one_hot(target, 50).double()) / 4
    assert_close(lk.detach(), ref, torch.float32, "the logits' memory after the forward")
    loss.backward()
    assert_close(lk.grad, ref, torch.float32, "dlogits")


@pytest.mark.parametrize("where", ["inplace", "new", "buffer"])
@pytest.mark.parametrize("vocab", [37, 5003], ids=["one-pass", "two-pass"])
def test_cross_entropy_gradient_is_computed_in_the_forward_wherever_it_goes(where, vocab):
    """The gradient exists once the forward returns (over the logits, in a new tensor or in the
    caller's buffer); the backward only scales it, twice in a row with fresh inputs (the second call
    takes the launcher's short path on a GPU)."""
    m = MODULES["cross_entropy"]
    for draw in range(2):
        g = fresh_generator()
        logits = randn(6, vocab, dtype=torch.float32, gen=g, scale=3.0)
        target = torch.randint(0, vocab, (6,), generator=g).to(DEVICE)
        target[2] = -100
        ref_logits = as_reference(logits)
        ref = m.cross_entropy_reference(ref_logits, target)
        ref.backward(torch.tensor(0.25, dtype=torch.float64, device=DEVICE))
        lk = leaf(logits)
        buffer = torch.full_like(logits, float("nan")) if where == "buffer" else None
        loss = m.cross_entropy(lk, target, inplace=where == "inplace", grad_buffer=buffer)
        forward_grad = (lk.detach() if where == "inplace" else buffer if where == "buffer" else None)
        if forward_grad is not None:   # already d loss / d logits, before any backward
            assert_close(forward_grad * 0.25, ref_logits.grad, torch.float32, f"gradient after the forward ({where})")
        if where != "inplace":
            assert torch.equal(lk.detach(), logits), "the logits must stay intact"
        loss.backward(torch.tensor(0.25, device=DEVICE))
        assert_close(loss, ref, torch.float32, "loss")
        assert_close(lk.grad, ref_logits.grad, torch.float32, f"dlogits ({where}, draw {draw})")


@pytest.mark.parametrize("where", ["inplace", "new"])
@pytest.mark.parametrize("form", ["leaf", "matmul"])
def test_cross_entropy_gradient_is_taken_over_by_autograd_not_copied(form, where):
    """Leaf logits that require grad (how Liger's benchmark builds them) and logits from a matmul (a
    training step's lm_head): the gradient the forward wrote reaches its consumer as that same memory.
    For a leaf, ``.grad`` is the tensor the forward wrote (over the logits with ``inplace``), not a copy
    of it (a copy is one more logits-sized allocation: on a GPU the peak is checked too)."""
    m, g = MODULES["cross_entropy"], fresh_generator()
    rows, hidden, vocab = 64, 8, 5003  # logits (1.3 MB) far larger than h, W and the allocator's 512-byte blocks
    h = randn(rows, hidden, dtype=torch.float32, gen=g)
    w = randn(vocab, hidden, dtype=torch.float32, gen=g, scale=0.3)
    target = torch.randint(0, vocab, (rows,), generator=g).to(DEVICE)
    target[1] = -100
    h64, w64 = as_reference(h), as_reference(w)
    ref_logits = (h64 @ w64.t()).detach().requires_grad_() if form == "leaf" else h64 @ w64.t()
    ref_logits.retain_grad()
    m.cross_entropy_reference(ref_logits, target).backward()
    hk, wk = leaf(h), leaf(w)
    logits = leaf(h @ w.t()) if form == "leaf" else hk @ wk.t()
    arrived = {}
    # the hook keeps no reference to the gradient: one more reference stops autograd taking it over
    logits.register_hook(lambda grad: arrived.update(ptr=grad.data_ptr()))
    loss = m.cross_entropy(logits, target, inplace=where == "inplace")
    if DEVICE == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
    loss.backward()
    if DEVICE == "cuda":
        torch.cuda.synchronize()
        extra = torch.cuda.max_memory_allocated() - before
        # a copy of the gradient is a logits-sized allocation; the matmul form's backward allocates dh and dw
        # (its own outputs) and nothing logits-sized
        logits_bytes = logits.numel() * 4
        allowed = (h.numel() + w.numel()) * 4 + logits_bytes // 2 if form == "matmul" else logits_bytes // 2
        assert extra <= allowed, f"backward allocated {extra} bytes ({form}, {where}); the logits are {logits_bytes}"
    if where == "inplace":
        assert arrived["ptr"] == logits.data_ptr(), "the gradient is written over the logits"
        assert_close(logits.detach(), ref_logits.grad, torch.float32, f"dlogits over the logits ({form})")
    if form == "leaf":
        assert logits.grad.data_ptr() == arrived["ptr"], ".grad is a copy of the gradient the forward wrote"
        assert_close(logits.grad, ref_logits.grad, torch.float32, f".grad ({where})")
    else:
        assert_close(hk.grad, h64.grad, torch.float32, "dh", scale=4.0)
        assert_close(wk.grad, w64.grad, torch.float32, "dw", scale=4.0)


def test_fused_linear_cross_entropy_gradients_are_taken_over_by_autograd_not_copied():
    """The other template whose gradients are computed in the forward: dh and dW reach .grad as the
    tensors the forward wrote (new tensors the Function alone holds), not copies of them."""
    m, g = MODULES["fused_linear_cross_entropy"], fresh_generator()
    h, w = leaf(randn(6, 16, dtype=torch.float32, gen=g)), leaf(randn(70, 16, dtype=torch.float32, gen=g, scale=0.25))
    target = torch.randint(0, 70, (6,), generator=g).to(DEVICE)
    arrived = {}
    h.register_hook(lambda grad: arrived.update(h=grad.data_ptr()))  # no reference kept (it would force a copy)
    w.register_hook(lambda grad: arrived.update(w=grad.data_ptr()))
    m.fused_linear_cross_entropy(h, w, target).backward()
    assert h.grad.data_ptr() == arrived["h"] and w.grad.data_ptr() == arrived["w"]


def test_cross_entropy_backward_with_grad_output_one_leaves_the_gradient_as_computed():
    m, g = MODULES["cross_entropy"], fresh_generator()
    grad = randn(3, 70, dtype=torch.bfloat16, gen=g)
    before = grad.clone()
    m.cross_entropy_scale_(grad, torch.tensor(1.0, device=DEVICE))
    assert torch.equal(grad, before)
    m.cross_entropy_scale_(grad, torch.tensor(-2.5, device=DEVICE))
    assert_close(grad, before.double() * -2.5, torch.bfloat16, "scaled")


def test_cross_entropy_refuses_a_grad_buffer_of_the_wrong_shape():
    m = MODULES["cross_entropy"]
    logits = torch.randn(2, 5, device=DEVICE).requires_grad_()
    with pytest.raises(ValueError, match="grad_buffer"):
        m.cross_entropy(logits, torch.tensor([0, 1], device=DEVICE), grad_buffer=torch.empty(2, 4, device=DEVICE))


def test_cross_entropy_all_rows_ignored_matches_pytorch():
    m = MODULES["cross_entropy"]
    logits, target = torch.randn(3, 11, device=DEVICE), torch.full((3,), -100, device=DEVICE)
    assert torch.isnan(m.cross_entropy(logits, target)) == torch.isnan(m.cross_entropy_reference(logits, target))
    assert m.cross_entropy(logits, target, reduction="sum").item() == 0.0


def test_cross_entropy_refuses_bad_arguments():
    m = MODULES["cross_entropy"]
    with pytest.raises(ValueError, match="reduction"):
        m.cross_entropy(torch.randn(2, 5, device=DEVICE), torch.tensor([0, 1], device=DEVICE), reduction="none")
    with pytest.raises(ValueError, match="want logits"):
        m.cross_entropy(torch.randn(2, 3, 5, device=DEVICE), torch.tensor([0, 1], device=DEVICE))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("with_bias,smoothing", [(True, 0.1), (False, 0.0)], ids=str)
def test_fused_linear_cross_entropy_forward_backward(dtype, with_bias, smoothing, monkeypatch):
    m, g = MODULES["fused_linear_cross_entropy"], fresh_generator()
    monkeypatch.setattr(m, "FUSED_LINEAR_CROSS_ENTROPY_MIN_CHUNK", 8)
    rows, hidden, vocab = 37, 24, 301  # vocab/hidden > 1 and 8-row chunks: several chunks, a ragged last one
    assert m._chunk_rows(rows, hidden, vocab) == 8
    h = randn(rows, hidden, dtype=dtype, gen=g)
    w = randn(vocab, hidden, dtype=dtype, gen=g, scale=hidden ** -0.5)
    b = randn(vocab, dtype=dtype, gen=g, scale=0.1) if with_bias else None
    target = torch.randint(0, vocab, (rows,), generator=g).to(DEVICE)
    target[::7] = -100
    ks = [leaf(t) if t is not None else None for t in (h, w, b)]
    rs = [as_reference(t) if t is not None else None for t in (h, w, b)]
    loss = m.fused_linear_cross_entropy(ks[0], ks[1], target, ks[2], -100, smoothing)
    loss.backward(torch.tensor(0.5, device=DEVICE))
    ref = m.fused_linear_cross_entropy_reference(rs[0], rs[1], target, rs[2], -100, smoothing)
    ref.backward(torch.tensor(0.5, dtype=torch.float64, device=DEVICE))
    assert_close(loss, ref, torch.float32 if dtype == torch.float32 else dtype, "loss")
    for got, r, what in zip(ks, rs, ("dhidden", "dweight", "dbias")):
        if got is not None:
            assert_close(got.grad, r.grad, dtype, what, scale=4)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("fused_limit", [32768, 16], ids=["in-registers", "online"])
def test_softmax_forward_backward(dtype, shape, fused_limit, monkeypatch):
    m, g = MODULES["softmax"], fresh_generator()
    monkeypatch.setattr(m, "SOFTMAX_MAX_FUSED_COLS", fused_limit)
    x, dy = randn(*shape, dtype=dtype, gen=g, scale=3.0), randn(*shape, dtype=dtype, gen=g)
    xk, xr = leaf(x), as_reference(x)
    y = m.softmax(xk)
    y.backward(dy)
    yr = m.softmax_reference(xr)
    yr.backward(dy.double())
    assert_close(y, yr, dtype, "y")
    assert_close(xk.grad, xr.grad, dtype, "dx")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("lead,k,n,with_bias", [((37,), 45, 53, True), ((2, 9), 70, 33, False), ((19,), 128, 41, True)],
                         ids=str)
def test_linear_gelu_forward_backward(dtype, lead, k, n, with_bias):
    m, g = MODULES["linear_gelu"], fresh_generator()
    x = randn(*lead, k, dtype=dtype, gen=g)
    w = randn(n, k, dtype=dtype, gen=g, scale=k ** -0.5)
    b = randn(n, dtype=dtype, gen=g, scale=0.1) if with_bias else None
    dy = randn(*lead, n, dtype=dtype, gen=g)
    ks = [leaf(t) if t is not None else None for t in (x, w, b)]
    rs = [as_reference(t) if t is not None else None for t in (x, w, b)]
    y = m.linear_gelu(*ks)
    y.backward(dy)
    yr = m.linear_gelu_reference(*rs)
    yr.backward(dy.double())
    assert_close(y, yr, dtype, "y", scale=2)
    for got, r, what in zip(ks, rs, ("dx", "dweight", "dbias")):
        if got is not None:
            assert_close(got.grad, r.grad, dtype, what, scale=4)


@pytest.mark.parametrize("name,kernel", [("rms_norm", "_rms_norm_fwd_kernel"), ("softmax", "_softmax_fwd_kernel")])
@pytest.mark.parametrize("rows_per_step,stages,prefetch", [(1, 2, 0), (2, 3, 0), (1, 1, 1)])
def test_a_persistent_grid_covers_every_row(name, kernel, rows_per_step, stages, prefetch):
    """Fewer programs than row blocks (the persistent configs, PPS > 0): each program loops over
    several blocks, and every row, the ragged last block too, comes out right (RMSNorm's PREFETCH:
    the next row loaded before this row's sum)."""
    if prefetch and name != "rms_norm":
        pytest.skip("the softmax forward has no prefetching form")
    m, g = MODULES[name], fresh_generator()
    n_rows, n_cols = 11, 67
    x = randn(n_rows, n_cols, dtype=torch.float32, gen=g, scale=2.0)
    y = torch.full_like(x, float("nan"))
    fn, block_n = getattr(m, kernel).fn, triton.next_power_of_2(n_cols)
    meta = dict(BLOCK_N=block_n, ROWS=rows_per_step, PPS=1, STAGES=stages, **({"PREFETCH": 1} if prefetch else {}))
    if name == "rms_norm":
        w = randn(n_cols, dtype=torch.float32, gen=g, scale=0.1, shift=1.0)
        rstd = torch.full((n_rows,), float("nan"), device=DEVICE)
        fn[(3,)](x, w, y, rstd, n_rows, n_cols, x.stride(0), y.stride(0), 1e-6, 0, STORE_RSTD=True, **meta)
        ref = m.rms_norm_reference(x.double(), w.double(), 1e-6)
        assert_close(rstd, torch.rsqrt(x.double().pow(2).mean(-1) + 1e-6), torch.float32, "rstd")
    else:
        fn[(3,)](x, y, n_rows, n_cols, x.stride(0), y.stride(0), 0, **meta)
        ref = m.softmax_reference(x.double())
    assert_close(y, ref, torch.float32, "y")


@pytest.mark.parametrize("n_cols,block_n,prefetch", [(67, 128, 0), (300, 128, 0), (67, 128, 1), (300, 512, 1)],
                         ids=["one-block", "two-pass", "prefetch", "prefetch-wide"])
def test_softmax_backward_persistent_grid_covers_every_row(n_cols, block_n, prefetch):
    """The backward's persistent configs (PPS > 0): 3 programs loop over 11 rows, whole rows in
    registers (PREFETCH: the next row loaded before this row's sum, none past the last row) and rows
    wider than the block; dx = y * (dy - sum(dy * y)) against float64."""
    m, g = MODULES["softmax"], fresh_generator()
    n_rows = 11
    y = torch.softmax(randn(n_rows, n_cols, dtype=torch.float64, gen=g, scale=2.0), -1).float()
    dy = randn(n_rows, n_cols, dtype=torch.float32, gen=g)
    dx = torch.full_like(y, float("nan"))
    m._softmax_bwd_kernel.fn[(3,)](dy, y, dx, n_rows, n_cols, dy.stride(0), y.stride(0), dx.stride(0), 0,
                                   BLOCK_N=block_n, PPS=1, STAGES=1 if prefetch else 2, PREFETCH=prefetch)
    y64, dy64 = y.double(), dy.double()
    assert_close(dx, y64 * (dy64 - (dy64 * y64).sum(-1, keepdim=True)), torch.float32, "dx")


def _every_config(kernel, configs):
    """Each of ``configs`` alone in turn: the autotuner, the launchers' recorded plans and the backward's
    recorded grids forgotten before each, so the next call compiles and launches that config."""
    every = list(kernel.configs)
    try:
        for cfg in configs:
            kernel.configs = [cfg]
            kernel.cache.clear()
            for module in MODULES.values():
                for value in vars(module).values():
                    if hasattr(value, "plans") and hasattr(value, "kernel"):
                        value.plans.clear()
                module.__dict__.get("_bwd_grids", {}).clear()
            yield cfg
    finally:
        kernel.configs = every
        kernel.cache.clear()


# the configs the GPU's autotuner chooses from are not the interpreter's (it keeps the first alone):
# every one of them, forced, forward and backward against float64 at odd sizes (fewer rows than
# programs, more rows than programs, a row wider than one block's power of two)
_CONFIG_CASES = [("rms_norm", "_rms_norm_fwd_kernel", "_FWD_CONFIGS"),
                 ("rms_norm", "_rms_norm_bwd_kernel", "_BWD_CONFIGS"),
                 ("add_rms_norm", "_add_rms_norm_fwd_kernel", "_FWD_CONFIGS"),
                 ("add_rms_norm", "_add_rms_norm_bwd_kernel", "_BWD_CONFIGS"),
                 ("softmax", "_softmax_fwd_kernel", "_FWD_CONFIGS"),
                 ("softmax", "_softmax_bwd_kernel", "_BWD_CONFIGS")]
_CONFIG_DTYPES = [torch.float32, torch.bfloat16] if DEVICE == "cpu" else [torch.bfloat16]


@pytest.mark.parametrize("dtype", _CONFIG_DTYPES, ids=str)
@pytest.mark.parametrize("name,kernel,configs", _CONFIG_CASES, ids=lambda v: v if isinstance(v, str) else None)
def test_every_autotune_config_of_the_row_kernels_is_correct(name, kernel, configs, dtype):
    m, g = MODULES[name], fresh_generator()
    configs = getattr(m, configs)
    assert len(configs) > 1
    for cfg in _every_config(getattr(m, kernel), configs):
        for n_rows, n_cols in ((3, 67), (13, 300)):
            x, dy = randn(n_rows, n_cols, dtype=dtype, gen=g, scale=2.0), randn(n_rows, n_cols, dtype=dtype, gen=g)
            xk, xr = leaf(x), as_reference(x)
            what = f"{name} {cfg} {n_rows}x{n_cols}"
            if name == "softmax":
                y, yr = m.softmax(xk), m.softmax_reference(xr)
                y.backward(dy)
                yr.backward(dy.double())
                assert_close(y, yr, dtype, f"y, {what}")
                assert_close(xk.grad, xr.grad, dtype, f"dx, {what}")
                continue
            w = randn(n_cols, dtype=dtype, gen=g, scale=0.1, shift=1.0)
            wk, wr = leaf(w), as_reference(w)
            if name == "rms_norm":
                y, yr = m.rms_norm(xk, wk, 1e-6), m.rms_norm_reference(xr, wr, 1e-6)
                y.backward(dy)
                yr.backward(dy.double())
            else:
                r = randn(n_rows, n_cols, dtype=dtype, gen=g)
                rk, rr = leaf(r), as_reference(r)
                (y, s), (yr, sr) = m.add_rms_norm(xk, rk, wk, 1e-6), m.add_rms_norm_reference(xr, rr, wr, 1e-6)
                ds = randn(n_rows, n_cols, dtype=dtype, gen=g)
                torch.autograd.backward([y, s], [dy, ds])
                torch.autograd.backward([yr, sr], [dy.double(), ds.double()])
                assert_close(rk.grad, rr.grad, dtype, f"dresidual, {what}")
            assert_close(y, yr, dtype, f"y, {what}")
            assert_close(xk.grad, xr.grad, dtype, f"dx, {what}")
            assert_close(wk.grad, wr.grad, dtype, f"dweight, {what}", scale=4)
            assert wk.grad.dtype == dtype


@pytest.mark.parametrize("dtype", _CONFIG_DTYPES, ids=str)
@pytest.mark.parametrize("n_cols,tile", [(67, 32), (300, 128), (1100, 512), (6000, 2048)], ids=str)
def test_softmax_forward_in_three_tiles_every_config(n_cols, tile, dtype, monkeypatch):
    """A row that is not a power of two held as three equal tiles (11008 -> 3 x 4096 on a GPU; here the
    threshold is lowered so narrow rows take that path too): every forward config, persistent grids
    included, against float64; the input's row stride is wider than the row and the columns past its
    end hold large values, so a lane read past the end changes the row's sum."""
    m, g = MODULES["softmax"], fresh_generator()
    monkeypatch.setattr(m, "SOFTMAX_TILED_FROM", 0)
    assert m._softmax_fwd_tiles(n_cols) == (tile, 3)
    kept = m._softmax_prune_rows(m._FWD_CONFIGS, {"n_cols": n_cols}, BLOCK_N=tile, NT=3)
    assert kept and all(c.kwargs["ROWS"] == 1 for c in kept)  # several rows per step need one tile
    assert len(kept) < len(m._FWD_CONFIGS)
    for cfg in _every_config(m._softmax_fwd_kernel, kept):
        x = randn(5, n_cols + 3, dtype=dtype, gen=g, scale=3.0)
        x[:, n_cols:] = 40.0
        rows = x[:, :n_cols]
        y = m.softmax(rows)
        assert_close(y, m.softmax_reference(as_reference(rows)), dtype, f"y, {cfg} 5x{n_cols}")


@pytest.mark.parametrize("dtype", _CONFIG_DTYPES, ids=str)
@pytest.mark.parametrize("n_cols,tile", [(67, 32), (300, 128), (6000, 2048)], ids=str)
def test_add_rms_norm_forward_in_three_tiles_every_config(n_cols, tile, dtype, monkeypatch):
    """add+RMSNorm's row as three equal tiles (5120 -> 3 x 2048 on a GPU; the threshold lowered here):
    every forward config the pruning keeps, y, the stored sum and 1/rms against float64, with input rows
    strided wider than the row and large values past its end."""
    m, g = MODULES["add_rms_norm"], fresh_generator()
    monkeypatch.setattr(m, "ADD_RMS_NORM_TILED_FROM", 0)
    assert m._add_rms_norm_tiles(n_cols) == (tile, 3)
    kept = m._add_rms_norm_prune_rows(m._FWD_CONFIGS, {"n_cols": n_cols}, BLOCK_N=tile, NT=3)
    assert kept and all(c.kwargs["ROWS"] == 1 for c in kept) and len(kept) < len(m._FWD_CONFIGS)
    for cfg in _every_config(m._add_rms_norm_fwd_kernel, kept):
        x, r = randn(4, n_cols + 5, dtype=dtype, gen=g), randn(4, n_cols + 5, dtype=dtype, gen=g)
        x[:, n_cols:], r[:, n_cols:] = 30.0, 30.0
        w = randn(n_cols, dtype=dtype, gen=g, scale=0.1, shift=1.0)
        xs, rs = x[:, :n_cols], r[:, :n_cols]
        y, s, rstd = m.add_rms_norm_forward(xs, rs, w, 1e-6)
        (yr, sr) = m.add_rms_norm_reference(as_reference(xs), as_reference(rs), as_reference(w), 1e-6)
        assert_close(s, sr, dtype, f"s, {cfg} 4x{n_cols}")
        assert_close(y, yr, dtype, f"y, {cfg} 4x{n_cols}")
        s64 = s.double()
        assert_close(rstd, torch.rsqrt(s64.pow(2).mean(-1) + 1e-6), torch.float32, f"rstd, {cfg}")


def test_add_rms_norm_tile_choice():
    m = MODULES["add_rms_norm"]
    assert m._add_rms_norm_tiles(5120) == (2048, 3)
    assert m._add_rms_norm_tiles(4096) == (4096, 1)
    assert m._add_rms_norm_tiles(14336) == (16384, 1)
    assert m._add_rms_norm_tiles(1100) == (2048, 1)


def test_softmax_tile_choice():
    """Three tiles only where they pad less than one block, and only for wide rows."""
    m = MODULES["softmax"]
    assert m._softmax_fwd_tiles(11008) == (4096, 3)
    assert m._softmax_fwd_tiles(5120) == (2048, 3)
    assert m._softmax_fwd_tiles(4096) == (4096, 1)
    assert m._softmax_fwd_tiles(14336) == (16384, 1)  # 3 x 8192 would pad more than one 16384 block
    assert m._softmax_fwd_tiles(1100) == (2048, 1)  # narrower than SOFTMAX_TILED_FROM: one block


_NO_GRAD_CASES = {
    "rms_norm": lambda m, g: (m.rms_norm, (randn(7, 130, dtype=torch.float32, gen=g), randn(130, dtype=torch.float32, gen=g, scale=0.1, shift=1.0), 1e-6)),
    "add_rms_norm": lambda m, g: (m.add_rms_norm, (randn(2, 5, 67, dtype=torch.float32, gen=g), randn(2, 5, 67, dtype=torch.float32, gen=g),
                                                   randn(67, dtype=torch.float32, gen=g, scale=0.1, shift=1.0), 1e-6)),
    "softmax": lambda m, g: (m.softmax, (randn(6, 90, dtype=torch.float32, gen=g, scale=2.0),)),
    "swiglu": lambda m, g: (m.swiglu, (randn(5, 77, dtype=torch.float32, gen=g), randn(5, 77, dtype=torch.float32, gen=g))),
    "linear_gelu": lambda m, g: (m.linear_gelu, (randn(9, 40, dtype=torch.float32, gen=g), randn(33, 40, dtype=torch.float32, gen=g, scale=0.2),
                                                 randn(33, dtype=torch.float32, gen=g, scale=0.1))),
    "cross_entropy": lambda m, g: (m.cross_entropy, (randn(6, 70, dtype=torch.float32, gen=g, scale=3.0),
                                                     torch.tensor([3, -100, 0, 69, 5, 12], device=DEVICE))),
}


@pytest.mark.parametrize("name", sorted(_NO_GRAD_CASES))
def test_the_forward_without_gradient_matches_the_autograd_path(name):
    """The lean path (no autograd node, no 1/rms kept, the GELU in place) gives what the autograd path
    gives, on two fresh draws in a row (the second call launches the launcher's recorded plan on a GPU)."""
    m = MODULES[name]
    for _ in range(2):
        fn, args = _NO_GRAD_CASES[name](m, fresh_generator())
        with torch.no_grad():
            lean = fn(*args)
        leaves = [leaf(a) if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]
        graded = fn(*leaves, inplace=False) if name == "cross_entropy" else fn(*leaves)
        for got, want in zip(lean if isinstance(lean, tuple) else (lean,), graded if isinstance(graded, tuple) else (graded,)):
            assert not got.requires_grad and want.requires_grad
            assert_close(got, want.detach().double(), torch.float32, f"{name}: the forward without gradient", scale=0.25)


def test_cross_entropy_sums_many_rows_in_the_kernel():
    """More rows than one block of the last program's sum (1024) and than the in-kernel count (2048:
    the count kernel runs first), some ignored: the loss is the float64 mean (and sum) of the rows."""
    m, g = MODULES["cross_entropy"], fresh_generator()
    logits = randn(2500, 9, dtype=torch.float32, gen=g, scale=3.0)
    target = torch.randint(0, 9, (2500,), generator=g).to(DEVICE)
    target[::13] = -100
    for reduction in ("mean", "sum"):
        got = m.cross_entropy(logits, target, reduction=reduction)
        ref = m.cross_entropy_reference(as_reference(logits), target, reduction=reduction)
        assert got.dim() == 0 and got.dtype == torch.float32
        assert_close(got, ref, torch.float32, f"loss ({reduction})")
    # the rows-done counters (one per device and stream) are back at zero for the next call
    assert all(c.item() == 0 for c in m._cross_entropy_done.values())


def test_linear_gelu_refuses_mismatched_features():
    with pytest.raises(ValueError, match="features"):
        MODULES["linear_gelu"].linear_gelu(torch.randn(3, 8, device=DEVICE), torch.randn(5, 9, device=DEVICE))


# the contract each template ships must pass the benchmark harness's own correctness check
# (poisoned output buffers, float64 reference) at a small shape of the same rank
_SMALL = {2: (5, 130), 3: (37, 24, 301), 5: (29, 72, 40, 6, 2), 7: (2, 9, 7, 24, 20, 3, 2)}


@pytest.mark.parametrize("name", [t.name for t in list_templates()])
def test_contract_passes_the_harness_correctness_check(name):
    from tritonify.kernels.bench.correctness import check

    contract = getattr(MODULES[name], f"{name.upper()}_CONTRACT")
    assert contract is not None and contract.name == name
    if contract.dtype == "bfloat16" and name in _TL_DOT_TEMPLATES:
        _skip_bf16_dot_on_the_interpreter(torch.bfloat16)
    assert hasattr(MODULES[name], contract.kernel), f"{contract.kernel} is the template's kernel"
    shape = _SMALL[len(contract.shapes[0])]
    result = check(contract.entry, contract, shape, DEVICE, seed=fresh_generator().initial_seed())
    assert result.correct, result.message
    assert result.unwritten == 0


def test_autotune_pruning_keeps_tiles_that_fit_and_never_empties_the_list():
    rows = [triton.Config({"ROWS": r}, num_warps=w) for r, w in ((1, 8), (2, 8), (4, 8), (4, 16))]
    prune_rows = MODULES["rms_norm"]._prune_rows
    assert [c.kwargs["ROWS"] for c in prune_rows(rows, {"n_cols": 4096}, BLOCK_N=4096)] == [1, 2, 4, 4]
    assert [c.kwargs["ROWS"] for c in prune_rows(rows, {"n_cols": 65536}, BLOCK_N=65536)] == [1]
    blocks = [triton.Config({"BLOCK": b}, num_warps=8) for b in (4096, 8192, 16384, 32768)]
    prune_blocks = MODULES["cross_entropy"]._prune_blocks
    assert [c.kwargs["BLOCK"] for c in prune_blocks(blocks, {"n_cols": 5000})] == [4096, 8192]
    assert [c.kwargs["BLOCK"] for c in prune_blocks(blocks, {"n_cols": 37})] == [4096]



def _compile_cases():
    """template -> (the call a model makes, the float64 reference of that call, its input tensors)."""
    g = fresh_generator()
    r = lambda *s, **kw: randn(*s, dtype=torch.float32, gen=g, **kw)
    target = torch.randint(0, 70, (6,), generator=g).to(DEVICE)
    target[1] = -100
    moe_ids = torch.stack([torch.randperm(5, generator=g)[:2] for _ in range(9)]).to(torch.int32).to(DEVICE)
    glu = lambda name: (lambda m, a, b: getattr(m, name)(a, b), lambda m, a, b: getattr(m, f"{name}_reference")(a, b),
                        (r(4, 50), r(4, 50)))
    return {
        "rms_norm": (lambda m, x, w: m.rms_norm(x, w, 1e-6), lambda m, x, w: m.rms_norm_reference(x, w, 1e-6),
                     (r(2, 3, 40), r(40, scale=0.1, shift=1.0))),
        "add_rms_norm": (lambda m, x, res, w: m.add_rms_norm(x, res, w, 1e-6),
                         lambda m, x, res, w: m.add_rms_norm_reference(x, res, w, 1e-6),
                         (r(5, 40), r(5, 40), r(40, shift=1.0))),
        "swiglu": glu("swiglu"), "tanh_glu": glu("tanh_glu"), "relu2_glu": glu("relu2_glu"),
        "geglu_sigmoid": glu("geglu_sigmoid"),
        "softmax": (lambda m, x: m.softmax(x), lambda m, x: m.softmax_reference(x), (r(3, 70, scale=2.0),)),
        "linear_gelu": (lambda m, x, w, b: m.linear_gelu(x, w, b), lambda m, x, w, b: m.linear_gelu_reference(x, w, b),
                        (r(7, 32), r(24, 32, scale=0.2), r(24, scale=0.1))),
        "cross_entropy": (lambda m, x: m.cross_entropy(x, target), lambda m, x: m.cross_entropy_reference(x, target),
                          (r(6, 70, scale=3.0),)),
        "fused_linear_cross_entropy": (lambda m, h, w: m.fused_linear_cross_entropy(h, w, target),
                                       lambda m, h, w: m.fused_linear_cross_entropy_reference(h, w, target),
                                       (r(6, 16), r(70, 16, scale=0.25))),
        "conv2d": (lambda m, x, w, b, res: m.conv2d(x, w, b, res, 2, 1, "silu"),
                   lambda m, x, w, b, res: m.conv2d_reference(x, w, b, res, 2, 1, "silu"),
                   (r(2, 7, 9, 24), r(20, 3, 3, 24, scale=0.1), r(20, scale=0.1), r(2, 4, 5, 20))),
        "causal_conv1d": (lambda m, x, w, b: m.causal_conv1d(x, w, b, "silu"),
                          lambda m, x, w, b: m.causal_conv1d_reference(x, w, b, "silu"),
                          (r(2, 19, 40), r(40, 4, scale=0.5), r(40, scale=0.1))),
        "moe": (lambda m, x, w, wgu, wd: m.moe_experts(x, w, moe_ids, wgu, wd),
                lambda m, x, w, wgu, wd: m.moe_experts_reference(x, w, moe_ids, wgu, wd),
                (r(9, 32), torch.rand(9, 2, generator=g).to(DEVICE) + 0.1, r(5, 48, 32, scale=32 ** -0.5),
                 r(5, 32, 24, scale=24 ** -0.5))),
    }


def _weighted_sum(out):
    outs = out if isinstance(out, tuple) else (out,)
    return sum((o.to(torch.float64) * (i + 1.5)).sum() for i, o in enumerate(outs))


@pytest.mark.parametrize("name", [t.name for t in list_templates()])
def test_torch_compile_traces_each_template_without_a_graph_break(name):
    """Each template is one custom op to torch.compile: no graph break (explain, and fullgraph=True,
    which fails on any), and the compiled forward and backward match float64 PyTorch."""
    call, reference, inputs = _compile_cases()[name]
    m = MODULES[name]
    torch._dynamo.reset()
    explain = torch._dynamo.explain(lambda *xs: call(m, *xs))(*inputs)
    assert explain.graph_break_count == 0 and explain.graph_count == 1, explain.break_reasons
    # inductor needs a GPU for Triton code; TRITONIFY_COMPILE_BACKEND=aot_eager keeps a short device run short
    backend = os.environ.get("TRITONIFY_COMPILE_BACKEND", "inductor") if DEVICE == "cuda" else "aot_eager"
    compiled = torch.compile(lambda *xs: _weighted_sum(call(m, *xs)), backend=backend, fullgraph=True)
    got_in, ref_in = [leaf(t) for t in inputs], [as_reference(t) for t in inputs]
    got = compiled(*got_in)
    got.backward()
    ref = _weighted_sum(reference(m, *ref_in))
    ref.backward()
    assert_close(got, ref, torch.float32, f"{name}: compiled output", scale=4)
    for i, (a, b) in enumerate(zip(got_in, ref_in)):
        assert_close(a.grad, b.grad, torch.float32, f"{name}: compiled gradient of input {i}", scale=4)


# --------------------------------------------------------------------------- conv2d, causal conv1d
# (N, H, W, C_in, C_out, R, stride, epilogue): the channel-block K loop (C_in >= 32) and the
# filter-row loop (C_in = 3, 20: rows of 9, 60 and 21 values, K steps of 16, 64 and 32; ResNet's 7x7
# stem at stride 2, padding 3), stride 1 and 2 (dgrad's phase subproblems, phases with no tap for a
# 1x1 at stride 2), channel counts that are no multiple of any block, with and without the epilogue
CONV2D_CASES = [
    (2, 7, 9, 20, 24, 3, 1, "bias+residual+silu"),
    (2, 9, 7, 40, 36, 3, 2, "bias+residual+silu"),
    (1, 8, 8, 3, 16, 3, 2, "bias+silu"),
    (2, 6, 6, 40, 20, 1, 1, "residual"),
    (2, 9, 9, 40, 20, 1, 2, ""),
    (1, 13, 10, 3, 24, 7, 2, "bias+residual+silu"),
]


def _conv2d_case(m, case, dtype, g):
    batch, H, W, c_in, c_out, R, stride, epilogue = case
    pad = R // 2
    out_h, out_w = m.conv2d_out_size(H, R, stride, pad), m.conv2d_out_size(W, R, stride, pad)
    x = randn(batch, H, W, c_in, dtype=dtype, gen=g)
    w = randn(c_out, R, R, c_in, dtype=dtype, gen=g, scale=(R * R * c_in) ** -0.5)
    b = randn(c_out, dtype=dtype, gen=g, scale=0.1) if "bias" in epilogue else None
    res = randn(batch, out_h, out_w, c_out, dtype=dtype, gen=g) if "residual" in epilogue else None
    return (x, w, b, res), dict(stride=stride, padding=pad, activation="silu" if "silu" in epilogue else None)


def _check_conv2d(m, case, dtype, g, backward=True):
    tensors, kw = _conv2d_case(m, case, dtype, g)
    ks = [leaf(t) if t is not None else None for t in tensors]
    rs = [as_reference(t) if t is not None else None for t in tensors]
    y = m.conv2d(*ks, **kw)
    yr = m.conv2d_reference(*rs, **kw)
    assert y.dtype == dtype and y.shape == yr.shape
    assert_close(y, yr, dtype, f"y {case}", scale=2)
    if not backward:
        return
    dy = randn(*y.shape, dtype=dtype, gen=g)
    y.backward(dy)
    yr.backward(dy.double())
    for got, ref, what in zip(ks, rs, ("dx", "dweight", "dbias", "dresidual")):
        if got is not None:
            assert_close(got.grad, ref.grad, dtype, f"{what} {case}", scale=8)  # sums of many rounded products


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("case", CONV2D_CASES, ids=str)
def test_conv2d_forward_dgrad_wgrad(dtype, case):
    _check_conv2d(MODULES["conv2d"], case, dtype, fresh_generator())


@pytest.fixture(autouse=True)
def _conv2d_forward_through_the_template(monkeypatch):
    """conv2d's checks check the template's kernels: its forward never through cuDNN here unless a test
    asks (``conv2d`` times the template against cuDNN's conv per layer on a GPU and keeps the faster)."""
    monkeypatch.setitem(MODULES["conv2d"]._CONV2D_FORWARD, "mode", "template")


def _assert_sum_rounded_once(got, ref, what):
    """d bias is summed in fp32 and rounded once to bf16: within an ulp of the float64 sum (2^-7 of it: the GPU
    rounds to nearest, the CPU interpreter's cast truncates) and a hair (2^-10 of the largest column) for the
    fp32 order; a tile left out of the sum, or one summed twice, moves a column by about the root of its rows
    (on these cases 1-3% of the column or more), past this on some column."""
    ref = ref.double()
    bound = 2.0 ** -7 * ref.abs() + 2.0 ** -10 * ref.abs().max()
    err = (got.double() - ref).abs()
    assert (err <= bound).all(), f"{what}: {int((err > bound).sum())} columns off, worst {err.max().item():.3g}"


@pytest.mark.parametrize("grid", ["as_shipped", "a_few_programs", "one_program", "a_program_a_tile"])
@pytest.mark.parametrize("tile", [None, (16, 64, 4), (32, 32, 4), (16, 32, 4), (16, 128, 8)], ids=str)
def test_conv2d_dz_dbias_against_float64(tile, grid, monkeypatch):
    """The backward's epilogue (dz = dy * silu'(z), d bias = dz summed over the pixels by the column-sum kernel)
    as the template tiles it and with other tiles: the last row tile partly past the rows, a channel block
    wider than C and one narrower; with the grid as shipped (on these sizes, a program a row tile), with a
    few programs walking several row tiles each, with one program per channel block walking all of them
    (programs per SM 0: at least one), and with a program a tile on a larger case, whose column sum takes
    its 512 rows twice; dz alone (no bias) a program a tile, bit for bit the same dz."""
    m, g = MODULES["conv2d"], fresh_generator()
    programs_per_sm = {"as_shipped": 2, "a_few_programs": 0.05, "one_program": 0, "a_program_a_tile": 10 ** 6}[grid]
    monkeypatch.setattr(m, "_CONV2D_DZ_PROGRAMS_PER_SM", programs_per_sm)
    run = (lambda dy, z, bias=True: m.conv2d_dz_dbias(dy, z, bias)) if tile is None else (
        lambda dy, z, bias=True: m._conv2d_dz_dbias_tiled(dy, z, bias, *tile))
    shapes = [(2, 7, 9, 40), (1, 5, 13, 96), (2, 23, 29, 40)] + ([(2, 64, 70, 40)] if grid == "a_program_a_tile" else [])
    walked, sum_loops = set(), set()
    for shape in shapes:
        dy = randn(*shape, dtype=torch.bfloat16, gen=g)
        z = randn(*shape, dtype=torch.bfloat16, gen=g)
        rows, C = dy.numel() // shape[-1], shape[-1]
        dz, db = run(dy, z)
        s = torch.sigmoid(z.double())
        ref = dy.double() * s * (1 + z.double() * (1 - s))
        assert_close(dz, ref, torch.bfloat16, f"dz {shape} {tile}")
        _assert_sum_rounded_once(db, ref.reshape(rows, C).sum(0), f"dbias {shape} {tile}")
        again = run(dy, z)  # a fixed order of sums: the same d bias, bit for bit
        assert torch.equal(again[0], dz) and torch.equal(again[1], db), (shape, tile)
        dz_alone, no_db = run(dy, z, False)
        assert torch.equal(dz_alone, dz) and no_db is None, (shape, tile)
        _, db_plain = run(dy, None)  # no activation: dz is dy
        _assert_sum_rounded_once(db_plain, dy.double().reshape(rows, C).sum(0), f"dbias of dy {shape} {tile}")
        block_r, block_c = (tile or m._conv2d_elementwise_tile(C))[:2]
        parts, _ = m._conv2d_dz_grid(rows, C, block_r, block_c, dy.get_device())
        walked.add(parts < -(-rows // block_r))
        sum_loops.add(parts > 512)
        assert m._conv2d_dz_grid(rows, C, block_r, block_c, dy.get_device(), False)[0] == -(-rows // block_r)
    assert walked == {False} if grid in ("as_shipped", "a_program_a_tile") else True in walked, walked
    assert (True in sum_loops) == (grid == "a_program_a_tile" and tile in ((16, 64, 4), (16, 32, 4), (16, 128, 8)))


def test_conv2d_autotune_timing_sees_the_work_queued_before_it():
    """The conv2d autotuners and the layers' path choices time calls with do_bench_cudagraph, which runs them
    on a stream of its own: the caller's queued work must be done first (the wgrad's dw is zeroed on the
    caller's stream, and the autotuner's restore_value clones it on the timing stream, enqueued before the
    config compiles, and writes the clone back after it runs). Here the caller's stream sleeps about 0.2 s
    and then sets a flag; the first timed call copies the flag. On the H200 lent here a side stream's work
    waited for the default stream's anyway (gpu/conv/run_checks_h200.sh with STREAMS=1, 2026-12-03), so
    there this passes with the drain taken out too; where they overlap, as CUDA lets non-blocking streams,
    it fails without it."""
    m = MODULES["conv2d"]
    if m._AUTOTUNE_BENCH is None:
        pytest.skip("the conv2d timings run on a GPU only")
    flag, first, later = (torch.zeros(1, device=DEVICE) for _ in range(3))
    calls = []
    torch.cuda.synchronize()
    torch.cuda._sleep(400_000_000)  # cycles: about 0.2 s at the H200's clock
    flag.fill_(1.0)  # queued behind the sleep on the caller's stream

    def call():
        (later if calls else first).copy_(flag)
        calls.append(1)

    m._AUTOTUNE_BENCH(call, (0.5, 0.2, 0.8))
    torch.cuda.synchronize()
    assert first.item() == 1.0, "the first timed call ran before the work queued on the caller's stream"


class _OneConfig:
    """Run ``kernel`` (an autotuner) with ``config`` alone: the tuner's cache and the launcher's plans
    are emptied before and after, so nothing tuned for one config is reused for the next."""

    def __init__(self, kernel, launcher, config):
        self.kernel, self.launcher, self.config = kernel, launcher, config

    def __enter__(self):
        self.saved = self.kernel.configs
        self.kernel.configs, self.kernel.cache = [self.config], {}
        self.launcher.plans.clear()

    def __exit__(self, *exc):
        self.kernel.configs, self.kernel.cache = self.saved, {}
        self.launcher.plans.clear()


def _conv2d_every_config():
    m = MODULES["conv2d"]
    # TMA configs: on the GPU where the device has them (Hopper); on the interpreter, which runs host
    # descriptors, always (forced below)
    fwd = (m._CONV2D_FWD_POINTER_CONFIGS + m._CONV2D_FWD_SPLIT_CONFIGS + m._CONV2D_FWD_TMA_CONFIGS if DEVICE == "cpu"
           else m._CONV2D_FWD_ALL_CONFIGS)
    every = ([("fwd", c) for c in fwd] + [("dgrad", c) for c in m._CONV2D_DGRAD_ALL_CONFIGS]
             + [("wgrad", c) for c in m._CONV2D_WGRAD_ALL_CONFIGS] + [("gemm", c) for c in m._CONV2D_GEMM_ALL_CONFIGS])
    # TRITONIFY_CONV_CONFIG_FLAG=NAME: only the configs whose kwarg NAME is set (a device call after a change to one path)
    flag = os.environ.get("TRITONIFY_CONV_CONFIG_FLAG")
    if flag:
        every = [(which, c) for which, c in every if c.kwargs.get(flag)]
    # TRITONIFY_CONV_CONFIG_SHARD=i/n: the i-th of n shares (a device run checks them in parallel processes)
    shard = os.environ.get("TRITONIFY_CONV_CONFIG_SHARD")
    if shard:
        i, n = (int(v) for v in shard.split("/"))
        every = every[i::n]
    return every


# a 3x3 at stride 1 over two row tiles of 128 (rows that cross image rows and the two images), 40 channels
CONV2D_TAP_CASE = (2, 11, 9, 40, 36, 3, 1, "bias+residual+silu")
# the box configs (the input's 5-D view), boxes of 1 image x 8 rows x 16 columns of a 9x16 output (two
# boxes per image, the second one row past the output): stride 1 with 40 channels (a partial block), and
# stride 2 (3x3 and 1x1) with the column phase beside 64 channels
CONV2D_BOX_CASES = [(2, 9, 16, 40, 36, 3, 1, "bias+residual+silu"), (2, 18, 32, 64, 40, 3, 2, "bias+residual+silu"),
                    (2, 18, 32, 64, 24, 1, 2, "residual")]

# layer-sized cases for the configs that read through tensor descriptors, on a GPU only: ResNet-50's
# 14x14x256 3x3 and 28x28x128 1x1 at batch 32 (boxes of several images, many programs in flight). Two
# configs with the input's boxes and the weight's descriptor both computed wrong outputs there on the
# H200 in 16 of 50 launches (a race: launches on the same inputs differed) while the small cases
# passed, so each is launched three times, each launch against float64 and all three bit-identical
CONV2D_RACE_CASES = [(32, 14, 14, 256, 256, 3, 1, "bias+residual+silu"), (32, 28, 28, 128, 128, 1, 1, "residual")]
CONV2D_RACE_LAUNCHES = 3

# the 1x1 GEMM kernel's cases (channels multiples of 8, as its descriptors need): stride 1 (a partial row
# tile, the whole epilogue) and stride 2 (the 3-D view: columns of a tile past the output, rows of the view
# that cross images), and on a GPU two layer-sized ones (many tiles per persistent program), three launches each
CONV2D_GEMM_CASES = [(2, 6, 6, 40, 24, 1, 1, "bias+residual+silu"), (2, 8, 12, 64, 40, 1, 2, "residual"),
                     (3, 14, 10, 32, 16, 1, 2, "bias+silu"), (2, 7, 9, 48, 32, 1, 1, "")]
CONV2D_GEMM_RACE_CASES = [(32, 28, 28, 128, 512, 1, 1, "bias+residual+silu"), (32, 28, 28, 256, 512, 1, 2, "residual")]

# a K loop long enough for every split-K config to split (27 iterations of 64 channels, 18 of 128) over
# several output tiles, so each tile's partials, arrival counter and last program are exercised
CONV2D_SPLIT_CASE = (2, 9, 9, 136, 40, 3, 1, "bias+residual+silu")


@pytest.mark.parametrize("which,config", _conv2d_every_config(), ids=lambda v: str(v) if isinstance(v, str) else str(v.kwargs))
def test_conv2d_every_autotune_config_against_float64(which, config, monkeypatch):
    """Each configuration alone (the autotuner could pick any), on the cases each kernel's paths
    take: channel blocks and the filter-row loop, stride 1 and 2; bf16 (the benchmarked dtype) and fp32.
    A split-K config also runs a case it splits, twice in a row: the second launch finds the arrival
    counters the first one's last programs set back to zero."""
    m = MODULES["conv2d"]
    monkeypatch.setitem(m._CONV2D_BACKWARD, "mode", "template")  # the backward through the configs checked
    if (config.kwargs.get("USE_TMA") or config.kwargs.get("A_TMA") or config.kwargs.get("A_BOX")) and DEVICE == "cpu":
        monkeypatch.setattr(m, "_tma_available", lambda: True)
    kernel, launcher = {"fwd": (m._conv2d_fwd_kernel, m._conv2d_fwd_launch),
                        "dgrad": (m._conv2d_dgrad_kernel, m._conv2d_dgrad_launch),
                        "wgrad": (m._conv2d_wgrad_kernel, m._conv2d_wgrad_launch),
                        "gemm": (m._conv2d_gemm_kernel, m._conv2d_gemm_launch)}[which]
    g = fresh_generator()
    if which == "gemm":  # the 1x1 layers' GEMM kernel, forced (its prune keeps every config on these cases)
        if DEVICE == "cpu":
            monkeypatch.setattr(m, "_tma_available", lambda: True)
        monkeypatch.setitem(m._CONV2D_GEMM, "mode", "gemm")
        with _OneConfig(kernel, launcher, config):
            ran = 0
            for case in CONV2D_GEMM_CASES + (CONV2D_GEMM_RACE_CASES if DEVICE != "cpu" else []):
                (x, w, b, res), kw = _conv2d_case(m, case, torch.bfloat16, g)
                assert m._conv2d_gemm_fits(x, w, b, res, (kw["stride"],) * 2, (kw["padding"],) * 2), case
                store_z = kw["activation"] == "silu" and case not in CONV2D_GEMM_RACE_CASES  # the backward keeps z
                if not m._conv2d_gemm_shared_memory_fits(config, 2, res is not None, store_z,
                                                         m._conv2d_shared_memory_limit(0)):
                    continue  # the prune never runs this config on this epilogue
                ran += 1
                if case in CONV2D_GEMM_RACE_CASES:
                    _check_conv2d_launches_agree(m, case, g)
                else:
                    _check_conv2d(m, case, torch.bfloat16, g)
        assert ran >= 1, "the config ran on none of the GEMM cases"
        return
    cases = [CONV2D_CASES[1], CONV2D_CASES[2]]
    split = config.kwargs.get("SPLIT_K", 1)
    if split > 1:
        batch, H, W, c_in, c_out, R, stride, _ = CONV2D_SPLIT_CASE
        M = batch * m.conv2d_out_size(H, R, stride, R // 2) * m.conv2d_out_size(W, R, stride, R // 2)
        assert m._conv2d_tiles(config, M, c_out) > 1
        assert m._conv2d_split_fits(config, M, c_out, m._conv2d_k_iterations(config, c_in, R, R, False), 132)
        cases = [CONV2D_SPLIT_CASE, CONV2D_SPLIT_CASE] + cases
    if config.kwargs.get("A_TMA"):  # a 1x1 at stride 1, unpadded: the input read through its descriptor
        cases.append(CONV2D_CASES[3])
    if config.kwargs.get("A_BOX"):  # the input's box view: stride 1 (odd widths) and 2, several boxes
        cases += CONV2D_BOX_CASES
    with _OneConfig(kernel, launcher, config):
        for case in cases:
            # a TMA config runs on 2-byte dtypes with channel blocks (elsewhere it is pruned); on the CPU
            # interpreter every dtype takes the same fp32 dot (_fp32_dot), so bf16 alone says it all there
            # fp32 operands double the pipeline's buffers: a forward config the prune drops for fp32
            # (over the shared memory) never runs on fp32
            two_byte_only = (config.kwargs.get("USE_TMA") or config.kwargs.get("A_TMA") or config.kwargs.get("A_BOX") or DEVICE == "cpu" or which == "fwd" and not
                             m._conv2d_shared_memory_fits(config, 4, m._conv2d_shared_memory_limit(0)))
            for dtype in (torch.bfloat16,) if two_byte_only else (torch.bfloat16, torch.float32):
                _check_conv2d(m, case, dtype, g, backward=which != "fwd")
        if which == "fwd" and DEVICE != "cpu" and any(config.kwargs.get(k) for k in ("USE_TMA", "A_TMA", "A_BOX")):
            for case in CONV2D_RACE_CASES:
                _check_conv2d_launches_agree(m, case, g)


def _check_conv2d_launches_agree(m, case, g):
    """The forward launched CONV2D_RACE_LAUNCHES times on the same bf16 inputs: each output within
    tolerance of float64 and every launch bit-identical to the first (a race shows as a difference)."""
    tensors, kw = _conv2d_case(m, case, torch.bfloat16, g)
    ref = m.conv2d_reference(*[as_reference(t) if t is not None else None for t in tensors], **kw)
    with torch.no_grad():
        ys = [m.conv2d(*tensors, **kw).clone() for _ in range(CONV2D_RACE_LAUNCHES)]
    for i, y in enumerate(ys):
        assert_close(y, ref, torch.bfloat16, f"y {case} launch {i}", scale=2)
        assert torch.equal(y, ys[0]), f"{case}: launch {i} differs from launch 0 in {(y != ys[0]).sum().item()} elements"


# the Gluon box kernel's cases (64-channel multiples, as its K step needs): stride 1 with two boxes per image (the
# second one row past a 9x16 output) and a partial N tile, stride 2 (the column phase beside the channels), a 1x1
# at stride 1 (the pixels as one row: a partial last box) and at stride 2, with the whole epilogue and the
# backward (the forward keeps z); on the GPU also the layer-sized race cases (a 3x3 and a 1x1)
CONV2D_GLUON_BOX_CASES = [(2, 9, 16, 64, 40, 3, 1, "bias+residual+silu"), (2, 18, 32, 64, 40, 3, 2, "bias+residual+silu"),
                          (3, 10, 10, 128, 72, 3, 1, ""), (2, 7, 9, 64, 40, 1, 1, "bias+residual+silu"),
                          (2, 16, 12, 128, 72, 1, 2, "residual")]


def _conv2d_box_runs(m, config, splits):
    """Skip unless on a Hopper GPU with Gluon; the box path forced to ``config`` split ``splits`` ways."""
    if DEVICE == "cpu" or m.gluon is None or not m._tma_available():
        pytest.skip("the Gluon box kernel runs on a Hopper GPU only (no interpreter for Gluon)")
    return {"mode": "on", "splits": str(splits)}, [config]


@pytest.mark.parametrize("config", MODULES["conv2d"]._CONV2D_BOX_CONFIGS, ids=str)
def test_conv2d_box_kernel_every_config_against_float64(config, monkeypatch):
    """Each Gluon box config alone (forced, as its choice could keep any) against float64, forward and
    backward, and launched three times bit-identical on a layer-sized 3x3 and 1x1 (persistent programs that
    run many tiles: the ring's count carried from tile to tile; in the warp-specialized form the load warp
    runs ahead into the next tile)."""
    m = MODULES["conv2d"]
    forced, configs = _conv2d_box_runs(m, config, 1)
    for key, value in forced.items():
        monkeypatch.setitem(m._CONV2D_BOX, key, value)
    monkeypatch.setattr(m, "_CONV2D_BOX_CONFIGS", configs)
    monkeypatch.setitem(m._CONV2D_BACKWARD, "mode", "template")
    g = fresh_generator()
    (x, w, _, _), kw = _conv2d_case(m, CONV2D_RACE_CASES[0], torch.bfloat16, g)
    assert m._conv2d_box_choice(x, w, None, None, None, None, (kw["stride"],) * 2, (kw["padding"],) * 2, 0, 0,
                                False, None) == (config, 1)
    for case in CONV2D_GLUON_BOX_CASES:
        _check_conv2d(m, case, torch.bfloat16, g)
    for case in CONV2D_RACE_CASES:
        _check_conv2d_launches_agree(m, case, g)


@pytest.mark.parametrize("splits", [2, 3, 8])
@pytest.mark.parametrize("config", [c for c in MODULES["conv2d"]._CONV2D_BOX_CONFIGS if not c.specialized], ids=str)
def test_conv2d_box_kernel_split_k_against_float64(config, splits, monkeypatch):
    """The single-partition box kernel with each tile's K loop split 2, 3 (shares of unequal length) and 8
    ways, the last program to arrive summing the partials: against float64 with the whole epilogue on the box
    cases, and three launches bit-identical on the layer-sized ones (the partials summed in slot order
    whichever program arrives last; every tile's counter back at zero for the next launch)."""
    m = MODULES["conv2d"]
    forced, configs = _conv2d_box_runs(m, config, splits)
    for key, value in forced.items():
        monkeypatch.setitem(m._CONV2D_BOX, key, value)
    monkeypatch.setattr(m, "_CONV2D_BOX_CONFIGS", configs)
    monkeypatch.setitem(m._CONV2D_BACKWARD, "mode", "template")
    g = fresh_generator()
    for case in CONV2D_GLUON_BOX_CASES:
        _check_conv2d(m, case, torch.bfloat16, g, backward=False)
    for case in CONV2D_RACE_CASES:
        _check_conv2d_launches_agree(m, case, g)


def test_conv2d_box_kernel_only_where_it_fits(monkeypatch):
    """The box path is a candidate only for 64-channel multiples, the strides dividing the input, 2-byte
    operands (any filter: a 1x1 at stride 1 as one row of pixels); a wrong forced split count is one clear
    error; on the CPU (no autotune timer) its choice keeps the other path."""
    m = MODULES["conv2d"]
    monkeypatch.setattr(m, "_tma_available", lambda: True)
    x = torch.zeros(2, 8, 8, 64, dtype=torch.bfloat16)
    fits = lambda xx, ww, stride=(1, 1): m._conv2d_box_fits(xx, ww, stride)  # noqa: E731
    assert fits(x, torch.zeros(32, 3, 3, 64, dtype=torch.bfloat16)) == (m.gluon is not None)
    assert fits(x, torch.zeros(32, 1, 1, 64, dtype=torch.bfloat16)) == (m.gluon is not None)
    one = torch.zeros(32, 1, 1, 64)
    assert m._conv2d_box_geometry(x, one, (1, 1), (0, 0), 8, 8, 128) == (1, 1, 128, 1, 128, (1, 1, 128))
    assert m._conv2d_box_geometry(x, one, (2, 2), (0, 0), 4, 4, 128) == (2, 8, 8, 4, 4, (8, 4, 4))
    for bad in ("0", "three", "9"):
        monkeypatch.setitem(m._CONV2D_BOX, "splits", bad)
        with pytest.raises(ValueError, match="TRITONIFY_CONV2D_BOX_SPLITS"):
            m._conv2d_forced_splits()
    assert not fits(torch.zeros(2, 8, 8, 40, dtype=torch.bfloat16), torch.zeros(32, 3, 3, 40, dtype=torch.bfloat16))
    assert not fits(torch.zeros(2, 9, 8, 64, dtype=torch.bfloat16), torch.zeros(32, 3, 3, 64, dtype=torch.bfloat16), (2, 2))
    assert not fits(x.float(), torch.zeros(32, 3, 3, 64))
    if DEVICE == "cpu":
        w = torch.zeros(32, 3, 3, 64, dtype=torch.bfloat16)
        assert m._conv2d_box_choice(x, w, None, None, None, None, (1, 1), (1, 1), 8, 8, False, None) is None


def test_conv2d_box_candidates_by_layer():
    """What a layer's box choice times: N tiles that suit C_out (64 alone for 64 channels, 128 and 256 for
    512), one split for the warp-specialized configs, and for the others 2, 4 or 8 only while the tiles
    leave programs idle (ResNet-50's 7x7x512 3x3 at batch 32: 28 or 52 tiles for 132 SMs) and each split keeps
    four K steps; none at batch 128 of a 56x56 layer (thousands of tiles)."""
    m = MODULES["conv2d"]
    dev = DEVICE
    sms = m._conv2d_sms(torch.zeros(1, device=dev).get_device())

    def candidates(batch, hw, c_in, c_out, k, stride):
        out = m.conv2d_out_size(hw, k, stride, k // 2)
        x = torch.empty(batch, hw, hw, c_in, dtype=torch.bfloat16, device=dev)
        w = torch.empty(c_out, k, k, c_in, dtype=torch.bfloat16, device=dev)
        return m._conv2d_box_candidates(x, w, (stride,) * 2, (k // 2,) * 2, out, out)

    assert {c.block_n for c, _ in candidates(128, 56, 64, 64, 3, 1)} == {64}
    assert {c.block_n for c, _ in candidates(32, 7, 512, 512, 3, 1)} == {128, 256}
    assert all(splits == 1 for _, splits in candidates(128, 56, 64, 64, 3, 1))
    deep = candidates(32, 7, 512, 512, 3, 1)
    assert all(splits == 1 for c, splits in deep if c.specialized)
    for config in {c for c, _ in deep if not c.specialized}:
        splits = sorted(s for c, s in deep if c == config)
        tiles = 2 * 7 * -(-512 // config.block_n)  # boxes of 16 images x 8 rows x 1 column: 2 x 7 of them
        assert splits[0] == 1 and all(tiles * s // 2 < sms * config.ctas for s in splits[1:]), (config, splits)
        assert max(splits) <= m._CONV2D_BOX_MAX_SPLITS and 9 * 8 >= 4 * max(splits)
    assert len({s for _, s in deep}) > 1 if sms >= 64 else True


@pytest.mark.parametrize("mode", ["cudnn", "auto"])
def test_conv2d_backward_through_cudnn_or_the_faster_per_layer(mode, monkeypatch):
    """dx and dweight through PyTorch's convolution backward ("cudnn"), or whichever of it and the template
    the first backward of each layer timed faster ("auto": on a GPU, bf16; elsewhere the template), against
    float64, on stride 1 and 2 and the filter-row loop; "auto" records one choice per layer."""
    m = MODULES["conv2d"]
    monkeypatch.setitem(m._CONV2D_BACKWARD, "mode", mode)
    monkeypatch.setitem(m._CONV2D_BACKWARD, "choices", {})
    g = fresh_generator()
    for case in (CONV2D_CASES[0], CONV2D_CASES[1], CONV2D_CASES[2], CONV2D_TAP_CASE):
        for dtype in (torch.bfloat16,) if DEVICE == "cpu" else (torch.bfloat16, torch.float32):
            _check_conv2d(m, case, dtype, g)
    choices = m._CONV2D_BACKWARD["choices"]
    if mode == "auto" and DEVICE != "cpu":
        assert len(choices) == 4 and all(set(c) <= {"template", "cudnn"} for c in choices.values()), choices
    else:
        assert not choices


@pytest.mark.parametrize("keep_z", [False, True])
def test_conv2d_cudnn_forward_then_the_epilogue_kernel_against_float64(keep_z):
    """cuDNN's conv (PyTorch's on the CPU) followed by the template's epilogue kernel: y and the kept
    pre-activation z against float64, with each epilogue, stride 1 and 2, and NHWC inputs made by a permute."""
    m, g = MODULES["conv2d"], fresh_generator()
    for case in (CONV2D_CASES[0], CONV2D_CASES[1], CONV2D_CASES[3], CONV2D_CASES[4]):
        (x, w, b, res), kw = _conv2d_case(m, case, torch.bfloat16, g)
        x = x.permute(0, 3, 1, 2).contiguous().permute(0, 2, 3, 1)  # NHWC by a permute of NCHW memory
        y, z = m.conv2d_cudnn_forward(x, w, b, res, keep_z=keep_z, **kw)
        refs = [as_reference(t) if t is not None else None for t in (x, w, b, res)]
        z_ref = m.conv2d_reference(*refs, stride=kw["stride"], padding=kw["padding"])
        y_ref = m.conv2d_reference(*refs, **kw)
        assert y.dtype == torch.bfloat16 and y.is_contiguous()
        assert_close(y, y_ref, torch.bfloat16, f"y {case}", scale=2)
        if keep_z and kw["activation"]:
            assert_close(z, z_ref, torch.bfloat16, f"z {case}", scale=2)
        else:
            assert z is None
    with pytest.raises(ValueError, match="residual"):
        m.conv2d_cudnn_forward(x, w, None, torch.zeros(1, 2, 3, 4, dtype=x.dtype, device=x.device))


@pytest.mark.parametrize("mode", ["cudnn", "auto"])
def test_conv2d_forward_through_cudnn_or_the_faster_per_layer(mode, monkeypatch):
    """conv2d's forward through cuDNN and the epilogue kernel ("cudnn"), or whichever of that and the
    template's kernels its first call for the layer timed faster ("auto": on a GPU, bf16; elsewhere the
    template), forward and backward against float64; "auto" records one choice per layer and keep_z."""
    m = MODULES["conv2d"]
    monkeypatch.setitem(m._CONV2D_FORWARD, "mode", mode)
    monkeypatch.setitem(m._CONV2D_FORWARD, "choices", {})
    g = fresh_generator()
    for case in (CONV2D_CASES[0], CONV2D_CASES[1]):
        _check_conv2d(m, case, torch.bfloat16, g)
        with torch.no_grad():
            _check_conv2d(m, case, torch.bfloat16, g, backward=False)
    choices = m._CONV2D_FORWARD["choices"]
    if mode == "auto" and DEVICE != "cpu":
        assert len(choices) == 4 and set(choices.values()) <= {"template", "cudnn"}, choices
    else:
        assert not choices
    monkeypatch.setitem(m._CONV2D_FORWARD, "mode", "fastest")
    (x, w, b, res), kw = _conv2d_case(m, CONV2D_CASES[0], torch.bfloat16, g)
    with pytest.raises(ValueError, match="TRITONIFY_CONV2D_FORWARD"):
        m.conv2d(x, w, b, res, **kw)


def test_conv2d_report_flags_the_configs_the_template_no_longer_has():
    """gpu/conv/report.py marks a timing whose output was wrong (‡) and one whose chosen config read the
    input as boxes with the weight's descriptor too at 8 warps (†: no such config is left in the template), and
    leaves the configs the template has unmarked."""
    path = os.path.join(os.path.dirname(__file__), "..", "..", "gpu", "conv", "report.py")
    spec = importlib.util.spec_from_file_location("conv_report_under_test", path)
    report = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(report)
    m = MODULES["conv2d"]
    kept = m._CONV2D_FWD_POINTER_CONFIGS + m._CONV2D_FWD_SPLIT_CONFIGS + m._CONV2D_FWD_TMA_CONFIGS
    assert any(c.kwargs["A_BOX"] for c in kept)
    for c in kept:
        assert report._flag({"max_rel_err": 0.003, "best_plain": str(c.all_kwargs())}, "plain") == ""
        assert report._flag({"max_rel_err": 0.05, "best_plain": str(c.all_kwargs())}, "plain") == "‡"
    gone = m._conv2d_config(128, 128, 64, 8, 3, tma=True, a_box=True)
    # the 8-warp ones raced (the 4-warp one with both descriptors is back: right in every probe launch)
    assert gone not in kept and not any(c.kwargs["A_BOX"] and c.kwargs["USE_TMA"] and c.num_warps == 8 for c in kept)
    assert report._flag({"max_rel_err_fused": 0.003, "best_fused": str(gone.all_kwargs())}, "fused") == "†"


def test_conv2d_input_descriptor_only_for_the_plain_gemm_of_a_1x1_conv(monkeypatch):
    """The input is the matrix [M, C_in] only for a 1x1 filter at stride 1 without padding; a 3x3, a
    stride of 2 or channels that are no multiple of 8 (16 bytes of bf16) get no descriptor."""
    m = MODULES["conv2d"]
    monkeypatch.setattr(m, "_tma_available", lambda: True)
    x = randn(2, 5, 6, 40, dtype=torch.bfloat16, gen=fresh_generator())
    desc = m._conv2d_input_descriptor(x, 1, 1, (1, 1), (0, 0))
    assert list(desc.shape) == [60, 40] and list(desc.strides) == [40, 1] and desc.block_shape == [128, 64]
    assert m._conv2d_input_descriptor(x, 3, 3, (1, 1), (1, 1)) is None
    assert m._conv2d_input_descriptor(x, 1, 1, (2, 2), (0, 0)) is None


def test_conv2d_box_view_of_the_input(monkeypatch):
    """The box view [N, H / s, s, W / s, s * C] reads what the taps need: element (n, yh, py, xh, px * C + c)
    is pixel (n, s * yh + py, s * xh + px), channel c; boxes tile 128 output pixels with no column past the
    output (several images a box at 14x14 and 7x7); strides that do not divide the input, and a strided
    layer's channels that are no multiple of 64, get no view."""
    m = MODULES["conv2d"]
    monkeypatch.setattr(m, "_tma_available", lambda: True)
    assert [m._conv2d_box_shape(n, n) for n in (56, 28, 14, 7)] == [(1, 16, 8), (1, 32, 4), (4, 16, 2), (16, 8, 1)]
    x = randn(2, 10, 32, 64, dtype=torch.bfloat16, gen=fresh_generator())
    desc, box = m._conv2d_box_descriptor(x, (2, 2), 5, 16)
    assert box == (1, 8, 16) and desc.block_shape == [1, 8, 1, 16, 64]
    view = torch.as_strided(x, desc.shape, desc.strides)
    assert torch.equal(view[1, 2, 1, 1, 64 + 5], x[1, 5, 3, 5]) and torch.equal(view[0, 1, 0, 0, 7], x[0, 2, 0, 7])
    assert m._conv2d_box_descriptor(x[:, :9].contiguous(), (2, 2), 5, 16)[0] is None
    assert m._conv2d_box_descriptor(x[..., :40].contiguous(), (2, 2), 5, 16)[0] is None
    assert m._conv2d_box_descriptor(x[..., :40].contiguous(), (1, 1), 10, 32)[0] is not None
    small = randn(2, 14, 14, 64, dtype=torch.bfloat16, gen=fresh_generator())
    desc, box = m._conv2d_box_descriptor(small, (1, 1), 14, 14)  # a box of 4 images x 16 rows x 2 columns
    assert box == (4, 16, 2) and desc.block_shape == [4, 16, 1, 2, 64]
    view = torch.as_strided(small, desc.shape, desc.strides)
    assert torch.equal(view[1, 13, 0, 6, 63], small[1, 13, 6, 63])
    assert m._conv2d_input_descriptor(x[..., :20].contiguous()[..., :19].contiguous(), 1, 1, (1, 1), (0, 0)) is None


def test_conv2d_forward_drops_the_descriptors_where_a_pointer_config_was_chosen(monkeypatch):
    """A key whose autotuner chose a pointer config launches without descriptors from its second call on
    (each costs the host about 30 us per launch), with the same result; a key that chose a TMA config
    keeps them. The autotuner holds one config at a time here (the interpreter tunes nothing)."""
    m = MODULES["conv2d"]
    monkeypatch.setattr(m, "_tma_available", lambda: True)
    made = []
    describe = m._conv2d_weight_descriptor
    monkeypatch.setattr(m, "_conv2d_weight_descriptor", lambda w: made.append(1) or describe(w))
    g = fresh_generator()
    (x, w, _, _), kw = _conv2d_case(m, CONV2D_CASES[1], torch.bfloat16, g)
    reference = m.conv2d_reference(as_reference(x), as_reference(w), **kw)
    for config, described in ((m._CONV2D_FWD_POINTER_CONFIGS[0], [1]), (m._CONV2D_FWD_TMA_CONFIGS[0], [1, 1, 1])):
        made.clear()
        with _OneConfig(m._conv2d_fwd_kernel, m._conv2d_fwd_launch, config):
            for _ in range(3):
                assert_close(m.conv2d(x, w, **kw), reference, torch.bfloat16, f"y {config.kwargs}", scale=2)
        assert made == described, config.kwargs


def test_conv2d_prune_keeps_the_pipeline_within_shared_memory():
    """(num_stages - 1) x (A + B tiles) bytes: the H200's 232,448 holds a 128x128x128 three-stage config
    in bf16 (131,072) but not in fp32 (262,144, the size the compiler reported for it on the H200)."""
    m = MODULES["conv2d"]
    config = m._conv2d_config(128, 128, 128, 8, 3)
    assert m._conv2d_shared_memory_fits(config, 2, 232448)
    assert not m._conv2d_shared_memory_fits(config, 4, 232448)
    assert all(m._conv2d_shared_memory_fits(c, 2, 232448) for c in m._CONV2D_FWD_ALL_CONFIGS)


def test_conv2d_split_k_runs_only_where_the_tiles_do_not_fill_the_gpu():
    """The prune keeps split K for ResNet-50's deep layers at batch 32 (7x7, 512 channels: 13 row tiles
    of 128) and drops it where the output tiles fill the SMs (56x56 at batch 32: 784 row tiles)."""
    m = MODULES["conv2d"]
    split = m._conv2d_config(128, 128, 64, 8, 3, split=2)
    k_iterations = m._conv2d_k_iterations(split, 512, 3, 3, False)
    assert k_iterations == 72
    assert m._conv2d_split_fits(split, 32 * 7 * 7, 512, k_iterations, 132)
    assert not m._conv2d_split_fits(split, 32 * 56 * 56, 64, m._conv2d_k_iterations(split, 64, 3, 3, False), 132)
    assert not m._conv2d_split_fits(split, 32 * 7 * 7, 512, 7, 132)  # 3 iterations a split: too few to pipeline


def test_conv2d_tma_weight_descriptor_pads_channels_to_16_bytes(monkeypatch):
    """The descriptor's strides are multiples of 16 bytes (C_in = 20 bf16 is 40 bytes: padded to 24
    channels, zeros in the pad) and its block is set by the config's pre-hook."""
    m = MODULES["conv2d"]
    monkeypatch.setattr(m, "_tma_available", lambda: True)
    w = randn(8, 3, 3, 20, dtype=torch.bfloat16, gen=fresh_generator())
    desc = m._conv2d_weight_descriptor(w)
    assert list(desc.shape) == [8, 9, 24] and all(s * 2 % 16 == 0 for s in desc.strides[:-1])
    assert torch.equal(desc.base[:, :, :20], w.reshape(8, 9, 20)) and not desc.base[:, :, 20:].any()
    assert desc.block_shape == [128, 1, 64]
    tma = [c for c in m._CONV2D_FWD_TMA_CONFIGS if c.kwargs["USE_TMA"]]  # the ones that read the weight's descriptor
    assert tma and all((c.kwargs["BLOCK_N"], 1, c.kwargs["BLOCK_K"]) == tuple(desc.block_shape) and c.pre_hook is None
                       for c in tma)


def test_conv2d_fold_bn_matches_conv_then_batchnorm_in_eval_mode():
    m, g = MODULES["conv2d"], fresh_generator()
    x, w, b = randn(2, 6, 7, 40, dtype=torch.float32, gen=g), randn(24, 3, 3, 40, dtype=torch.float32, gen=g, scale=0.05), randn(24, dtype=torch.float32, gen=g)
    bn = torch.nn.BatchNorm2d(24).to(DEVICE).eval()
    with torch.no_grad():
        bn.running_mean.copy_(randn(24, dtype=torch.float32, gen=g))
        bn.running_var.copy_(randn(24, dtype=torch.float32, gen=g).abs() + 0.5)
        bn.weight.copy_(randn(24, dtype=torch.float32, gen=g))
        bn.bias.copy_(randn(24, dtype=torch.float32, gen=g))
        fw, fb = m.conv2d_fold_bn(w, b, bn)
        got = m.conv2d(x, fw, fb, padding=1)
        ref = bn.double()(m.conv2d_reference(x.double(), w.double(), b.double(), padding=1).permute(0, 3, 1, 2)).permute(0, 2, 3, 1)
    assert_close(got, ref, torch.float32, "conv + folded BN", scale=2)


def test_conv2d_refuses_what_it_does_not_compute():
    m = MODULES["conv2d"]
    x, w = torch.randn(1, 5, 5, 8, device=DEVICE), torch.randn(4, 3, 3, 8, device=DEVICE)
    with pytest.raises(ValueError, match="channels"):
        m.conv2d(x, torch.randn(4, 3, 3, 6, device=DEVICE))
    with pytest.raises(ValueError, match="activation"):
        m.conv2d(x, w, activation="gelu")
    with pytest.raises(ValueError, match="NHWC"):
        m.conv2d(x[0], w)
    with pytest.raises(ValueError, match="residual"):
        m.conv2d(x, w, residual=torch.randn(1, 5, 5, 4, device=DEVICE))


CAUSAL_CONV1D_CASES = [(2, 37, 70, 4, "silu", True), (1, 600, 33, 3, None, True), (2, 45, 20, 2, "silu", False),
                       (1, 1100, 17, 4, "silu", True)]


def _check_causal_conv1d(m, case, dtype, g):
    batch, seqlen, channels, width, activation, has_bias = case
    x = randn(batch, seqlen, channels, dtype=dtype, gen=g)
    w = randn(channels, width, dtype=dtype, gen=g, scale=0.5)
    b = randn(channels, dtype=dtype, gen=g, scale=0.1) if has_bias else None
    ks = [leaf(t) if t is not None else None for t in (x, w, b)]
    rs = [as_reference(t) if t is not None else None for t in (x, w, b)]
    y = m.causal_conv1d(*ks, activation)
    yr = m.causal_conv1d_reference(*rs, activation)
    assert_close(y, yr, dtype, f"y {case}")
    dy = randn(*y.shape, dtype=dtype, gen=g)
    y.backward(dy)
    yr.backward(dy.double())
    assert_close(ks[0].grad, rs[0].grad, dtype, f"dx {case}", scale=2)
    assert_close(ks[1].grad, rs[1].grad, dtype, f"dweight {case}", scale=8)  # a sum over batch * seqlen
    if has_bias:
        assert_close(ks[2].grad, rs[2].grad, dtype, f"dbias {case}", scale=8)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("case", CAUSAL_CONV1D_CASES, ids=str)
def test_causal_conv1d_forward_backward(dtype, case):
    _check_causal_conv1d(MODULES["causal_conv1d"], case, dtype, fresh_generator())


def _causal_conv1d_every_config():
    m = MODULES["causal_conv1d"]
    return ([("fwd", c) for c in m._CAUSAL_CONV1D_FWD_ALL_CONFIGS]
            + [("bwd", c) for c in m._CAUSAL_CONV1D_BWD_ALL_CONFIGS])


@pytest.mark.parametrize("which,config", _causal_conv1d_every_config(), ids=lambda v: str(v) if isinstance(v, str) else str(v.kwargs))
def test_causal_conv1d_every_autotune_config_against_float64(which, config):
    m = MODULES["causal_conv1d"]
    kernel, launcher = {"fwd": (m._causal_conv1d_fwd_kernel, m._causal_conv1d_fwd_launch),
                        "bwd": (m._causal_conv1d_bwd_kernel, m._causal_conv1d_bwd_launch)}[which]
    g = fresh_generator()
    with _OneConfig(kernel, launcher, config):
        for case in (CAUSAL_CONV1D_CASES[0], CAUSAL_CONV1D_CASES[3]):
            _check_causal_conv1d(m, case, torch.bfloat16, g)


def test_causal_conv1d_refuses_what_it_does_not_compute():
    m = MODULES["causal_conv1d"]
    x = torch.randn(1, 8, 6, device=DEVICE)
    with pytest.raises(ValueError, match="width"):
        m.causal_conv1d(x, torch.randn(6, 5, device=DEVICE))
    with pytest.raises(ValueError, match="channels"):
        m.causal_conv1d(x, torch.randn(7, 4, device=DEVICE))
    with pytest.raises(ValueError, match="activation"):
        m.causal_conv1d(x, torch.randn(6, 4, device=DEVICE), activation="relu")
# ----------------------------------------------------------------------------- mixture of experts
_TL_DOT_TEMPLATES = {"moe"}


def _skip_bf16_dot_on_the_interpreter(dtype):
    """The CPU interpreter (triton 3.9) multiplies bf16 tl.dot operands as their raw bits (a 16x16 dot
    of randn values comes out near 3e10); fp16 and fp32 are right there, bf16 runs on the GPU."""
    if DEVICE == "cpu" and dtype == torch.bfloat16:
        pytest.skip("the interpreter's tl.dot reads bf16 operands as raw bits; checked on the GPU")


def _moe_case(g, dtype, n_tokens, hidden, inter, n_experts, top_k, unused_experts=0):
    """x, routing (weights, ids) from random logits (the last ``unused_experts`` get none), weights."""
    m = MODULES["moe"]
    x = randn(n_tokens, hidden, dtype=dtype, gen=g)
    w_gate_up = randn(n_experts, 2 * inter, hidden, dtype=dtype, gen=g, scale=hidden ** -0.5)
    w_down = randn(n_experts, hidden, inter, dtype=dtype, gen=g, scale=inter ** -0.5)
    logits = randn(n_tokens, n_experts, dtype=torch.float64, gen=g, scale=2.0)
    if unused_experts:
        logits[:, n_experts - unused_experts:] = -1e4
    weights, ids = m.moe_route_reference(logits, top_k)
    return x, weights.float(), ids.to(torch.int32), w_gate_up, w_down


@pytest.mark.parametrize("scoring", ["softmax", "sigmoid"])
@pytest.mark.parametrize("n_experts,top_k,renormalize", [(8, 2, True), (6, 3, False), (64, 8, True), (5, 1, False)])
def test_moe_router_matches_float64(scoring, n_experts, top_k, renormalize):
    m, g = MODULES["moe"], fresh_generator()
    logits = randn(37, n_experts, dtype=torch.float32, gen=g, scale=3.0)
    weights, ids = m.moe_route(logits, top_k, scoring, renormalize)
    ref_w, ref_ids = m.moe_route_reference(logits.double(), top_k, scoring, renormalize)
    assert torch.equal(ids.long(), ref_ids), "the chosen experts, in score order"
    assert_close(weights, ref_w, torch.float32, "routing weights")


def test_moe_router_never_picks_an_expert_twice_when_scores_underflow_to_zero():
    """Softmax probabilities of 0.0 (logits far below the max): masking a chosen expert with 0.0 would
    tie with them and pick it again; the template masks with -inf."""
    m = MODULES["moe"]
    logits = torch.tensor([[0.0, -1e4, -1e4, -1e4, -1e4], [-1e4, -1e4, 3.0, -1e4, -1e4]], device=DEVICE)
    weights, ids = m.moe_route(logits, 3, "softmax", renormalize=False)
    for row in ids.tolist():
        assert len(set(row)) == 3, f"an expert chosen twice: {row}"
    assert ids[0, 0].item() == 0 and ids[1, 0].item() == 2
    assert weights[:, 0].tolist() == [1.0, 1.0] and (weights[:, 1:] == 0).all()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("activation", ["swiglu", "tanh_glu", "relu2_glu", "geglu_sigmoid"])
@pytest.mark.parametrize("n_tokens,hidden,inter,n_experts,top_k,unused", [(19, 40, 24, 6, 2, 2), (3, 72, 40, 5, 3, 0)],
                         ids=["19-tokens-idle-experts", "3-tokens-top3"])
def test_moe_experts_forward_backward(dtype, activation, n_tokens, hidden, inter, n_experts, top_k, unused):
    """Forward and every gradient (x, routing weights, both weight stacks) against a float64 loop over
    experts; experts that get no token, odd sizes, top-1/2/3."""
    _skip_bf16_dot_on_the_interpreter(dtype)
    m, g = MODULES["moe"], fresh_generator()
    case = _moe_case(g, dtype, n_tokens, hidden, inter, n_experts, top_k, unused)
    x, weights, ids, w_gate_up, w_down = case
    ks = [leaf(t) for t in (x, weights, w_gate_up, w_down)]
    out = m.moe_experts(ks[0], ks[1], ids, ks[2], ks[3], activation)
    rs = [as_reference(t) for t in (x, weights, w_gate_up, w_down)]
    ref = m.moe_experts_reference(rs[0], rs[1], ids, rs[2], rs[3], activation)
    assert_close(out, ref, dtype, "out", scale=2.0)
    with torch.no_grad():
        assert_close(m.moe_experts(x, weights, ids, w_gate_up, w_down, activation), ref, dtype, "inference out",
                     scale=2.0)
    grad = randn(*out.shape, dtype=dtype, gen=g)
    out.backward(grad)
    ref.backward(grad.double())
    for got, want, what in zip(ks, rs, ["dx", "dweights", "dw_gate_up", "dw_down"]):
        assert_close(got.grad, want.grad, dtype if what != "dweights" else dtype, what, scale=4.0)
    if unused:
        assert (ks[2].grad[n_experts - unused:] == 0).all() and (ks[3].grad[n_experts - unused:] == 0).all()


@pytest.mark.parametrize("scoring,renormalize", [("softmax", True), ("sigmoid", False)])
def test_moe_layer_forward_backward_with_the_router(scoring, renormalize):
    """The whole layer: router logits from a matmul, top-k, experts; the router weight's gradient
    flows through the chosen experts' scores."""
    m, g = MODULES["moe"], fresh_generator()
    x = randn(2, 5, 48, dtype=torch.float32, gen=g)
    router = randn(7, 48, dtype=torch.float32, gen=g, scale=0.5)
    w_gate_up = randn(7, 64, 48, dtype=torch.float32, gen=g, scale=48 ** -0.5)
    w_down = randn(7, 48, 32, dtype=torch.float32, gen=g, scale=32 ** -0.5)
    ks = [leaf(t) for t in (x, router, w_gate_up, w_down)]
    rs = [as_reference(t) for t in (x, router, w_gate_up, w_down)]
    out = m.moe(*ks, top_k=2, scoring=scoring, renormalize=renormalize)
    ref = m.moe_reference(*rs, top_k=2, scoring=scoring, renormalize=renormalize)
    assert_close(out, ref, torch.float32, "out", scale=2.0)
    grad = randn(*out.shape, dtype=torch.float32, gen=g)
    out.backward(grad)
    ref.backward(grad.double())
    for got, want, what in zip(ks, rs, ["dx", "drouter", "dw_gate_up", "dw_down"]):
        assert_close(got.grad, want.grad, torch.float32, what, scale=4.0)


def test_moe_layer_compiles_without_a_graph_break():
    """The whole layer under torch.compile: the router and the experts are one custom op each (fullgraph),
    forward and backward against float64."""
    m, g = MODULES["moe"], fresh_generator()
    inputs = (randn(6, 32, dtype=torch.float32, gen=g), randn(5, 32, dtype=torch.float32, gen=g, scale=0.5),
              randn(5, 48, 32, dtype=torch.float32, gen=g, scale=32 ** -0.5),
              randn(5, 32, 24, dtype=torch.float32, gen=g, scale=24 ** -0.5))
    torch._dynamo.reset()
    explain = torch._dynamo.explain(lambda *xs: m.moe(*xs, top_k=2))(*inputs)
    assert explain.graph_break_count == 0, explain.break_reasons
    backend = os.environ.get("TRITONIFY_COMPILE_BACKEND", "inductor") if DEVICE == "cuda" else "aot_eager"
    compiled = torch.compile(lambda *xs: m.moe(*xs, top_k=2), backend=backend, fullgraph=True)
    ks, rs = [leaf(t) for t in inputs], [as_reference(t) for t in inputs]
    out, ref = compiled(*ks), m.moe_reference(*rs, top_k=2)
    assert_close(out, ref, torch.float32, "compiled layer", scale=2.0)
    grad = randn(*out.shape, dtype=torch.float32, gen=g)
    out.backward(grad)
    ref.backward(grad.double())
    for got, want, what in zip(ks, rs, ["dx", "drouter", "dw_gate_up", "dw_down"]):
        assert_close(got.grad, want.grad, torch.float32, f"compiled {what}", scale=4.0)


def test_moe_blocks_never_cross_experts_and_cover_every_row():
    """Many tokens on few experts (several row blocks per expert, ragged last blocks), one expert with
    a single token, one with none: every slot's output is right (a block that ran into the next
    expert's rows would use the wrong weights there)."""
    m, g = MODULES["moe"], fresh_generator()
    x, _, _, w_gate_up, w_down = _moe_case(g, torch.float32, 41, 32, 16, 4, 1)
    ids = torch.tensor([0] * 18 + [1] * 21 + [3] * 1 + [0], dtype=torch.int32, device=DEVICE)[:, None]
    weights = torch.rand(41, 1, generator=g).to(DEVICE) + 0.5
    out = m.moe_experts(x, weights, ids, w_gate_up, w_down)
    ref = m.moe_experts_reference(x.double(), weights.double(), ids, w_gate_up.double(), w_down.double())
    assert_close(out, ref, torch.float32, "out", scale=2.0)


def _moe_force_config(i):
    """The i-th config of the gate+up kernel and of the grouped kernel forced together (the lists have
    the same length); autotuner caches and recorded launch plans cleared before and after."""
    m = MODULES["moe"]
    kernels = (m._moe_gate_up_kernel, m._moe_grouped_kernel)
    lists = (m._MOE_GATE_UP_CONFIGS, m._MOE_GROUPED_CONFIGS)
    assert len(lists[0]) == len(lists[1])
    saved = [list(k.configs) for k in kernels]
    try:
        for kernel, configs in zip(kernels, lists):
            kernel.configs = [configs[i]]
            kernel.cache.clear()
        for launcher in (m._moe_gate_up_launch, m._moe_grouped_launch):
            launcher.plans.clear()
        yield lists[0][i], lists[1][i]
    finally:
        for kernel, configs in zip(kernels, saved):
            kernel.configs = configs
            kernel.cache.clear()
        for launcher in (m._moe_gate_up_launch, m._moe_grouped_launch):
            launcher.plans.clear()


# On the GPU every config in bf16 (the interpreter cannot check a bf16 dot); on the interpreter every
# config once, in fp16 and fp32 by turns (each dtype on five configs: the tiling and the masks a config
# changes are the same in both, and test_moe_experts_forward_backward checks each dtype on every
# activation), which halves the CPU lane's longest test without leaving a config unchecked.
_MOE_CONFIG_CASES = ([(torch.bfloat16, i) for i in range(10)] if DEVICE == "cuda"
                     else [(torch.float16 if i % 2 == 0 else torch.float32, i) for i in range(10)])


@pytest.mark.parametrize("dtype,index", _MOE_CONFIG_CASES, ids=lambda v: f"config{v}" if isinstance(v, int) else str(v))
def test_moe_every_autotune_config_forward_backward(dtype, index):
    """Every config the GPU's autotuner chooses from, forced, forward and backward against float64,
    at a size with fewer rows than one block on some experts and more on others, hidden not a
    multiple of any BLOCK_K (the masked K loop) and one that is (the unmasked one)."""
    m = MODULES["moe"]
    assert len(m._MOE_GATE_UP_CONFIGS) == 10
    for gate_up_config, grouped_config in _moe_force_config(index):
        for hidden in (72, 256):
            g = fresh_generator()
            x, weights, ids, w_gate_up, w_down = _moe_case(g, dtype, 23, hidden, 40, 5, 2, 1)
            ks = [leaf(t) for t in (x, weights, w_gate_up, w_down)]
            out = m.moe_experts(ks[0], ks[1], ids, ks[2], ks[3])
            rs = [as_reference(t) for t in (x, weights, w_gate_up, w_down)]
            ref = m.moe_experts_reference(rs[0], rs[1], ids, rs[2], rs[3])
            what = f"{gate_up_config} / {grouped_config}, hidden {hidden}"
            assert_close(out, ref, dtype, f"out ({what})", scale=2.0)
            grad = randn(*out.shape, dtype=dtype, gen=g)
            out.backward(grad)
            ref.backward(grad.double())
            for got, want, name in zip(ks, rs, ["dx", "dweights", "dw_gate_up", "dw_down"]):
                assert_close(got.grad, want.grad, dtype, f"{name} ({what})", scale=4.0)


def test_moe_refuses_mismatched_shapes_and_unknown_options():
    m, g = MODULES["moe"], fresh_generator()
    x, weights, ids, w_gate_up, w_down = _moe_case(g, torch.float32, 4, 16, 8, 3, 2)
    with pytest.raises(ValueError, match="shapes disagree"):
        m.moe_experts(x, weights, ids, w_gate_up, w_down[:, :8])
    with pytest.raises(ValueError, match="activation"):
        m.moe_experts(x, weights, ids, w_gate_up, w_down, "gelu")
    with pytest.raises(ValueError, match="top_k"):
        m.moe_route(torch.randn(4, 3, device=DEVICE), 4)
    with pytest.raises(ValueError, match="scoring"):
        m.moe_route(torch.randn(4, 3, device=DEVICE), 2, "softplus")
