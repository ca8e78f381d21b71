"""Fused mixture-of-experts MLP (Mixtral-style top-k routing): router, grouped GEMMs, weighted sum.

``moe(x, router_weight, w_gate_up, w_down, top_k)`` for x (T, H), router_weight (E, H),
w_gate_up (E, 2I, H) (the gate's I rows, then the up projection's) and w_down (E, H, I):

1. Router: ``x @ router_weight.T`` (cuBLAS), then one Triton pass per block of tokens: softmax scores
   with the row max subtracted (or sigmoid scores), top-k by repeated argmax where each chosen expert
   is masked with -inf (a value no remaining score can tie; 0.0 would tie with a zero probability or a
   ReLU'd score and pick the same expert twice), optional renormalisation of the k weights.
2. Permutation: the (token, k) slots sorted by expert (a stable sort), so the rows of one expert are
   contiguous; ``offsets[e]:offsets[e+1]`` is expert e's range, found by a search in the sorted ids.
   No padding: the intermediate activations hold exactly T*k rows.
3. Gate + up grouped GEMM: each program is mapped to one (expert, block of that expert's rows) pair
   and a block of I columns; it reads its tokens' rows of x (gathered through the permutation), the
   gate and up tiles of its expert's weight, and keeps both accumulators in registers, so the GLU
   activation (SwiGLU, tanh-GLU, ReLU^2-GLU, sigmoid-GeGLU) is applied before anything is stored:
   one (T*k, I) tensor is written, never (T*k, 2I). A block never crosses into another expert's
   rows; programs past the last expert's last block (the grid is sized for the worst case, with no
   host synchronisation) return at once.
4. Down grouped GEMM, the same schedule: each slot's row of the output (T*k, H) is written at the
   slot's own place (the inverse permutation), scaled by its routing weight; the k slots of a token
   are then summed.

Backward (``moe`` with tensors that require grad): the same grouped kernels compute dh = dy @ W_down
and dx = dgu @ W_gate_up per slot; the GLU derivative is one elementwise pass over the pre-activations
the forward kept; the weight gradients are one cuBLAS matmul per expert on its contiguous rows. The
routing weights' gradient flows to the router logits through PyTorch's softmax/sigmoid.
"""
import os

import torch
import triton
import triton.language as tl

MOE_HIDDEN = 4096
MOE_INTERMEDIATE = 14336
MOE_EXPERTS = 8
MOE_TOP_K = 2
MOE_DTYPE = "bfloat16"

# the GLU variants of the other templates: act(gate) * up
MOE_ACTIVATIONS = {"swiglu": 0, "tanh_glu": 1, "relu2_glu": 2, "geglu_sigmoid": 3}
MOE_SCORINGS = {"softmax": 0, "sigmoid": 1}


def _interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def _autotune_configs(configs):
    """Every config on a GPU; the first alone on the CPU interpreter, which cannot time a choice."""
    return configs[:1] if _interpreting() or not torch.cuda.is_available() else configs


def _moe_slot_bucket(n_slots: int) -> int:
    """The autotuner's view of the (token, k) slot count: small decode (<= 16 slots), decode (<= 128),
    mid (<= 4096), prefill; a tile tuned for 2 slots is never reused for 32768."""
    return 0 if n_slots <= 16 else 1 if n_slots <= 128 else 2 if n_slots <= 4096 else 3


def _moe_prune(configs, named_args, **kwargs):
    """Row tiles that suit the slot bucket: small for decode (a few rows per expert), large for prefill."""
    bucket = named_args["slot_bucket"]
    lo, hi = ((16, 16), (16, 32), (16, 64), (64, 128))[bucket]
    kept = [c for c in configs if lo <= c.kwargs["BLOCK_M"] <= hi]
    return kept or configs[:1]


def _moe_config(m, n, k, warps, stages, group=8):
    return triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": group}, num_warps=warps,
                         num_stages=stages)


# gate + up: BLOCK_N is a block of the I columns; each program holds two (BLOCK_M, BLOCK_N) accumulators
_MOE_GATE_UP_CONFIGS = [
    _moe_config(16, 64, 128, 4, 4),
    _moe_config(16, 32, 256, 4, 4),
    _moe_config(16, 64, 256, 4, 3),
    _moe_config(16, 128, 128, 4, 4),
    _moe_config(32, 64, 128, 4, 4),
    _moe_config(64, 64, 64, 4, 4),
    _moe_config(64, 128, 64, 8, 3),
    _moe_config(128, 64, 64, 4, 4),
    _moe_config(128, 128, 64, 8, 3, group=16),
    _moe_config(128, 128, 64, 8, 4, group=16),
]
# one grouped GEMM (the down projection, and the backward's dh and dx)
_MOE_GROUPED_CONFIGS = [
    _moe_config(16, 64, 128, 4, 4),
    _moe_config(16, 32, 256, 4, 4),
    _moe_config(16, 64, 256, 4, 3),
    _moe_config(16, 128, 128, 4, 4),
    _moe_config(32, 64, 128, 4, 4),
    _moe_config(64, 128, 64, 4, 4),
    _moe_config(64, 128, 128, 8, 3),
    _moe_config(128, 128, 64, 4, 4),
    _moe_config(128, 128, 64, 8, 4, group=16),
    _moe_config(128, 256, 64, 8, 3, group=16),
]


@triton.jit
def _moe_router_kernel(logits_ptr, logits_stride, weights_ptr, ids_ptr, n_tokens, n_experts,
                       TOP_K: tl.constexpr, SCORING: tl.constexpr, RENORMALIZE: tl.constexpr,
                       BLOCK_T: tl.constexpr, BLOCK_E: tl.constexpr):
    """BLOCK_T tokens per program: scores (softmax with the row max subtracted, or sigmoid), then TOP_K
    rounds of argmax, each masking the chosen expert with -inf (no remaining score ties with it)."""
    rows = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    cols = tl.arange(0, BLOCK_E)
    row_mask = rows < n_tokens
    mask = row_mask[:, None] & (cols[None, :] < n_experts)
    x = tl.load(logits_ptr + rows[:, None].to(tl.int64) * logits_stride + cols[None, :], mask=mask,
                other=0.0).to(tl.float32)
    x = tl.where(cols[None, :] < n_experts, x, float("-inf"))  # rows past the last token stay finite
    if SCORING == 0:
        row_max = tl.max(x, axis=1)
        e = tl.exp(x - row_max[:, None])
        scores = e / tl.sum(e, axis=1)[:, None]
    else:
        scores = tl.where(cols[None, :] < n_experts, tl.sigmoid(x), float("-inf"))
    total = tl.zeros([BLOCK_T], dtype=tl.float32)
    for k in tl.static_range(TOP_K):
        best = tl.argmax(scores, axis=1)
        chosen = cols[None, :] == best[:, None]
        value = tl.max(tl.where(chosen, scores, float("-inf")), axis=1)
        total += value
        tl.store(weights_ptr + rows * TOP_K + k, value, mask=row_mask)
        tl.store(ids_ptr + rows * TOP_K + k, best.to(tl.int32), mask=row_mask)
        scores = tl.where(chosen, float("-inf"), scores)
    if RENORMALIZE:
        for k in tl.static_range(TOP_K):
            w = tl.load(weights_ptr + rows * TOP_K + k, mask=row_mask, other=1.0)
            tl.store(weights_ptr + rows * TOP_K + k, w / total, mask=row_mask)


@triton.jit
def _moe_block(offsets_ptr, n_experts, pid_m, BLOCK_M: tl.constexpr, E_BLOCK: tl.constexpr):
    """The (expert, first row, end row) of row block ``pid_m`` in the expert-sorted slots, and whether
    it exists: expert e owns ceil(count_e / BLOCK_M) blocks, numbered in expert order."""
    e = tl.arange(0, E_BLOCK)
    starts = tl.load(offsets_ptr + e, mask=e < n_experts, other=0)
    ends = tl.load(offsets_ptr + e + 1, mask=e < n_experts, other=0)
    blocks = (ends - starts + BLOCK_M - 1) // BLOCK_M
    last = tl.cumsum(blocks, axis=0)  # blocks up to and including expert e
    expert = tl.sum((last <= pid_m).to(tl.int32), axis=0)
    mine = e == expert
    first_block = tl.sum(tl.where(mine, last - blocks, 0), axis=0)
    row_start = tl.sum(tl.where(mine, starts, 0), axis=0) + (pid_m - first_block) * BLOCK_M
    row_end = tl.sum(tl.where(mine, ends, 0), axis=0)
    return expert, row_start, row_end, pid_m < tl.sum(blocks, axis=0)


@triton.jit
def _moe_tile(pid, n_slots, n_experts, n_cols, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """(row block, column block) of program ``pid``; the grid holds the worst case's row blocks
    (every expert's last block partly filled). Grouped ordering: GROUP_M row blocks walk the column
    blocks together (their weight tiles are shared in L2)."""
    max_blocks = tl.cdiv(n_slots, BLOCK_M) + tl.minimum(n_experts, n_slots)
    n_pid_n = tl.cdiv(n_cols, BLOCK_N)
    in_group = GROUP_M * n_pid_n
    first_m = (pid // in_group) * GROUP_M
    size_m = tl.minimum(max_blocks - first_m, GROUP_M)
    return first_m + (pid % in_group) % size_m, (pid % in_group) // size_m


@triton.jit
def _moe_dot(a, b, acc, IEEE: tl.constexpr):
    """acc + a @ b; fp32 operands (IEEE) in IEEE fp32 as torch.matmul by default, not TF32."""
    if IEEE:
        acc = tl.dot(a, b, acc, input_precision="ieee")
    else:
        acc = tl.dot(a, b, acc)
    return acc


@triton.jit
def _moe_glu(g, u, ACTIVATION: tl.constexpr):
    if ACTIVATION == 0:
        h = g * tl.sigmoid(g) * u
    elif ACTIVATION == 1:
        h = (2.0 * tl.sigmoid(2.0 * g) - 1.0) * u
    elif ACTIVATION == 2:
        r = tl.maximum(g, 0.0)
        h = r * r * u
    else:
        h = g * tl.sigmoid(1.702 * g) * u
    return h


@triton.autotune(configs=_autotune_configs(_MOE_GATE_UP_CONFIGS), key=["n_cols", "n_k", "slot_bucket"],
                 prune_configs_by={"early_config_prune": _moe_prune})
@triton.heuristics({"EVEN_K": lambda args: args["n_k"] % args["BLOCK_K"] == 0})
@triton.jit(do_not_specialize=["slot_bucket"])
def _moe_gate_up_kernel(x_ptr, w_ptr, h_ptr, pre_ptr, order_ptr, offsets_ptr, n_slots, n_cols, n_k,
                        n_experts, stride_xm, stride_we, stride_wn, stride_hm, stride_pm, slot_bucket,
                        TOP_K: tl.constexpr, ACTIVATION: tl.constexpr, STORE_PRE: tl.constexpr,
                        E_BLOCK: tl.constexpr, IEEE: tl.constexpr, EVEN_K: tl.constexpr, BLOCK_M: tl.constexpr,
                        BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """h[r] = act(x[token(r)] @ Wg[e].T) * (x[token(r)] @ Wu[e].T) for the sorted rows r of expert e;
    the gate and up tiles of one column block in two accumulators (with STORE_PRE, the pre-activations
    [gate | up] are kept for the backward)."""
    pid_m, pid_n = _moe_tile(tl.program_id(0), n_slots, n_experts, n_cols, BLOCK_M, BLOCK_N, GROUP_M)
    expert, row_start, row_end, exists = _moe_block(offsets_ptr, n_experts, pid_m, BLOCK_M, E_BLOCK)
    if exists:
        rows = row_start + tl.arange(0, BLOCK_M)
        row_mask = rows < row_end
        slots = tl.load(order_ptr + rows, mask=row_mask, other=0)
        tokens = (slots // TOP_K).to(tl.int64)
        cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        col_mask = cols < n_cols
        ks = tl.arange(0, BLOCK_K)
        a_ptrs = x_ptr + tokens[:, None] * stride_xm + ks[None, :]
        g_ptrs = w_ptr + expert.to(tl.int64) * stride_we + (cols % n_cols)[None, :].to(tl.int64) * stride_wn + ks[:, None]
        u_ptrs = g_ptrs + n_cols * stride_wn
        acc_g = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        acc_u = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        for k0 in range(0, n_k, BLOCK_K):
            if EVEN_K:
                a = tl.load(a_ptrs, mask=row_mask[:, None], other=0.0)
                bg = tl.load(g_ptrs)
                bu = tl.load(u_ptrs)
            else:
                k_mask = ks < n_k - k0
                a = tl.load(a_ptrs, mask=row_mask[:, None] & k_mask[None, :], other=0.0)
                bg = tl.load(g_ptrs, mask=k_mask[:, None], other=0.0)
                bu = tl.load(u_ptrs, mask=k_mask[:, None], other=0.0)
            acc_g = _moe_dot(a, bg, acc_g, IEEE)
            acc_u = _moe_dot(a, bu, acc_u, IEEE)
            a_ptrs += BLOCK_K
            g_ptrs += BLOCK_K
            u_ptrs += BLOCK_K
        out_mask = row_mask[:, None] & col_mask[None, :]
        rows64 = rows.to(tl.int64)
        if STORE_PRE:
            p_ptrs = pre_ptr + rows64[:, None] * stride_pm + cols[None, :]
            tl.store(p_ptrs, acc_g.to(pre_ptr.dtype.element_ty), mask=out_mask)
            tl.store(p_ptrs + n_cols, acc_u.to(pre_ptr.dtype.element_ty), mask=out_mask)
        h = _moe_glu(acc_g, acc_u, ACTIVATION)
        tl.store(h_ptr + rows64[:, None] * stride_hm + cols[None, :], h.to(h_ptr.dtype.element_ty), mask=out_mask)


@triton.autotune(configs=_autotune_configs(_MOE_GROUPED_CONFIGS), key=["n_cols", "n_k", "slot_bucket", "A_BY_TOKEN"],
                 prune_configs_by={"early_config_prune": _moe_prune})
@triton.heuristics({"EVEN_K": lambda args: args["n_k"] % args["BLOCK_K"] == 0})
@triton.jit(do_not_specialize=["slot_bucket"])
def _moe_grouped_kernel(a_ptr, b_ptr, c_ptr, order_ptr, offsets_ptr, scale_ptr, n_slots, n_cols, n_k,
                        n_experts, stride_am, stride_be, stride_bk, stride_bn, stride_cm, slot_bucket,
                        TOP_K: tl.constexpr, A_BY_TOKEN: tl.constexpr, C_BY_SLOT: tl.constexpr,
                        HAS_SCALE: tl.constexpr, E_BLOCK: tl.constexpr, IEEE: tl.constexpr, EVEN_K: tl.constexpr,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                        GROUP_M: tl.constexpr):
    """c[row] = scale[slot] * (a[row] @ B[e]) for the sorted rows of expert e, B[e] (n_k, n_cols) by its
    strides. a's row is the sorted row, or the slot's token (A_BY_TOKEN); c's row is the sorted row, or
    the slot itself (C_BY_SLOT: the inverse permutation, on the way out)."""
    pid_m, pid_n = _moe_tile(tl.program_id(0), n_slots, n_experts, n_cols, BLOCK_M, BLOCK_N, GROUP_M)
    expert, row_start, row_end, exists = _moe_block(offsets_ptr, n_experts, pid_m, BLOCK_M, E_BLOCK)
    if exists:
        rows = row_start + tl.arange(0, BLOCK_M)
        row_mask = rows < row_end
        slots = tl.load(order_ptr + rows, mask=row_mask, other=0).to(tl.int64)
        a_rows = slots // TOP_K if A_BY_TOKEN else rows.to(tl.int64)
        cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        col_mask = cols < n_cols
        ks = tl.arange(0, BLOCK_K)
        a_ptrs = a_ptr + a_rows[:, None] * stride_am + ks[None, :]
        b_ptrs = (b_ptr + expert.to(tl.int64) * stride_be + (cols % n_cols)[None, :].to(tl.int64) * stride_bn
                  + ks[:, None].to(tl.int64) * stride_bk)
        acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        for k0 in range(0, n_k, BLOCK_K):
            if EVEN_K:
                a = tl.load(a_ptrs, mask=row_mask[:, None], other=0.0)
                b = tl.load(b_ptrs)
            else:
                k_mask = ks < n_k - k0
                a = tl.load(a_ptrs, mask=row_mask[:, None] & k_mask[None, :], other=0.0)
                b = tl.load(b_ptrs, mask=k_mask[:, None], other=0.0)
            acc = _moe_dot(a, b, acc, IEEE)
            a_ptrs += BLOCK_K
            b_ptrs += BLOCK_K * stride_bk
        if HAS_SCALE:
            acc = acc * tl.load(scale_ptr + slots, mask=row_mask, other=0.0)[:, None]
        c_rows = slots if C_BY_SLOT else rows.to(tl.int64)
        tl.store(c_ptr + c_rows[:, None] * stride_cm + cols[None, :], acc.to(c_ptr.dtype.element_ty),
                 mask=row_mask[:, None] & col_mask[None, :])


@triton.jit
def _moe_glu_bwd_kernel(dh_ptr, pre_ptr, n_rows, n_cols, stride_dm, stride_pm, ACTIVATION: tl.constexpr,
                        BLOCK: tl.constexpr):
    """pre = [gate | up] -> [d gate | d up] in place, from dh = d loss / d act(gate)*up."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    dh = tl.load(dh_ptr + row * stride_dm + cols, mask=mask, other=0.0).to(tl.float32)
    g_ptrs = pre_ptr + row * stride_pm + cols
    g = tl.load(g_ptrs, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(g_ptrs + n_cols, mask=mask, other=0.0).to(tl.float32)
    if ACTIVATION == 0:
        s = tl.sigmoid(g)
        act = g * s
        dact = s * (1.0 + g * (1.0 - s))
    elif ACTIVATION == 1:
        act = 2.0 * tl.sigmoid(2.0 * g) - 1.0
        dact = 1.0 - act * act
    elif ACTIVATION == 2:
        r = tl.maximum(g, 0.0)
        act = r * r
        dact = 2.0 * r
    else:
        s = tl.sigmoid(1.702 * g)
        act = g * s
        dact = s * (1.0 + 1.702 * g * (1.0 - s))
    tl.store(g_ptrs, (dh * u * dact).to(pre_ptr.dtype.element_ty), mask=mask)
    tl.store(g_ptrs + n_cols, (dh * act).to(pre_ptr.dtype.element_ty), mask=mask)


class _Launcher:
    """``kernel[grid](*args, **constexprs)``; after the first call for a key, the compiled kernel itself.

    The first call for a key goes through Triton (autotuning, compilation, heuristics) and records a
    plan: the compiled kernel, the grid it was launched on and the value of every constexpr parameter.
    Later calls with the same key launch that plan directly: no autotuner lookup, no argument binding,
    no grid function. The caller builds ``key`` from what it already knows of its arguments, and the key
    must hold everything Triton specialises on or the grid depends on: each tensor's dtype and 16-byte
    alignment (``data_ptr() & 15``), the device, and the value of every scalar argument. Under the
    interpreter (or with a config pre-hook) every call goes through Triton."""

    def __init__(self, kernel):
        self.kernel, self.heuristics, self.plans = kernel, [], {}
        self.direct = not _interpreting() and hasattr(triton, "knobs") and not any(
            c.pre_hook for c in getattr(kernel, "configs", []))
        jit = kernel
        while self.direct and not isinstance(jit, triton.runtime.jit.JITFunction):
            if hasattr(jit, "values"):  # a triton.heuristics layer
                self.heuristics.append(jit.values)
            jit = getattr(jit, "fn", None)
            self.direct = jit is not None
        self.params = jit.params if self.direct else []
        self.runtime = triton.knobs.runtime if self.direct else None
        self.raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        self.direct = self.direct and self.raw_stream is not None

    def __call__(self, key, grid, *args, **constexprs):
        plan = self.plans.get(key)
        if plan is None:
            return self._first(key, grid, args, constexprs)
        run, grid, function, packed, tail, compiled = plan
        enter, leave = self.runtime.launch_enter_hook, self.runtime.launch_exit_hook
        stream = self.raw_stream(torch._C._cuda_getDevice())
        if (enter is None or not getattr(enter, "calls", True)) and (leave is None or not getattr(leave, "calls", True)):
            run(grid[0], grid[1], grid[2], stream, function, packed, None, None, None, *args, *tail)
        else:  # a launch hook is installed (a profiler): give it what Triton's own launch would
            values = (*args, *tail)
            run(grid[0], grid[1], grid[2], stream, function, packed, compiled.launch_metadata(grid, stream, *values),
                enter, leave, *values)
        return compiled

    def _first(self, key, grid, args, constexprs):
        compiled = self.kernel[grid](*args, **constexprs)
        if not self.direct or compiled is None:
            return compiled
        config = getattr(self.kernel, "best_config", None)
        meta = {**constexprs, **(config.all_kwargs() if config is not None else {})}
        named = {p.name: a for p, a in zip(self.params, args)}
        for values in reversed(self.heuristics):
            meta.update({name: rule({**named, **meta}) for name, rule in values.items()})
        tail = tuple(meta[p.name] if p.name in meta else p.default for p in self.params[len(args):])
        grid = tuple(grid({**named, **meta}) if callable(grid) else grid)
        if len(self.plans) > 1024:
            self.plans.clear()
        self.plans[key] = (compiled.run, (*grid, 1, 1)[:3], compiled.function, compiled.packed_metadata, tail, compiled)
        return compiled


_moe_router_launch = _Launcher(_moe_router_kernel)
_moe_gate_up_launch = _Launcher(_moe_gate_up_kernel)
_moe_grouped_launch = _Launcher(_moe_grouped_kernel)
_moe_glu_bwd_launch = _Launcher(_moe_glu_bwd_kernel)
_MOE_ROUTER_TOKENS = 16
_MOE_GLU_BWD_BLOCK = 1024


def _moe_pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def _moe_grid(n_slots: int, n_experts: int, n_cols: int):
    """Enough row blocks for the worst case (every expert's last block partly filled), times the
    column blocks: known on the host without reading the counts back."""
    def grid(meta):
        blocks = -(-n_slots // meta["BLOCK_M"]) + min(n_experts, n_slots)
        return (blocks * -(-n_cols // meta["BLOCK_N"]),)
    return grid


def moe_route(router_logits: torch.Tensor, top_k: int, scoring: str = "softmax", renormalize: bool = True):
    """(weights (T, k) fp32, expert ids (T, k) int32) from router logits (T, E): one Triton pass."""
    if scoring not in MOE_SCORINGS:
        raise ValueError(f"moe: scoring must be one of {sorted(MOE_SCORINGS)}, got {scoring!r}")
    n_tokens, n_experts = router_logits.shape
    if not 1 <= top_k <= n_experts:
        raise ValueError(f"moe: top_k {top_k} must be between 1 and the {n_experts} experts")
    if router_logits.stride(1) != 1:
        router_logits = router_logits.contiguous()
    weights = torch.empty(n_tokens, top_k, dtype=torch.float32, device=router_logits.device)
    ids = torch.empty(n_tokens, top_k, dtype=torch.int32, device=router_logits.device)
    if n_tokens:
        key = (n_tokens, n_experts, router_logits.stride(0), router_logits.dtype, router_logits.get_device(),
               router_logits.data_ptr() & 15, top_k, scoring, renormalize)
        _moe_router_launch(key, (-(-n_tokens // _MOE_ROUTER_TOKENS),), router_logits, router_logits.stride(0), weights,
                           ids, n_tokens, n_experts, TOP_K=top_k, SCORING=MOE_SCORINGS[scoring],
                           RENORMALIZE=renormalize, BLOCK_T=_MOE_ROUTER_TOKENS, BLOCK_E=_moe_pow2(n_experts))
    return weights, ids


def moe_permutation(expert_ids: torch.Tensor, n_experts: int):
    """(order, offsets): ``order`` the flat (token * k + j) slots sorted by expert (stable: tokens keep
    their order within an expert, so gathers of x read rows in order), ``offsets`` (E + 1,) int32 with
    expert e's sorted rows at offsets[e]:offsets[e+1]. No host synchronisation."""
    flat = expert_ids.reshape(-1)
    sorted_ids, order = torch.sort(flat, stable=True)
    bounds = torch.arange(n_experts + 1, device=flat.device, dtype=sorted_ids.dtype)
    offsets = torch.searchsorted(sorted_ids, bounds, out_int32=True)
    return order.to(torch.int32), offsets


def _moe_gate_up(x, w_gate_up, order, offsets, top_k, activation, store_pre):
    n_slots, n_experts = order.numel(), w_gate_up.shape[0]
    inter, hidden = w_gate_up.shape[1] // 2, w_gate_up.shape[2]
    h = torch.empty(n_slots, inter, dtype=x.dtype, device=x.device)
    pre = torch.empty(n_slots, 2 * inter, dtype=x.dtype, device=x.device) if store_pre else h
    bucket = _moe_slot_bucket(n_slots)
    key = (n_slots, inter, hidden, n_experts, x.stride(0), w_gate_up.stride(0), w_gate_up.stride(1), x.dtype,
           w_gate_up.dtype, x.get_device(), x.data_ptr() & 15, w_gate_up.data_ptr() & 15, top_k, activation,
           store_pre, bucket)
    _moe_gate_up_launch(key, _moe_grid(n_slots, n_experts, inter), x, w_gate_up, h, pre, order, offsets, n_slots,
                        inter, hidden, n_experts, x.stride(0), w_gate_up.stride(0),
                        w_gate_up.stride(1), h.stride(0), pre.stride(0), bucket, TOP_K=top_k,
                        ACTIVATION=MOE_ACTIVATIONS[activation], STORE_PRE=store_pre, E_BLOCK=_moe_pow2(n_experts),
                        IEEE=x.dtype == torch.float32)
    return h, (pre if store_pre else None)


def _moe_grouped(a, b, strides, n_cols, n_k, order, offsets, top_k, out_rows, a_by_token, c_by_slot, scale=None):
    """c = grouped GEMM over the expert-sorted rows; b's expert/k/n strides given (its views differ between
    the forward and the backward)."""
    n_slots, n_experts = order.numel(), b.shape[0]
    c = torch.empty(out_rows, n_cols, dtype=a.dtype, device=a.device)
    bucket = _moe_slot_bucket(n_slots)
    key = (n_slots, n_cols, n_k, n_experts, a.stride(0), *strides, a.dtype, b.dtype, a.get_device(),
           a.data_ptr() & 15, b.data_ptr() & 15, top_k, a_by_token, c_by_slot, scale is not None, bucket)
    _moe_grouped_launch(key, _moe_grid(n_slots, n_experts, n_cols), a, b, c, order, offsets,
                        scale if scale is not None else c, n_slots, n_cols, n_k, n_experts, a.stride(0), *strides, c.stride(0), bucket, TOP_K=top_k, A_BY_TOKEN=a_by_token,
                        C_BY_SLOT=c_by_slot, HAS_SCALE=scale is not None, E_BLOCK=_moe_pow2(n_experts),
                        IEEE=a.dtype == torch.float32)
    return c


def _moe_check(x, topk_weights, topk_ids, w_gate_up, w_down, activation):
    if activation not in MOE_ACTIVATIONS:
        raise ValueError(f"moe: activation must be one of {sorted(MOE_ACTIVATIONS)}, got {activation!r}")
    if x.dim() != 2 or w_gate_up.dim() != 3 or w_down.dim() != 3:
        raise ValueError(f"moe: want x (T, H), w_gate_up (E, 2I, H), w_down (E, H, I); got {tuple(x.shape)}, "
                         f"{tuple(w_gate_up.shape)}, {tuple(w_down.shape)}")
    n_experts, two_inter, hidden = w_gate_up.shape
    if (two_inter % 2 or x.shape[1] != hidden or tuple(w_down.shape) != (n_experts, hidden, two_inter // 2)):
        raise ValueError(f"moe: shapes disagree: x {tuple(x.shape)}, w_gate_up {tuple(w_gate_up.shape)} (E, 2I, H), "
                         f"w_down {tuple(w_down.shape)} (E, H, I)")
    if topk_ids.shape != topk_weights.shape or topk_ids.dim() != 2 or topk_ids.shape[0] != x.shape[0]:
        raise ValueError(f"moe: topk_ids {tuple(topk_ids.shape)} and topk_weights {tuple(topk_weights.shape)} must "
                         f"both be (T, k) for {x.shape[0]} tokens")
    if x.dtype != w_gate_up.dtype or x.dtype != w_down.dtype:
        raise ValueError(f"moe: x, w_gate_up and w_down must share a dtype, got {x.dtype}, {w_gate_up.dtype}, "
                         f"{w_down.dtype}")


def _moe_contiguous(t):
    return t if t.stride(-1) == 1 else t.contiguous()


def moe_experts_forward(x, topk_weights, topk_ids, w_gate_up, w_down, activation="swiglu", keep=False):
    """sum_j topk_weights[t, j] * down_e(act(gate_e(x_t)) * up_e(x_t)), e = topk_ids[t, j].

    Returns the output (T, H); with ``keep`` also what the backward needs (the permutation, the
    pre-activations, h and the unweighted expert outputs)."""
    _moe_check(x, topk_weights, topk_ids, w_gate_up, w_down, activation)
    x, w_gate_up, w_down = _moe_contiguous(x), _moe_contiguous(w_gate_up), _moe_contiguous(w_down)
    n_tokens, hidden = x.shape
    n_experts, inter, top_k = w_gate_up.shape[0], w_gate_up.shape[1] // 2, topk_ids.shape[1]
    if n_tokens == 0:
        return (x.new_zeros(0, hidden), None) if keep else x.new_zeros(0, hidden)
    order, offsets = moe_permutation(topk_ids, n_experts)
    scale = topk_weights.reshape(-1).to(torch.float32).contiguous()
    h, pre = _moe_gate_up(x, w_gate_up, order, offsets, top_k, activation, keep)
    # the down projection: B[e] is w_down[e].T, (I, H): element (i, j) at w_down[e, j, i]
    y = _moe_grouped(h, w_down, (w_down.stride(0), w_down.stride(2), w_down.stride(1)), hidden, inter, order,
                     offsets, top_k, n_tokens * top_k, a_by_token=False, c_by_slot=True,
                     scale=None if keep else scale)
    if not keep:
        return y.view(n_tokens, top_k, hidden).sum(1) if top_k > 1 else y
    out = torch.bmm(scale.view(n_tokens, 1, top_k).to(y.dtype), y.view(n_tokens, top_k, hidden)).view(n_tokens, hidden)
    return out, (order, offsets, pre, h, y)


def moe_experts_backward(dout, x, topk_weights, w_gate_up, w_down, activation, saved, need):
    """(dx, dtopk_weights, dw_gate_up, dw_down) from the forward's ``saved``; ``need`` says which."""
    order, offsets, pre, h, y = saved
    n_tokens, hidden = x.shape
    n_experts, inter, top_k = w_gate_up.shape[0], w_gate_up.shape[1] // 2, topk_weights.shape[1]
    dout = _moe_contiguous(dout)
    scale = topk_weights.reshape(-1).to(torch.float32).contiguous()
    dweights = None
    if need[1]:
        dweights = torch.bmm(y.view(n_tokens, top_k, hidden), dout.view(n_tokens, hidden, 1)).view(n_tokens, top_k)
        dweights = dweights.to(topk_weights.dtype)
    # dh = w * (dout[token] @ W_down[e]): B[e] = w_down[e] (H, I)
    dh = _moe_grouped(dout, w_down, (w_down.stride(0), w_down.stride(1), w_down.stride(2)), inter, hidden, order,
                      offsets, top_k, n_tokens * top_k, a_by_token=True, c_by_slot=False, scale=scale)
    n_rows = order.numel()
    key = (n_rows, inter, dh.dtype, pre.dtype, dh.get_device(), MOE_ACTIVATIONS[activation])
    _moe_glu_bwd_launch(key, (n_rows, -(-inter // _MOE_GLU_BWD_BLOCK)), dh, pre, n_rows, inter, dh.stride(0),
                        pre.stride(0), ACTIVATION=MOE_ACTIVATIONS[activation], BLOCK=_MOE_GLU_BWD_BLOCK)
    dgu = pre  # now [d gate | d up], expert-sorted rows
    dx = None
    if need[0]:
        # dx = sum_j dgu[slot] @ W_gate_up[e]: B[e] = w_gate_up[e] (2I, H)
        dx_slots = _moe_grouped(dgu, w_gate_up, (w_gate_up.stride(0), w_gate_up.stride(1), w_gate_up.stride(2)),
                                hidden, 2 * inter, order, offsets, top_k, n_tokens * top_k, a_by_token=False,
                                c_by_slot=True)
        dx = dx_slots.view(n_tokens, top_k, hidden).sum(1) if top_k > 1 else dx_slots
    dw_gate_up = dw_down = None
    if need[2] or need[3]:
        tokens = (order // top_k).long()
        bounds = offsets.tolist()  # the weight gradients: one cuBLAS matmul per expert on its contiguous rows
        if need[2]:
            dw_gate_up = torch.zeros_like(w_gate_up)
            xs = x.index_select(0, tokens)
        if need[3]:
            dw_down = torch.zeros_like(w_down)
            dys = dout.index_select(0, tokens) * scale.index_select(0, order.long()).to(dout.dtype)[:, None]
        for e in range(n_experts):
            lo, hi = bounds[e], bounds[e + 1]
            if hi == lo:
                continue
            if need[2]:
                torch.mm(dgu[lo:hi].t(), xs[lo:hi], out=dw_gate_up[e])
            if need[3]:
                torch.mm(dys[lo:hi].t(), h[lo:hi], out=dw_down[e])
    return dx, dweights, dw_gate_up, dw_down


class MoEExpertsFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, topk_weights, topk_ids, w_gate_up, w_down, activation):
        out, saved = moe_experts_forward(x, topk_weights, topk_ids, w_gate_up, w_down, activation, keep=True)
        ctx.activation, ctx.saved = activation, saved
        ctx.save_for_backward(x, topk_weights, w_gate_up, w_down)
        return out

    @staticmethod
    def backward(ctx, dout):
        x, topk_weights, w_gate_up, w_down = ctx.saved_tensors
        need = (ctx.needs_input_grad[0], ctx.needs_input_grad[1], ctx.needs_input_grad[3], ctx.needs_input_grad[4])
        if ctx.saved is None:  # no tokens
            return (torch.zeros_like(x), torch.zeros_like(topk_weights), None, torch.zeros_like(w_gate_up),
                    torch.zeros_like(w_down), None)
        dx, dweights, dw_gate_up, dw_down = moe_experts_backward(dout, x, topk_weights, w_gate_up, w_down,
                                                                 ctx.activation, ctx.saved, need)
        ctx.saved = None
        return dx, dweights, None, dw_gate_up, dw_down, None


def moe_experts(x, topk_weights, topk_ids, w_gate_up, w_down, activation="swiglu"):
    """The experts' part of the layer for routing already chosen: x (T, H), topk_weights (T, k),
    topk_ids (T, k) int, w_gate_up (E, 2I, H), w_down (E, H, I) -> (T, H)."""
    wants_grad = torch.is_grad_enabled() and any(t.requires_grad for t in (x, topk_weights, w_gate_up, w_down))
    if torch.compiler.is_compiling():  # one custom op: no graph break
        return _moe_experts_fwd_op(x, topk_weights, topk_ids, w_gate_up, w_down, activation, wants_grad)[0]
    if not wants_grad:
        return moe_experts_forward(x, topk_weights, topk_ids, w_gate_up, w_down, activation)
    return MoEExpertsFunction.apply(x, topk_weights, topk_ids, w_gate_up, w_down, activation)


def _custom_op(fn, fake, grad=None, setup=None):
    """``fn`` as a torch custom op, so ``torch.compile`` keeps the call whole (no graph break) and never
    traces its body; ``fake`` gives its outputs' shapes, ``grad``/``setup`` its autograd formula. The
    op is named after this module and the function, so copies of a template in several files do not
    collide."""
    namespace = "tritonify_" + "".join(c if c.isalnum() else "_" for c in __name__)
    op = torch.library.custom_op(f"{namespace}::{fn.__name__}", fn, mutates_args=())
    op.register_fake(fake)
    if grad is not None:
        op.register_autograd(grad, setup_context=setup)
    return op


def _moe_saved_shapes(x, topk_ids, w_gate_up):
    n_slots, inter = topk_ids.numel(), w_gate_up.shape[1] // 2
    return ((n_slots,), torch.int32), ((w_gate_up.shape[0] + 1,), torch.int32), ((n_slots, 2 * inter), x.dtype), \
        ((n_slots, inter), x.dtype), ((n_slots, x.shape[1]), x.dtype)


def _moe_experts_fwd(x: torch.Tensor, topk_weights: torch.Tensor, topk_ids: torch.Tensor, w_gate_up: torch.Tensor,
                     w_down: torch.Tensor, activation: str, keep: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor,
                                                                                  torch.Tensor, torch.Tensor, torch.Tensor]:
    """(out, and with ``keep`` the backward's tensors: order, offsets, pre-activations, h, expert outputs)."""
    if not keep or x.shape[0] == 0:
        out = moe_experts_forward(x, topk_weights, topk_ids, w_gate_up, w_down, activation)
        return (out, *[x.new_empty(0, dtype=dtype) for _, dtype in _moe_saved_shapes(x, topk_ids, w_gate_up)])
    out, saved = moe_experts_forward(x, topk_weights, topk_ids, w_gate_up, w_down, activation, keep=True)
    return (out, *saved)


def _moe_experts_fwd_fake(x, topk_weights, topk_ids, w_gate_up, w_down, activation, keep):
    shapes = _moe_saved_shapes(x, topk_ids, w_gate_up)
    return (x.new_empty(x.shape), *[x.new_empty(shape if keep else 0, dtype=dtype) for shape, dtype in shapes])


def _moe_experts_bwd(dout: torch.Tensor, x: torch.Tensor, topk_weights: torch.Tensor, w_gate_up: torch.Tensor,
                     w_down: torch.Tensor, order: torch.Tensor, offsets: torch.Tensor, pre: torch.Tensor,
                     h: torch.Tensor, y: torch.Tensor, activation: str) -> tuple[torch.Tensor, torch.Tensor,
                                                                                 torch.Tensor, torch.Tensor]:
    if x.shape[0] == 0:
        return torch.zeros_like(x), torch.zeros_like(topk_weights), torch.zeros_like(w_gate_up), torch.zeros_like(w_down)
    # a compiled graph may read ``pre`` again: the GLU's backward overwrites a copy
    return moe_experts_backward(dout, x, topk_weights, w_gate_up, w_down, activation,
                                (order, offsets, pre.clone(), h, y), (True, True, True, True))


def _moe_experts_bwd_fake(dout, x, topk_weights, w_gate_up, w_down, order, offsets, pre, h, y, activation):
    return torch.empty_like(x), torch.empty_like(topk_weights), torch.empty_like(w_gate_up), torch.empty_like(w_down)


_moe_experts_bwd_op = _custom_op(_moe_experts_bwd, _moe_experts_bwd_fake)


def _moe_experts_grad(ctx, dout, *unused):
    x, topk_weights, w_gate_up, w_down, *saved = ctx.saved_tensors
    dx, dweights, dw_gate_up, dw_down = _moe_experts_bwd_op(dout, x, topk_weights, w_gate_up, w_down, *saved,
                                                            ctx.activation)
    return dx, dweights, None, dw_gate_up, dw_down, None, None


def _moe_experts_setup(ctx, inputs, output):
    x, topk_weights, _, w_gate_up, w_down, activation, _ = inputs
    ctx.activation = activation
    ctx.save_for_backward(x, topk_weights, w_gate_up, w_down, *output[1:])


def _moe_route_impl(router_logits: torch.Tensor, top_k: int, scoring: str,
                    renormalize: bool) -> tuple[torch.Tensor, torch.Tensor]:
    return moe_route(router_logits, top_k, scoring, renormalize)


def _moe_route_fake(router_logits, top_k, scoring, renormalize):
    n_tokens = router_logits.shape[0]
    return (router_logits.new_empty(n_tokens, top_k, dtype=torch.float32),
            router_logits.new_empty(n_tokens, top_k, dtype=torch.int32))


_moe_route_op = _custom_op(_moe_route_impl, _moe_route_fake)

_moe_experts_fwd_op = _custom_op(_moe_experts_fwd, _moe_experts_fwd_fake, grad=_moe_experts_grad,
                                 setup=_moe_experts_setup)


def _moe_route_weights(router_logits, topk_ids, scoring, renormalize):
    """The chosen experts' weights through PyTorch ops, so their gradient reaches the router logits."""
    logits = router_logits.float()
    scores = torch.softmax(logits, -1) if scoring == "softmax" else torch.sigmoid(logits)
    weights = scores.gather(1, topk_ids.long())
    return weights / weights.sum(-1, keepdim=True) if renormalize else weights


def moe(x, router_weight, w_gate_up, w_down, top_k=MOE_TOP_K, scoring="softmax", renormalize=True,
        activation="swiglu"):
    """A mixture-of-experts MLP layer: x (..., H), router_weight (E, H), w_gate_up (E, 2I, H) (gate rows
    first, as ``gate_up_proj``), w_down (E, H, I) -> (..., H)."""
    lead, hidden = x.shape[:-1], x.shape[-1]
    x2 = x.reshape(-1, hidden)
    router_logits = x2 @ router_weight.t()
    if torch.compiler.is_compiling():  # the router as one custom op: no graph break
        weights, ids = _moe_route_op(router_logits.detach(), top_k, scoring, renormalize)
    else:
        weights, ids = moe_route(router_logits.detach(), top_k, scoring, renormalize)
    if torch.is_grad_enabled() and router_logits.requires_grad:
        weights = _moe_route_weights(router_logits, ids, scoring, renormalize)
    return moe_experts(x2, weights, ids, w_gate_up, w_down, activation).reshape(*lead, hidden)


def _moe_act_reference(g, activation):
    if activation == "swiglu":
        return torch.nn.functional.silu(g)
    if activation == "tanh_glu":
        return torch.tanh(g)
    if activation == "relu2_glu":
        return torch.relu(g) ** 2
    return g * torch.sigmoid(1.702 * g)


def moe_route_reference(router_logits, top_k, scoring="softmax", renormalize=True):
    scores = torch.softmax(router_logits, -1) if scoring == "softmax" else torch.sigmoid(router_logits)
    weights, ids = torch.topk(scores, top_k, dim=-1)
    return (weights / weights.sum(-1, keepdim=True) if renormalize else weights), ids


def moe_experts_reference(x, topk_weights, topk_ids, w_gate_up, w_down, activation="swiglu"):
    """PyTorch eager, a loop over experts with one matmul each, in the inputs' dtype."""
    out = torch.zeros_like(x)
    inter = w_gate_up.shape[1] // 2
    for e in range(w_gate_up.shape[0]):
        token, j = torch.where(topk_ids == e)
        if token.numel() == 0:
            continue
        gu = x[token] @ w_gate_up[e].t()
        y = (_moe_act_reference(gu[:, :inter], activation) * gu[:, inter:]) @ w_down[e].t()
        out = out.index_add(0, token, y * topk_weights[token, j, None].to(y.dtype))
    return out


def moe_reference(x, router_weight, w_gate_up, w_down, top_k=MOE_TOP_K, scoring="softmax", renormalize=True,
                  activation="swiglu"):
    lead, hidden = x.shape[:-1], x.shape[-1]
    x2 = x.reshape(-1, hidden)
    weights, ids = moe_route_reference((x2 @ router_weight.t()).float() if x.dtype != torch.float64 else
                                       x2 @ router_weight.t(), top_k, scoring, renormalize)
    return moe_experts_reference(x2, weights, ids, w_gate_up, w_down, activation).reshape(*lead, hidden)


def moe_inputs(shape, dtype, device):
    """(x, topk_weights, topk_ids, w_gate_up, w_down) for shape (tokens, hidden, intermediate, experts,
    top_k): weights scaled as an initialised layer's (std 1/sqrt(fan_in)), routing from random logits."""
    n_tokens, hidden, inter, n_experts, top_k = shape
    x = torch.randn(n_tokens, hidden, device=device).to(dtype)
    w_gate_up = (torch.randn(n_experts, 2 * inter, hidden, device=device) * hidden ** -0.5).to(dtype)
    w_down = (torch.randn(n_experts, hidden, inter, device=device) * inter ** -0.5).to(dtype)
    weights, ids = moe_route_reference(torch.randn(n_tokens, n_experts, device=device), top_k)
    return x, weights, ids.to(torch.int32), w_gate_up, w_down


def _moe_contract():
    """The benchmark contract (``tritonify bench THIS_FILE::moe``); None without tritonify."""
    try:
        from tritonify.kernels.bench import Contract
    except ImportError:
        return None
    return Contract(kernel="_moe_gate_up_kernel", name="moe", entry=moe_experts, inputs=moe_inputs,
                    reference=moe_experts_reference,
                    shapes=[(n, MOE_HIDDEN, MOE_INTERMEDIATE, MOE_EXPERTS, MOE_TOP_K) for n in (16, 4096)],
                    dtype=MOE_DTYPE, liger=None,
                    flops=lambda shape: 6 * shape[0] * shape[4] * shape[1] * shape[2])


MOE_CONTRACT = _moe_contract()
