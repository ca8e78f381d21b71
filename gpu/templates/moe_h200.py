"""The MoE template and the cross-entropy template's leaf-logits case, measured in one device call.

    python gpu/templates/moe_h200.py OUT_DIR --vllm DIR [--budget S] [--sections ce,fwd,train]

Sections, in order, each stopping at the time budget:
* ``ce``: cross-entropy forward + backward, bf16 8192x128256, the logits in the two forms a training
  step builds them: a leaf that requires grad (``loss.backward()`` fills ``.grad``, as Liger's own
  benchmark builds its input) and the output of a matmul (lm_head: the gradient flows on into the
  hidden states and the weight). Template against Liger in the same run: time (CUDA events with the
  L2 flushed, ``tritonify.kernels.bench.timing.GpuTimer``), the backward's peak extra memory, the
  gradient against float64.
* ``fwd``: the MoE layer's experts (routing given, the same for every implementation) at Mixtral-8x7B
  shapes (hidden 4096, intermediate 14336, 8 experts, top-2; decode 1, 8, 64 tokens, prefill 4096 and
  16384) and a many-small-experts shape (64 experts, top-8, hidden 2048, intermediate 1408): the
  template; vLLM's fused_moe Triton kernel from the pinned wheel (``--vllm``: its fused_moe.py and H200
  config JSON, nothing of it committed; its block alignment rebuilt in torch, its SiLU-and-mul as one
  Triton pass, the top-k sum as ``torch.sum``); ``torch._grouped_mm``; the PyTorch reference (a loop
  over experts) eager and under ``torch.compile``. Output checked against a float64 loop at one decode
  and one prefill shape per model. Timed twice: CUDA-graph replay (``graph``: GPU time, no host
  overhead; where capture fails the events time is used) and CUDA events with an L2 flush
  (``events``: what an eager loop sees).
* ``train``: forward + backward (every gradient: x, routing weights, both weight stacks) at prefill
  shapes: the template against the reference eager and under torch.compile; gradients against float64.
"""
from __future__ import annotations

import argparse
import ast
import json
import math
import os
import sys
import time
import traceback
from pathlib import Path

T0 = time.time()
MIXTRAL = dict(hidden=4096, inter=14336, experts=8, top_k=2)
MANY = dict(hidden=2048, inter=1408, experts=64, top_k=8)
FWD_CASES = [("mixtral", MIXTRAL, n) for n in (1, 8, 64, 4096, 16384)] + [("64x8", MANY, n) for n in (64, 4096, 16384)]
TRAIN_CASES = [("mixtral", MIXTRAL, 4096), ("64x8", MANY, 4096)]
CHECKED = {("mixtral", 64), ("mixtral", 4096), ("64x8", 64), ("64x8", 4096)}
IMPLS: set[str] = set()  # --impls: time only these (all when empty)
PIN = False  # --pin: the template's configs restricted to an earlier run's autotune winners
WARM_FIRST = ""  # --warm-first FILE: compile/autotune every forward case, then wait for FILE before timing


def left(budget):
    return budget - (time.time() - T0)


class Log:
    def __init__(self, out: Path):
        self.f = (out / "moe_h200.jsonl").open("a")

    def __call__(self, **rec):
        rec["t"] = round(time.time() - T0, 1)
        line = json.dumps(rec, default=str)
        self.f.write(line + "\n")
        self.f.flush()
        print(line, flush=True)


def env_record():
    import importlib.metadata as md

    import torch
    import triton

    p = torch.cuda.get_device_properties(0)
    return {"kind": "env", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "gpu": p.name,
            "sms": p.multi_processor_count, "python": sys.version.split()[0], "torch": torch.__version__,
            "cuda": torch.version.cuda, "triton": triton.__version__, "liger": md.version("liger-kernel"),
            "vllm_kernel": "vllm==0.33.0 fused_moe.py (fused_moe_kernel)"}


def timer():
    from tritonify.kernels.bench.timing import GpuTimer

    return GpuTimer(warmup_ms=10, rep_ms=60)


def times(fn, graph=True, calls=1):
    """{graph_us, events_us}: CUDA-graph replay and CUDA events with the L2 flushed (median of the
    second of two passes); graph capture that fails (a host sync in the call) leaves graph_us None."""
    t = timer()
    rec = {}
    if graph:
        g = t.measure(fn, graph=True, calls_per_graph=calls)
        rec["graph_us"] = 1e3 * g.p50_ms if g.method == "cuda_graph" else None
        rec["graph_noisy"] = g.noisy
        if g.method != "cuda_graph":
            rec["graph_note"] = g.note[:160]
    e = t.measure(fn, graph=False)
    rec["events_us"], rec["events_noisy"] = 1e3 * e.p50_ms, e.noisy
    return rec


# --------------------------------------------------------------------------- cross-entropy
def section_ce(log, budget):
    import torch
    import torch.nn.functional as F
    from liger_kernel.transformers.functional import liger_cross_entropy
    from tritonify.kernels.templates import cross_entropy as ce

    rows, vocab, hidden = 8192, 128256, 4096
    torch.manual_seed(1)
    base = (torch.randn(rows, vocab, device="cuda") * 2).to(torch.bfloat16)
    target = torch.randint(0, vocab, (rows,), device="cuda")
    target[torch.rand(rows, device="cuda") < 0.1] = -100
    valid = target != -100
    ref = torch.softmax(base.double(), -1)
    ref[valid.nonzero().squeeze(1), target[valid]] -= 1
    ref[~valid] = 0
    ref /= valid.sum()
    impls = {"template": lambda x: ce.cross_entropy(x, target), "liger": lambda x: liger_cross_entropy(x, target)}
    # leaf logits: loss.backward() fills .grad (an aliased gradient is copied unless autograd can take it over)
    for label, fn in impls.items():
        try:
            x = base.clone().requires_grad_()
            fn(x).backward()
            err = (x.grad.double() - ref).abs().max().item()
            aliased = x.grad.data_ptr() == x.data_ptr()
            x.grad = None
            x.data.copy_(base)
            loss = fn(x)
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            before = torch.cuda.memory_allocated()
            loss.backward()
            torch.cuda.synchronize()
            extra = torch.cuda.max_memory_allocated() - before
            del loss
            x.grad = None

            def step(x=x, fn=fn):
                fn(x).backward()
                x.grad = None

            log(kind="ce", form="leaf", impl=label, shape=[rows, vocab], max_abs_grad_err=err, grad_is_logits=aliased,
                backward_peak_extra_bytes=extra, **times(step, graph=False))
            del x
        except Exception as exc:  # noqa: BLE001
            log(kind="ce", form="leaf", impl=label, error=f"{type(exc).__name__}: {exc}"[:300])
        torch.cuda.empty_cache()
    # logits from a matmul (lm_head): the gradient flows on into h and W
    h = (torch.randn(rows, hidden, device="cuda")).to(torch.bfloat16).requires_grad_()
    w = (torch.randn(vocab, hidden, device="cuda") * hidden ** -0.5).to(torch.bfloat16).requires_grad_()
    for label, fn in impls.items():
        try:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            before = torch.cuda.memory_allocated()
            fn(h @ w.t()).backward()
            torch.cuda.synchronize()
            peak = torch.cuda.max_memory_allocated() - before
            h.grad = w.grad = None

            def step(fn=fn):
                fn(h @ w.t()).backward()
                h.grad = w.grad = None

            log(kind="ce", form="matmul", impl=label, shape=[rows, vocab, hidden], fwd_bwd_peak_extra_bytes=peak,
                logits_bytes=rows * vocab * 2, **times(step, graph=False))
        except Exception as exc:  # noqa: BLE001
            log(kind="ce", form="matmul", impl=label, error=f"{type(exc).__name__}: {exc}"[:300])
        torch.cuda.empty_cache()
    del base, ref
    torch.cuda.empty_cache()


# --------------------------------------------------------------------------- vLLM's kernel, rebuilt around
def load_vllm(vllm_dir: Path):
    """vLLM's fused_moe_kernel (and the helper it calls) compiled from the pinned wheel's source, and
    its H200 configs; the block alignment it needs (a compiled op in vLLM) rebuilt here in torch."""
    import triton
    import triton.language as tl

    source = (vllm_dir / "fused_moe.py").read_text()
    tree = ast.parse(source)
    wanted = {"write_zeros_to_output", "fused_moe_kernel"}
    body = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in wanted]
    code = "\n\n".join("@triton.jit\n" + ast.get_source_segment(source, n) for n in body)
    path = Path("/tmp/vllm_fused_moe_kernel.py")
    path.write_text("import triton\nimport triton.language as tl\n\n" + code + "\n")
    import importlib.util

    spec = importlib.util.spec_from_file_location("vllm_fused_moe_kernel", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)  # the pinned wheel's kernel, as a module of its own
    namespace = vars(module)
    configs = {}
    for f in vllm_dir.glob("E=*.json"):
        configs[f.name] = {int(k): v for k, v in json.loads(f.read_text()).items()}
    return namespace["fused_moe_kernel"], configs, tl


def vllm_default_config(m_tokens, n_experts):
    """vLLM's default bf16 config when no tuned file exists (its get_default_config, bf16 branch)."""
    block_m = 16 if m_tokens <= 32 else 32 if m_tokens <= 96 else 64 if m_tokens <= 512 else 128
    return {"BLOCK_SIZE_M": block_m, "BLOCK_SIZE_N": 64 if m_tokens <= 64 else 128,
            "BLOCK_SIZE_K": 128 if m_tokens <= 64 else 64,
            "GROUP_SIZE_M": 16 if m_tokens // max(n_experts, 1) > 128 else 1,
            "num_warps": 4 if m_tokens <= 128 else 8, "num_stages": 4 if m_tokens <= 32 else 3}


def vllm_config(configs, n_experts, inter, m_tokens):
    table = configs.get(f"E={n_experts},N={inter},device_name=NVIDIA_H200.json")
    if table is None:
        return vllm_default_config(m_tokens, n_experts), "default"
    return dict(table[min(table, key=lambda k: abs(k - m_tokens))]), "tuned H200 json"


def _silu_and_mul():
    """vLLM's silu_and_mul is a compiled CUDA op: the same one pass (read gate|up, write silu(gate)*up)."""
    import triton
    import triton.language as tl

    @triton.jit
    def silu_and_mul(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        mask = cols < n_cols
        g = tl.load(x_ptr + row * 2 * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
        u = tl.load(x_ptr + row * 2 * n_cols + n_cols + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + row * n_cols + cols, (g * tl.sigmoid(g) * u).to(y_ptr.dtype.element_ty), mask=mask)

    return silu_and_mul


def make_vllm_moe(kernel, tl, config):
    import torch
    import triton

    silu_and_mul = _silu_and_mul()

    bm = config["BLOCK_SIZE_M"]
    COMPUTE = {torch.bfloat16: tl.bfloat16, torch.float16: tl.float16, torch.float32: tl.float32}

    def align(topk_ids, n_experts):
        """moe_align_block_size in torch, no host sync: slots sorted by expert, each expert padded to a
        multiple of BLOCK_SIZE_M with the sentinel numel(), the expert of every block, the padded total."""
        flat = topk_ids.reshape(-1).long()
        numel = flat.numel()
        counts = torch.zeros(n_experts, dtype=torch.long, device=flat.device).scatter_add_(0, flat, torch.ones_like(flat))
        padded = (counts + bm - 1) // bm * bm
        ends = torch.cumsum(padded, 0)
        starts = ends - padded
        max_padded = numel + n_experts * (bm - 1)
        sorted_ids = torch.full((max_padded,), numel, dtype=torch.int32, device=flat.device)
        sorted_experts, order = torch.sort(flat, stable=True)
        first = torch.cumsum(counts, 0) - counts
        rank = torch.arange(numel, device=flat.device) - first[sorted_experts]
        sorted_ids[starts[sorted_experts] + rank] = order.to(torch.int32)
        blocks = torch.arange(max_padded // bm, device=flat.device) * bm
        expert_ids = torch.searchsorted(ends, blocks, right=True)
        expert_ids = torch.where(expert_ids < n_experts, expert_ids, -1).to(torch.int32)
        return sorted_ids, expert_ids, ends[-1:].to(torch.int32)

    def gemm(a, b, c, weights, sorted_ids, expert_ids, total, mul_weight, top_k):
        m_tokens = a.shape[0]
        em = sorted_ids.shape[0]
        if m_tokens < bm:
            em = min(em, m_tokens * top_k * bm)
        cfg = dict(config)
        block_k = cfg.pop("BLOCK_SIZE_K")
        grid = (triton.cdiv(em, bm) * triton.cdiv(b.shape[1], cfg["BLOCK_SIZE_N"]),)
        kernel[grid](a, b, c, None, None, None, weights, sorted_ids, expert_ids, total, b.shape[1], b.shape[2], em,
                     m_tokens * top_k, a.stride(0), a.stride(1), b.stride(0), b.stride(2), b.stride(1),
                     c.stride(-2), c.stride(-1), 0, 0, 0, 0, 0, 0, 0, 0, 0, naive_block_assignment=False,
                     MUL_ROUTED_WEIGHT=mul_weight, top_k=top_k, compute_type=COMPUTE[a.dtype], use_fp8_w8a8=False,
                     use_int8_w8a8=False, use_int8_w8a16=False, per_channel_quant=False, HAS_BIAS=False,
                     BLOCK_SIZE_K=block_k, SWAP_AB=False, USE_TD=False, SPLIT_K=1, **cfg)

    def moe(x, weights, ids, w1, w2):
        m_tokens, hidden = x.shape
        n_experts, two_inter, _ = w1.shape
        top_k = ids.shape[1]
        sorted_ids, expert_ids, total = align(ids, n_experts)
        cache1 = torch.empty(m_tokens * top_k, two_inter, dtype=x.dtype, device=x.device)
        gemm(x, w1, cache1, weights, sorted_ids, expert_ids, total, False, top_k)
        cache2 = torch.empty(m_tokens * top_k, two_inter // 2, dtype=x.dtype, device=x.device)
        silu_and_mul[(m_tokens * top_k, triton.cdiv(two_inter // 2, 1024))](cache1, cache2, two_inter // 2, BLOCK=1024)
        cache3 = torch.empty(m_tokens, top_k, hidden, dtype=x.dtype, device=x.device)
        gemm(cache2, w2, cache3, weights.reshape(-1).contiguous(), sorted_ids, expert_ids, total, True, 1)
        return cache3.sum(1)

    return moe


def grouped_mm_moe(x, weights, ids, w_gate_up, w_down):
    """torch._grouped_mm: tokens sorted by expert, one grouped GEMM per projection, SiLU-and-mul, the
    weighted scatter back (what a user without a fused kernel can write in PyTorch)."""
    import torch

    n_tokens, hidden = x.shape
    n_experts, two_inter, _ = w_gate_up.shape
    top_k = ids.shape[1]
    flat = ids.reshape(-1)
    sorted_experts, order = torch.sort(flat, stable=True)
    offs = torch.searchsorted(sorted_experts, torch.arange(1, n_experts + 1, device=x.device, dtype=flat.dtype),
                              out_int32=True)
    tokens = order // top_k
    xs = x.index_select(0, tokens)
    gu = torch._grouped_mm(xs, w_gate_up.transpose(1, 2), offs=offs)
    inter = two_inter // 2
    h = torch.nn.functional.silu(gu[:, :inter]) * gu[:, inter:]
    y = torch._grouped_mm(h, w_down.transpose(1, 2), offs=offs)
    y = y * weights.reshape(-1)[order].to(y.dtype)[:, None]
    return torch.zeros_like(x).index_add_(0, tokens, y)


# --------------------------------------------------------------------------- MoE forward
def moe_inputs(cfg, n_tokens, seed):
    import torch

    g = torch.Generator(device="cuda").manual_seed(seed)
    hid, inter, e, k = cfg["hidden"], cfg["inter"], cfg["experts"], cfg["top_k"]
    x = torch.randn(n_tokens, hid, device="cuda", generator=g).to(torch.bfloat16)
    w_gate_up = (torch.randn(e, 2 * inter, hid, device="cuda", generator=g) * hid ** -0.5).to(torch.bfloat16)
    w_down = (torch.randn(e, hid, inter, device="cuda", generator=g) * inter ** -0.5).to(torch.bfloat16)
    router = (torch.randn(e, hid, device="cuda", generator=g) * hid ** -0.5).to(torch.bfloat16)
    return x, router, w_gate_up, w_down


def section_fwd(log, budget, vllm_dir):
    import torch
    from tritonify.kernels.templates import moe as m

    kernel, configs, tl = load_vllm(vllm_dir)
    compiled = torch.compile(m.moe_experts_reference)
    if PIN:
        # the template's own autotuner, over the configs it chose at these shapes in the 2026-12-01T22:34Z
        # run (one per slot bucket), so this run compiles a few configs instead of tuning all of them
        pin = {"gate_up": [(16, 32, 256, 4, 4, 8), (32, 64, 128, 4, 4, 8), (128, 128, 64, 8, 4, 16)],
               "grouped": [(16, 64, 128, 4, 4, 8), (16, 64, 256, 4, 3, 8), (128, 256, 64, 8, 3, 16)]}
        for name, kern in (("gate_up", m._moe_gate_up_kernel), ("grouped", m._moe_grouped_kernel)):
            kern.configs = [m._moe_config(bm, bn, bk, w, st, group=g) for bm, bn, bk, w, st, g in pin[name]]
            kern.cache.clear()
        log(kind="pinned", configs=pin, note="the template's autotune winners of the 22:34Z run")
    if WARM_FIRST:
        # compile and autotune every case first (the GPU checks may still run beside this), then wait for
        # the checks to finish: the timings below run alone on the GPU
        for model, cfg, n_tokens in FWD_CASES:
            x, router, w_gate_up, w_down = moe_inputs(cfg, n_tokens, seed=n_tokens)
            weights, ids = m.moe_route(x @ router.t(), cfg["top_k"])
            vcfg, _ = vllm_config(configs, cfg["experts"], cfg["inter"], n_tokens)
            for label, fn in {"template": lambda: m.moe_experts(x, weights, ids, w_gate_up, w_down),
                              "vllm": (lambda f: lambda: f(x, weights, ids, w_gate_up, w_down))(
                                  make_vllm_moe(kernel, tl, vcfg))}.items():
                if IMPLS and label not in IMPLS:
                    continue
                try:
                    fn()
                except Exception as exc:  # noqa: BLE001 - reported again when timed
                    log(kind="warm_error", model=model, tokens=n_tokens, impl=label,
                        error=f"{type(exc).__name__}: {exc}"[-3000:])
            del x, router, w_gate_up, w_down
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
        log(kind="warm", done=True)
        while WARM_FIRST != "-" and not Path(WARM_FIRST).exists() and left(budget) > 40:
            time.sleep(1)
        log(kind="checks_done", seen=Path(WARM_FIRST).exists())
    for model, cfg, n_tokens in FWD_CASES:
        if left(budget) < 60:
            log(kind="skipped", section="fwd", model=model, tokens=n_tokens)
            continue
        x, router, w_gate_up, w_down = moe_inputs(cfg, n_tokens, seed=n_tokens)
        weights, ids = m.moe_route(x @ router.t(), cfg["top_k"])
        vcfg, vsource = vllm_config(configs, cfg["experts"], cfg["inter"], n_tokens)
        impls = {"template": lambda: m.moe_experts(x, weights, ids, w_gate_up, w_down),
                 "vllm": (lambda f: lambda: f(x, weights, ids, w_gate_up, w_down))(make_vllm_moe(kernel, tl, vcfg)),
                 "grouped_mm": lambda: grouped_mm_moe(x, weights, ids, w_gate_up, w_down),
                 "eager": lambda: m.moe_experts_reference(x, weights, ids, w_gate_up, w_down)}
        if n_tokens >= 4096:
            impls["compile"] = lambda: compiled(x, weights, ids, w_gate_up, w_down)
        if IMPLS:
            impls = {k: v for k, v in impls.items() if k in IMPLS}
        ref = None
        if (model, n_tokens) in CHECKED:
            ref = m.moe_experts_reference(x.double(), weights.double(), ids, w_gate_up.double(), w_down.double())
        for label, fn in impls.items():
            rec = {"kind": "moe_fwd", "model": model, "tokens": n_tokens, **cfg, "impl": label}
            if label == "vllm":
                rec["vllm_config"], rec["vllm_config_source"] = vcfg, vsource
            try:
                out = fn()
                if ref is not None:
                    err = (out.double() - ref).abs()
                    rec["max_abs_err"] = err.max().item()
                    rec["max_abs_ref"] = ref.abs().max().item()
                    rec["within_bf16_tolerance"] = bool((err <= 1e-2 + 1.6e-2 * ref.abs()).all().item())
                del out
                rec.update(times(fn, graph=label not in ("eager", "compile")))
            except Exception as exc:  # noqa: BLE001
                rec["error"] = f"{type(exc).__name__}: {exc}"[-3000:]
            log(**rec)
            torch.cuda.empty_cache()
        del x, router, w_gate_up, w_down, ref
        torch.cuda.empty_cache()
    log(kind="autotune", gate_up={str(k): str(v) for k, v in m._moe_gate_up_kernel.cache.items()},
        grouped={str(k): str(v) for k, v in m._moe_grouped_kernel.cache.items()})


def section_train(log, budget):
    import torch
    from tritonify.kernels.templates import moe as m

    compiled = torch.compile(m.moe_experts_reference)
    for model, cfg, n_tokens in TRAIN_CASES:
        if left(budget) < 60:
            log(kind="skipped", section="train", model=model, tokens=n_tokens)
            continue
        x, router, w_gate_up, w_down = moe_inputs(cfg, n_tokens, seed=7 + n_tokens)
        weights, ids = m.moe_route(x @ router.t(), cfg["top_k"])
        leaves = [t.detach().clone().requires_grad_() for t in (x, weights, w_gate_up, w_down)]
        dout = torch.randn_like(x)
        rs = [t.detach().double().requires_grad_() for t in (x, weights, w_gate_up, w_down)]
        ref = m.moe_experts_reference(rs[0], rs[1], ids, rs[2], rs[3])
        ref.backward(dout.double())
        refs = [r.grad for r in rs]
        del ref, rs
        impls = {"template": m.moe_experts, "eager": m.moe_experts_reference, "compile": compiled}
        for label, f in impls.items():
            rec = {"kind": "moe_train", "model": model, "tokens": n_tokens, **cfg, "impl": label}
            try:
                def step(f=f):
                    f(leaves[0], leaves[1], ids, leaves[2], leaves[3]).backward(dout)
                    for t in leaves:
                        t.grad = None

                f(leaves[0], leaves[1], ids, leaves[2], leaves[3]).backward(dout)
                errs = {}
                for name, t, r in zip(["dx", "dweights", "dw_gate_up", "dw_down"], leaves, refs):
                    errs[name] = [(t.grad.double() - r).abs().max().item(), r.abs().max().item()]
                    t.grad = None
                rec["grad_max_abs_err_and_ref_max"] = errs
                rec.update(times(step, graph=False))
            except Exception as exc:  # noqa: BLE001
                rec["error"] = f"{type(exc).__name__}: {exc}"[:400]
            log(**rec)
            torch.cuda.empty_cache()
        del x, router, w_gate_up, w_down, leaves, refs
        torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--vllm", required=True)
    ap.add_argument("--budget", type=float, default=400)
    ap.add_argument("--sections", default="ce,fwd,train")
    ap.add_argument("--impls", default="", help="forward: only these implementations (comma-separated)")
    ap.add_argument("--pin", action="store_true", help="the template's configs: an earlier run's autotune winners")
    ap.add_argument("--warm-first", default="", help="compile every forward case, then wait for this file")
    ap.add_argument("--cases", default="", help="forward: only these MODEL:TOKENS cases (comma-separated)")
    args = ap.parse_args()
    global FWD_CASES, WARM_FIRST, PIN
    WARM_FIRST, PIN = args.warm_first, args.pin
    IMPLS.update(i for i in args.impls.split(",") if i)
    if args.cases:
        wanted = set(args.cases.split(","))
        FWD_CASES = [c for c in FWD_CASES if f"{c[0]}:{c[2]}" in wanted]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = Log(out)
    log(**env_record())
    for section in args.sections.split(","):
        try:
            if section == "ce":
                section_ce(log, args.budget)
            elif section == "fwd":
                section_fwd(log, args.budget, Path(args.vllm))
            elif section == "train":
                section_train(log, args.budget)
        except Exception as exc:  # noqa: BLE001
            log(kind="section_error", section=section, error=f"{type(exc).__name__}: {exc}"[:400],
                trace=traceback.format_exc()[-1500:])
    log(kind="done", elapsed_s=round(time.time() - T0, 1))


if __name__ == "__main__":
    main()
