"""Fused RMSNorm, forward and backward: ``y = x / sqrt(mean(x**2) + eps) * weight``.

Forward: each step normalises ROWS rows held in registers (one read of x, one write of y) and
keeps 1/rms per row for the backward; the autotuner also tries a persistent grid (PPS programs per
SM looping over the rows). On the H200 every config lands within 0.3% of the others at 16384x4096:
the kernel is at the DRAM roof (Tritonify's H200 template measurements). Backward: each program walks a strided set of rows, writes
dx and accumulates its share of dweight in fp32; the shares are summed by one small reduction.
Statistics are computed in fp32 whatever the input dtype (Llama casting).
"""
import os

import torch
import triton
import triton.language as tl

RMS_NORM_HIDDEN = 4096
RMS_NORM_DTYPE = "bfloat16"
RMS_NORM_MAX_HIDDEN = 65536  # one row must fit in one program's registers


def _interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def _autotune_configs(configs):
    """Every config on a GPU; the first alone on the CPU interpreter, which cannot time a choice."""
    return configs[:1] if _interpreting() or not torch.cuda.is_available() else configs


def _prune_rows(configs, named_args, **kwargs):
    """Drop multi-row configs whose tile would not fit in registers for this row width."""
    block_n = kwargs.get("BLOCK_N", named_args.get("BLOCK_N", 1))
    kept = [c for c in configs if c.kwargs["ROWS"] == 1 or c.kwargs["ROWS"] * block_n <= 16384]
    return kept or configs[:1]


_FWD_CONFIGS = [
    # ROWS rows per step; PPS > 0 makes the grid persistent (PPS programs per SM, each looping over
    # row blocks with the next block's loads issued during this one's arithmetic, STAGES deep)
    triton.Config({"ROWS": 1, "PPS": 0, "STAGES": 1}, num_warps=8),
    triton.Config({"ROWS": 1, "PPS": 0, "STAGES": 1}, num_warps=4),
    triton.Config({"ROWS": 1, "PPS": 0, "STAGES": 1}, num_warps=16),
    triton.Config({"ROWS": 1, "PPS": 0, "STAGES": 1}, num_warps=32),
    triton.Config({"ROWS": 2, "PPS": 0, "STAGES": 1}, num_warps=8),
    triton.Config({"ROWS": 4, "PPS": 0, "STAGES": 1}, num_warps=8),
    triton.Config({"ROWS": 1, "PPS": 4, "STAGES": 2}, num_warps=8),
    triton.Config({"ROWS": 1, "PPS": 8, "STAGES": 2}, num_warps=4),
    triton.Config({"ROWS": 1, "PPS": 2, "STAGES": 3}, num_warps=8),
    triton.Config({"ROWS": 2, "PPS": 4, "STAGES": 2}, num_warps=8),
    # PREFETCH = 1 (one row per step, persistent): the next row's x loaded, in its own dtype, before this
    # row's sum. At 4096x14336 bf16 on the H200 one 32-warp program per SM took 60.1 us against 62.0 for
    # the previous pick, Liger 61.9 and torch.compile 61.6 (gpu/templates/sweep_wide.py, 2026-12-01)
    triton.Config({"ROWS": 1, "PPS": 1, "STAGES": 1, "PREFETCH": 1}, num_warps=32),
    triton.Config({"ROWS": 1, "PPS": 1, "STAGES": 1, "PREFETCH": 1}, num_warps=16),
    triton.Config({"ROWS": 1, "PPS": 2, "STAGES": 1, "PREFETCH": 1}, num_warps=16),
]


@triton.jit
def _rms_norm_rows_prefetch(x_ptr, w_ptr, y_ptr, rstd_ptr, n_rows, n_cols, x_row_stride, y_row_stride, eps,
                            BLOCK_N: tl.constexpr, STORE_RSTD: tl.constexpr):
    """A persistent grid, one row per step: row r + programs is loaded before row r's sum and carried to the
    next step (x and w held in their own dtype, widened where used)."""
    pid, step = tl.program_id(0), tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    col_mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=col_mask, other=0.0)
    x = tl.load(x_ptr + tl.cast(pid, tl.int64) * x_row_stride + cols, mask=cols < tl.where(pid < n_rows, n_cols, 0),
                other=0.0)
    for row in tl.range(pid, n_rows, step, num_stages=1):
        nxt = row + step
        # nothing is read past the last row
        x_next = tl.load(x_ptr + tl.cast(nxt, tl.int64) * x_row_stride + cols,
                         mask=cols < tl.where(nxt < n_rows, n_cols, 0), other=0.0)
        xf = x.to(tl.float32)
        rstd = tl.rsqrt(tl.sum(xf * xf, axis=0) / n_cols + tl.cast(eps, tl.float32))
        tl.store(y_ptr + tl.cast(row, tl.int64) * y_row_stride + cols,
                 (xf * rstd * w.to(tl.float32)).to(y_ptr.dtype.element_ty), mask=col_mask)
        if STORE_RSTD:
            tl.store(rstd_ptr + row, rstd)
        x = x_next


@triton.jit
def _rms_norm_rows(x_ptr, w_ptr, y_ptr, rstd_ptr, n_rows, n_cols, x_row_stride, y_row_stride, eps,
                   BLOCK_N: tl.constexpr, STORE_RSTD: tl.constexpr, ROWS: tl.constexpr, STAGES: tl.constexpr):
    """ROWS rows per step, a program per block of rows or a persistent grid striding over them."""
    cols = tl.arange(0, BLOCK_N)
    col_mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=col_mask, other=0.0).to(tl.float32)
    # one step per block of ROWS rows; with a persistent grid (PPS > 0) each program takes several
    for first in tl.range(tl.program_id(0) * ROWS, n_rows, tl.num_programs(0) * ROWS, num_stages=STAGES):
        if ROWS == 1:  # one row: 1-D tensors, the simplest layout for the compiler
            row64 = tl.cast(first, tl.int64)
            x = tl.load(x_ptr + row64 * x_row_stride + cols, mask=col_mask, other=0.0).to(tl.float32)
            rstd = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + tl.cast(eps, tl.float32))
            tl.store(y_ptr + row64 * y_row_stride + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=col_mask)
            if STORE_RSTD:  # kept for the backward; a forward without gradient skips it
                tl.store(rstd_ptr + first, rstd)
        else:
            rows = first + tl.arange(0, ROWS)
            row_mask = rows < n_rows
            mask = row_mask[:, None] & col_mask[None, :]
            rows64 = rows.to(tl.int64)[:, None]
            x = tl.load(x_ptr + rows64 * x_row_stride + cols[None, :], mask=mask, other=0.0).to(tl.float32)
            rstd = tl.rsqrt(tl.sum(x * x, axis=1) / n_cols + tl.cast(eps, tl.float32))
            y = x * rstd[:, None] * w[None, :]
            tl.store(y_ptr + rows64 * y_row_stride + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)
            if STORE_RSTD:
                tl.store(rstd_ptr + rows, rstd, mask=row_mask)


@triton.autotune(
    configs=_autotune_configs(_FWD_CONFIGS),
    key=["n_cols", "BLOCK_N", "row_bucket"],
    prune_configs_by={"early_config_prune": _prune_rows},
)
@triton.jit(do_not_specialize=["row_bucket"])
def _rms_norm_fwd_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, n_rows, n_cols, x_row_stride, y_row_stride, eps, row_bucket,  # noqa: TRI003 (a template: the fused kernel chosen instead of Liger's op)
                         BLOCK_N: tl.constexpr, STORE_RSTD: tl.constexpr, ROWS: tl.constexpr, PPS: tl.constexpr,
                         STAGES: tl.constexpr, PREFETCH: tl.constexpr = 0):
    tl.static_assert(PREFETCH == 0 or ROWS == 1, "the prefetching loop takes one row per step")
    if PREFETCH:
        _rms_norm_rows_prefetch(x_ptr, w_ptr, y_ptr, rstd_ptr, n_rows, n_cols, x_row_stride, y_row_stride, eps,
                                BLOCK_N, STORE_RSTD)
    else:
        _rms_norm_rows(x_ptr, w_ptr, y_ptr, rstd_ptr, n_rows, n_cols, x_row_stride, y_row_stride, eps, BLOCK_N,
                       STORE_RSTD, ROWS, STAGES)


# the backward's configs: PPS programs per SM walk a strided set of rows (PPS = 2: the configs timed before
# 2026-12-01 14:00Z, first); STAGES > 1 issues the next row's loads during this one's arithmetic; RELOAD = 1
# reads the row's x and dy again after its sum (from L1/L2) instead of holding them in fp32 registers
# across it, so a wide row (14336 -> a 16384 block) spills less at the same number of warps
_BWD_CONFIGS = [
    triton.Config({"PPS": 2, "STAGES": 1, "RELOAD": 0}, num_warps=8),
    triton.Config({"PPS": 2, "STAGES": 1, "RELOAD": 0}, num_warps=16),
    triton.Config({"PPS": 2, "STAGES": 1, "RELOAD": 0}, num_warps=32),
    triton.Config({"PPS": 2, "STAGES": 1, "RELOAD": 0}, num_warps=4),
    triton.Config({"PPS": 1, "STAGES": 1, "RELOAD": 0}, num_warps=16),
    triton.Config({"PPS": 1, "STAGES": 2, "RELOAD": 0}, num_warps=16),
    triton.Config({"PPS": 2, "STAGES": 1, "RELOAD": 1}, num_warps=16),
    triton.Config({"PPS": 2, "STAGES": 2, "RELOAD": 1}, num_warps=16),
    triton.Config({"PPS": 1, "STAGES": 2, "RELOAD": 1}, num_warps=32),
    triton.Config({"PPS": 4, "STAGES": 1, "RELOAD": 1}, num_warps=8),
]
RMS_NORM_BWD_MAX_PPS = max(c.kwargs["PPS"] for c in _BWD_CONFIGS)


@triton.autotune(configs=_autotune_configs(_BWD_CONFIGS), key=["n_cols", "BLOCK_N", "row_bucket"])
@triton.jit(do_not_specialize=["row_bucket"])
def _rms_norm_bwd_kernel(dy_ptr, x_ptr, w_ptr, rstd_ptr, dx_ptr, dw_partial_ptr, n_rows, n_cols,
                         dy_row_stride, x_row_stride, dx_row_stride, row_bucket, BLOCK_N: tl.constexpr,
                         PPS: tl.constexpr, STAGES: tl.constexpr, RELOAD: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    col_mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=col_mask, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK_N], dtype=tl.float32)
    for row in tl.range(pid, n_rows, tl.num_programs(0), num_stages=STAGES):
        row64 = tl.cast(row, tl.int64)
        x_ptrs = x_ptr + row64 * x_row_stride + cols
        dy_ptrs = dy_ptr + row64 * dy_row_stride + cols
        x = tl.load(x_ptrs, mask=col_mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptrs, mask=col_mask, other=0.0).to(tl.float32)
        rstd = tl.load(rstd_ptr + row)
        x_hat = x * rstd
        wdy = w * dy
        dw += dy * x_hat
        # d/dx of x*rstd: rstd * (g - x_hat * mean(g * x_hat)) with g = w*dy
        mean_gx = tl.sum(wdy * x_hat, axis=0) / n_cols
        if RELOAD:  # a second read of the row (another cache modifier: not merged with the first)
            x_hat = tl.load(x_ptrs, mask=col_mask, other=0.0, cache_modifier=".ca").to(tl.float32) * rstd
            wdy = w * tl.load(dy_ptrs, mask=col_mask, other=0.0, cache_modifier=".ca").to(tl.float32)
        dx = rstd * (wdy - x_hat * mean_gx)
        tl.store(dx_ptr + row64 * dx_row_stride + cols, dx.to(dx_ptr.dtype.element_ty), mask=col_mask)
    tl.store(dw_partial_ptr + pid * n_cols + cols, dw, mask=col_mask)


@triton.jit
def _rms_norm_dw_sum_kernel(partial_ptr, dw_ptr, n_partial, n_cols, BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr):
    """dweight = the column sums of the programs' shares, in a fixed order, cast to the weight's dtype:
    one launch where ``partial.sum(0).to(dtype)`` takes two."""
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    col_mask = cols < n_cols
    acc = tl.zeros([BLOCK_P, BLOCK_C], dtype=tl.float32)
    for first in range(0, n_partial, BLOCK_P):
        rows = first + tl.arange(0, BLOCK_P)
        mask = (rows < n_partial)[:, None] & col_mask[None, :]
        acc += tl.load(partial_ptr + rows.to(tl.int64)[:, None] * n_cols + cols[None, :], mask=mask, other=0.0)
    tl.store(dw_ptr + cols, tl.sum(acc, axis=0).to(dw_ptr.dtype.element_ty), mask=col_mask)


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


_rms_norm_fwd_launch = _Launcher(_rms_norm_fwd_kernel)
_rms_norm_bwd_launch = _Launcher(_rms_norm_bwd_kernel)
_rms_norm_dw_sum_launch = _Launcher(_rms_norm_dw_sum_kernel)
_bwd_grids = {}  # backward launch key -> programs of the config chosen for it (rows of dweight's shares)


_sms = {}


def _sm_count(device_index: int) -> int:
    if device_index not in _sms:
        _sms[device_index] = torch.cuda.get_device_properties(device_index).multi_processor_count
    return _sms[device_index]


def row_grid(x: torch.Tensor, n_rows: int, rows_per_step: int, programs_per_sm: int) -> int:
    """Programs for a row kernel: one per block of rows, or at most programs_per_sm per SM (persistent)."""
    blocks = -(-n_rows // rows_per_step)
    if programs_per_sm and x.is_cuda:
        return max(1, min(blocks, programs_per_sm * _sm_count(x.device.index or 0)))
    return blocks


def _rms_norm_row_bucket(n_rows: int) -> int:
    """The autotuner's view of the row count: decode (a few rows), mid, training. Tuned once per
    bucket, so a config chosen for 4 rows is never reused for 16384 (nor tuned again per row count)."""
    return 0 if n_rows <= 64 else 1 if n_rows <= 2048 else 2


def _rms_norm_block_n(n_cols: int) -> int:
    limit = RMS_NORM_MAX_HIDDEN
    if n_cols > limit:
        raise ValueError(f"rms_norm: hidden size {n_cols} exceeds {limit} (one row per program)")
    return 1 << (n_cols - 1).bit_length()


def _bwd_programs(x: torch.Tensor, n_rows: int, programs_per_sm: int) -> int:
    if x.is_cuda:
        return max(1, min(n_rows, programs_per_sm * _sm_count(x.device.index or 0)))
    return max(1, min(n_rows, 2 * programs_per_sm))


def _rows(t: torch.Tensor) -> torch.Tensor:
    t2d = t if t.dim() == 2 else t.reshape(-1, t.shape[-1])
    return t2d if t2d.stride(-1) == 1 else t2d.contiguous()


def rms_norm_forward(x: torch.Tensor, weight: torch.Tensor, eps: float, keep_rstd: bool = True):
    """(y, x2d, rstd): y has x's shape and dtype; x2d and rstd (None unless ``keep_rstd``) are kept for
    the backward."""
    x2d = _rows(x)
    n_rows, n_cols = x2d.shape
    y = torch.empty_like(x2d)
    rstd = torch.empty(n_rows, dtype=torch.float32, device=x.device) if keep_rstd else None
    if n_rows:
        stride = x2d.stride(0)
        key = (n_rows, n_cols, stride, x.dtype, weight.dtype, x.get_device(), x2d.data_ptr() & 15,
               weight.data_ptr() & 15, eps, keep_rstd)
        grid = lambda meta: (row_grid(x2d, n_rows, meta["ROWS"], meta["PPS"]),)
        _rms_norm_fwd_launch(key, grid, x2d, weight, y, rstd if keep_rstd else y, n_rows, n_cols, stride, n_cols,
                             float(eps), _rms_norm_row_bucket(n_rows), BLOCK_N=_rms_norm_block_n(n_cols),
                             STORE_RSTD=keep_rstd)
    return (y if x.dim() == 2 else y.reshape(x.shape)), x2d, rstd


def rms_norm_backward(dy: torch.Tensor, x2d: torch.Tensor, weight: torch.Tensor, rstd: torch.Tensor):
    """(dx in x2d's shape, dweight)."""
    dy2d = _rows(dy)
    n_rows, n_cols = x2d.shape
    dx = torch.empty_like(x2d)
    if not n_rows:
        return dx, torch.zeros_like(weight)
    key = (n_rows, n_cols, dy2d.stride(0), x2d.stride(0), dy.dtype, x2d.dtype, weight.dtype, x2d.get_device(),
           dy2d.data_ptr() & 15, x2d.data_ptr() & 15, weight.data_ptr() & 15)
    # one row of dweight's shares per program: as many as the chosen config launches once it is known,
    # the most any config could launch before the first call
    shares = _bwd_grids.get(key) or _bwd_programs(x2d, n_rows, RMS_NORM_BWD_MAX_PPS)
    dw_partial = torch.empty(shares, n_cols, dtype=torch.float32, device=x2d.device)

    def grid(meta):
        if len(_bwd_grids) > 1024:
            _bwd_grids.clear()
        _bwd_grids[key] = _bwd_programs(x2d, n_rows, meta["PPS"])
        return (_bwd_grids[key],)

    block_n = _rms_norm_block_n(n_cols)
    _rms_norm_bwd_launch(key, grid, dy2d, x2d, weight, rstd, dx, dw_partial, n_rows, n_cols,
                         dy2d.stride(0), x2d.stride(0), n_cols, _rms_norm_row_bucket(n_rows), BLOCK_N=block_n)
    used = _bwd_grids[key]
    dw = torch.empty_like(weight)
    block_c = 64
    _rms_norm_dw_sum_launch((used, n_cols, weight.dtype, x2d.get_device(), weight.data_ptr() & 15),
                            (-(-n_cols // block_c),), dw_partial, dw, used, n_cols, BLOCK_P=32, BLOCK_C=block_c,
                            num_warps=4)
    return dx, dw


class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        y, x2d, rstd = rms_norm_forward(x, weight, eps)
        ctx.save_for_backward(x2d, weight, rstd)
        return y

    @staticmethod
    def backward(ctx, dy):
        x2d, weight, rstd = ctx.saved_tensors
        dx, dw = rms_norm_backward(dy, x2d, weight, rstd)
        return dx.reshape(dy.shape), dw, None


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """RMSNorm over the last dimension of ``x`` (any leading shape), differentiable in x and weight."""
    if torch.compiler.is_compiling():  # one custom op: no graph break
        return _rms_norm_fwd_op(x, weight, eps)[0]
    if not (torch.is_grad_enabled() and (x.requires_grad or weight.requires_grad)):
        # no gradient wanted: no autograd node (its ~13 us of host time) and no 1/rms kept for a backward
        return rms_norm_forward(x, weight, eps, keep_rstd=False)[0]
    return RMSNormFunction.apply(x, weight, eps)


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


def _rms_norm_fwd(x: torch.Tensor, weight: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    y, _, rstd = rms_norm_forward(x, weight, eps)
    return y, rstd


def _rms_norm_bwd(dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor,
                  rstd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    dx, dw = rms_norm_backward(dy, x.reshape(-1, x.shape[-1]).contiguous(), weight, rstd)
    return dx.reshape(x.shape), dw


_rms_norm_bwd_op = _custom_op(_rms_norm_bwd, lambda dy, x, weight, rstd: (torch.empty_like(x), torch.empty_like(weight)))
_rms_norm_fwd_op = _custom_op(
    _rms_norm_fwd, lambda x, weight, eps: (torch.empty_like(x), x.new_empty(x.shape[:-1].numel(), dtype=torch.float32)),
    grad=lambda ctx, dy, drstd: (*_rms_norm_bwd_op(dy, *ctx.saved_tensors), None),
    setup=lambda ctx, inputs, output: ctx.save_for_backward(inputs[0], inputs[1], output[1]))


def rms_norm_reference(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """PyTorch eager: statistics in fp32 (fp64 for fp64 inputs), result in x's dtype."""
    xf = x if x.dtype == torch.float64 else x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * weight.to(xf.dtype)
    return y.to(x.dtype)


def rms_norm_inputs(shape, dtype, device):
    x = torch.randn(shape, dtype=dtype, device=device)
    weight = 1.0 + 0.1 * torch.randn(shape[-1], dtype=dtype, device=device)
    return x, weight, 1e-6


def _rms_norm_contract():
    """The benchmark contract (``tritonify bench THIS_FILE::rms_norm``); None without tritonify."""
    try:
        from tritonify.kernels.bench import Contract
    except ImportError:
        return None
    return Contract(kernel="_rms_norm_fwd_kernel", name="rms_norm", entry=rms_norm, inputs=rms_norm_inputs,
                    reference=rms_norm_reference, shapes=[(4096, RMS_NORM_HIDDEN), (16384, RMS_NORM_HIDDEN)],
                    dtype=RMS_NORM_DTYPE, liger="rms_norm", target=0.85)


RMS_NORM_CONTRACT = _rms_norm_contract()
