"""Fused residual add + RMSNorm: ``s = x + residual; y = rms_norm(s) * weight``, returning (y, s).

The pre-norm transformer block does this at every layer: one kernel reads x and residual once and
writes both the normalised output and the new residual stream, instead of an add kernel followed by
a norm kernel that reads the sum back. The backward adds the gradient arriving through the residual
stream into the norm's gradient in the same pass, so dx == dresidual comes out of one kernel.
"""
import os

import torch
import triton
import triton.language as tl

ADD_RMS_NORM_HIDDEN = 4096
ADD_RMS_NORM_DTYPE = "bfloat16"
ADD_RMS_NORM_MAX_HIDDEN = 65536  # one row must fit in one program's registers


def _interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def _autotune_configs(configs):
    """Every config on a GPU; the first alone on the CPU interpreter, which cannot time a choice."""
    return configs[:1] if _interpreting() or not torch.cuda.is_available() else configs


def _add_rms_norm_prune_rows(configs, named_args, **kwargs):
    """Drop multi-row configs whose tile would not fit in registers for this row width, and every
    multi-row config when the row is held as several tiles (NT > 1: one row per program)."""
    block_n = kwargs.get("BLOCK_N", named_args.get("BLOCK_N", 1))
    tiles = kwargs.get("NT", named_args.get("NT", 1))
    kept = [c for c in configs if c.kwargs["ROWS"] == 1 or (tiles == 1 and c.kwargs["ROWS"] * block_n <= 16384)]
    return kept or configs[:1]


_FWD_CONFIGS = [
    triton.Config({"ROWS": 1}, num_warps=8),
    triton.Config({"ROWS": 1}, num_warps=4),
    triton.Config({"ROWS": 1}, num_warps=16),
    triton.Config({"ROWS": 2}, num_warps=8),
    triton.Config({"ROWS": 4}, num_warps=8),
    triton.Config({"ROWS": 4}, num_warps=16),
    triton.Config({"ROWS": 1}, num_warps=32),
]


@triton.jit
def _add_rms_norm_tile(row_ptr, index, n_cols, TILE: tl.constexpr):
    """Tile ``index`` of one row (elements [index * TILE, (index + 1) * TILE)) in fp32, 0 past the row's end."""
    offs = index * TILE + tl.arange(0, TILE)
    return tl.load(row_ptr + offs, mask=offs < n_cols, other=0.0).to(tl.float32)


@triton.jit
def _add_rms_norm_put(row_ptr, index, n_cols, value, TILE: tl.constexpr):
    offs = index * TILE + tl.arange(0, TILE)
    tl.store(row_ptr + offs, value.to(row_ptr.dtype.element_ty), mask=offs < n_cols)


@triton.jit
def _add_rms_norm_row_tiles(x_row, r_row, w_ptr, y_row, s_row, n_cols, eps, TILE: tl.constexpr, NT: tl.constexpr):
    """One row as NT (2-3) equal tiles: every load issued first, one reduction for the sum of squares.
    Returns the row's 1/rms."""
    s0 = (_add_rms_norm_tile(x_row, 0, n_cols, TILE) + _add_rms_norm_tile(r_row, 0, n_cols, TILE)
          ).to(s_row.dtype.element_ty).to(tl.float32)  # the stored, rounded sum is what the norm reads
    s1 = (_add_rms_norm_tile(x_row, 1, n_cols, TILE) + _add_rms_norm_tile(r_row, 1, n_cols, TILE)
          ).to(s_row.dtype.element_ty).to(tl.float32)
    squares = s0 * s0 + s1 * s1
    if NT >= 3:
        s2 = (_add_rms_norm_tile(x_row, 2, n_cols, TILE) + _add_rms_norm_tile(r_row, 2, n_cols, TILE)
              ).to(s_row.dtype.element_ty).to(tl.float32)
        squares += s2 * s2
    rstd = tl.rsqrt(tl.sum(squares, axis=0) / n_cols + tl.cast(eps, tl.float32))
    _add_rms_norm_put(s_row, 0, n_cols, s0, TILE)
    _add_rms_norm_put(y_row, 0, n_cols, s0 * rstd * _add_rms_norm_tile(w_ptr, 0, n_cols, TILE), TILE)
    _add_rms_norm_put(s_row, 1, n_cols, s1, TILE)
    _add_rms_norm_put(y_row, 1, n_cols, s1 * rstd * _add_rms_norm_tile(w_ptr, 1, n_cols, TILE), TILE)
    if NT >= 3:
        _add_rms_norm_put(s_row, 2, n_cols, s2, TILE)
        _add_rms_norm_put(y_row, 2, n_cols, s2 * rstd * _add_rms_norm_tile(w_ptr, 2, n_cols, TILE), TILE)
    return rstd


@triton.autotune(
    configs=_autotune_configs(_FWD_CONFIGS),
    key=["n_cols", "BLOCK_N", "NT", "row_bucket"],
    prune_configs_by={"early_config_prune": _add_rms_norm_prune_rows},
)
@triton.jit(do_not_specialize=["row_bucket"])
def _add_rms_norm_fwd_kernel(x_ptr, r_ptr, w_ptr, y_ptr, s_ptr, rstd_ptr, n_rows, n_cols,  # noqa: TRI003 (a template: the fused kernel chosen instead of Liger's op)
                             x_row_stride, r_row_stride, y_row_stride, s_row_stride, eps, row_bucket,
                             BLOCK_N: tl.constexpr, STORE_RSTD: tl.constexpr, ROWS: tl.constexpr,
                             NT: tl.constexpr = 1):
    tl.static_assert(ROWS == 1 or NT == 1, "a row in several tiles: one row per program")
    if NT > 1:  # one row as NT tiles of BLOCK_N
        row = tl.program_id(0).to(tl.int64)
        rstd = _add_rms_norm_row_tiles(x_ptr + row * x_row_stride, r_ptr + row * r_row_stride, w_ptr,
                                       y_ptr + row * y_row_stride, s_ptr + row * s_row_stride, n_cols, eps, BLOCK_N, NT)
        if STORE_RSTD:
            tl.store(rstd_ptr + row, rstd)
    else:
        rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
        cols = tl.arange(0, BLOCK_N)
        row_mask = rows < n_rows
        col_mask = cols < n_cols
        mask = row_mask[:, None] & col_mask[None, :]
        rows64 = rows.to(tl.int64)[:, None]
        x = tl.load(x_ptr + rows64 * x_row_stride + cols[None, :], mask=mask, other=0.0)
        r = tl.load(r_ptr + rows64 * r_row_stride + cols[None, :], mask=mask, other=0.0)
        # the residual stream keeps the input dtype; the norm reads that rounded sum, as an unfused add would
        s = (x.to(tl.float32) + r.to(tl.float32)).to(s_ptr.dtype.element_ty)
        tl.store(s_ptr + rows64 * s_row_stride + cols[None, :], s, mask=mask)
        sf = s.to(tl.float32)
        w = tl.load(w_ptr + cols, mask=col_mask, other=0.0).to(tl.float32)
        rstd = tl.rsqrt(tl.sum(sf * sf, axis=1) / n_cols + tl.cast(eps, tl.float32))
        y = sf * rstd[:, None] * w[None, :]
        tl.store(y_ptr + rows64 * y_row_stride + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)
        if STORE_RSTD:  # kept for the backward; a forward without gradient skips it
            tl.store(rstd_ptr + rows, rstd, mask=row_mask)


# the backward's configs: PPS programs per SM walk a strided set of rows (PPS = 2: the configs timed before
# 2026-12-01 14:00Z, first); STAGES > 1 issues the next row's loads during this one's arithmetic; RELOAD = 1
# reads the row's s and dy again after its sum (from L1/L2) instead of holding them in fp32 registers
# across it (wide rows spill: s, dy, w and the dweight share per element in fp32)
_BWD_CONFIGS = [
    triton.Config({"PPS": 2, "STAGES": 1, "RELOAD": 0}, num_warps=8),
    triton.Config({"PPS": 2, "STAGES": 1, "RELOAD": 0}, num_warps=16),
    triton.Config({"PPS": 2, "STAGES": 1, "RELOAD": 0}, num_warps=32),
    triton.Config({"PPS": 2, "STAGES": 1, "RELOAD": 0}, num_warps=4),
    triton.Config({"PPS": 1, "STAGES": 1, "RELOAD": 0}, num_warps=8),
    triton.Config({"PPS": 1, "STAGES": 2, "RELOAD": 0}, num_warps=8),
    triton.Config({"PPS": 4, "STAGES": 1, "RELOAD": 0}, num_warps=4),
    triton.Config({"PPS": 2, "STAGES": 2, "RELOAD": 0}, num_warps=8),
    triton.Config({"PPS": 2, "STAGES": 1, "RELOAD": 1}, num_warps=8),
    triton.Config({"PPS": 4, "STAGES": 1, "RELOAD": 1}, num_warps=8),
]
ADD_RMS_NORM_BWD_MAX_PPS = max(c.kwargs["PPS"] for c in _BWD_CONFIGS)


@triton.autotune(configs=_autotune_configs(_BWD_CONFIGS), key=["n_cols", "BLOCK_N", "HAS_DS", "row_bucket"])
@triton.jit(do_not_specialize=["row_bucket"])
def _add_rms_norm_bwd_kernel(dy_ptr, ds_ptr, s_ptr, w_ptr, rstd_ptr, dx_ptr, dw_partial_ptr, n_rows, n_cols,
                             dy_row_stride, ds_row_stride, s_row_stride, dx_row_stride, row_bucket,
                             HAS_DS: tl.constexpr, BLOCK_N: tl.constexpr, PPS: tl.constexpr, STAGES: tl.constexpr,
                             RELOAD: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    col_mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=col_mask, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK_N], dtype=tl.float32)
    for row in tl.range(pid, n_rows, tl.num_programs(0), num_stages=STAGES):
        row64 = tl.cast(row, tl.int64)
        s_ptrs = s_ptr + row64 * s_row_stride + cols
        dy_ptrs = dy_ptr + row64 * dy_row_stride + cols
        s = tl.load(s_ptrs, mask=col_mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptrs, mask=col_mask, other=0.0).to(tl.float32)
        rstd = tl.load(rstd_ptr + row)
        s_hat = s * rstd
        wdy = w * dy
        dw += dy * s_hat
        mean_gs = tl.sum(wdy * s_hat, axis=0) / n_cols
        if RELOAD:  # a second read of the row (another cache modifier: not merged with the first)
            s_hat = tl.load(s_ptrs, mask=col_mask, other=0.0, cache_modifier=".ca").to(tl.float32) * rstd
            wdy = w * tl.load(dy_ptrs, mask=col_mask, other=0.0, cache_modifier=".ca").to(tl.float32)
        ds = rstd * (wdy - s_hat * mean_gs)
        if HAS_DS:  # the gradient that reached the residual stream directly
            ds += tl.load(ds_ptr + row64 * ds_row_stride + cols, mask=col_mask, other=0.0).to(tl.float32)
        tl.store(dx_ptr + row64 * dx_row_stride + cols, ds.to(dx_ptr.dtype.element_ty), mask=col_mask)
    tl.store(dw_partial_ptr + pid * n_cols + cols, dw, mask=col_mask)


@triton.jit
def _add_rms_norm_dw_sum_kernel(partial_ptr, dw_ptr, n_partial, n_cols, BLOCK_P: tl.constexpr,
                                BLOCK_C: tl.constexpr):
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


_add_rms_norm_fwd_launch = _Launcher(_add_rms_norm_fwd_kernel)
_add_rms_norm_bwd_launch = _Launcher(_add_rms_norm_bwd_kernel)
_add_rms_norm_dw_sum_launch = _Launcher(_add_rms_norm_dw_sum_kernel)
_bwd_grids = {}  # backward launch key -> programs of the config chosen for it (rows of dweight's shares)


def _add_rms_norm_block_n(n_cols: int) -> int:
    limit = ADD_RMS_NORM_MAX_HIDDEN
    if n_cols > limit:
        raise ValueError(f"add_rms_norm: hidden size {n_cols} exceeds {limit} (one row per program)")
    return 1 << (n_cols - 1).bit_length()


ADD_RMS_NORM_TILED_FROM = 2048  # rows at least this wide and not a power of two are held as equal tiles


def _add_rms_norm_tiles(n_cols: int) -> tuple[int, int]:
    """(tile, count): a wide row that is not a power of two held as three equal power-of-two tiles when
    that pads less than one block (5120 -> 3 x 2048 = 6144 lanes instead of 8192); otherwise one tile.
    At 4096x5120 bf16 on the H200 the three-tile form took 42.3 us against 42.8 for the 8192 block
    (gpu/templates/sweep_wide.py, 2026-12-01)."""
    block, tile = _add_rms_norm_block_n(n_cols), _add_rms_norm_block_n(-(-n_cols // 3))
    return (tile, 3) if n_cols >= ADD_RMS_NORM_TILED_FROM and 3 * tile < block else (block, 1)


def _add_rms_norm_row_bucket(n_rows: int) -> int:
    """The autotuner's view of the row count: decode (a few rows), mid, training. Tuned once per
    bucket, so a config chosen for 4 rows is never reused for 16384 (nor tuned again per row count)."""
    return 0 if n_rows <= 64 else 1 if n_rows <= 2048 else 2


_sms = {}


def _add_rms_norm_programs(t: torch.Tensor, n_rows: int, programs_per_sm: int) -> int:
    """Programs of the backward: programs_per_sm per SM, each walking a strided set of rows."""
    if not t.is_cuda:
        return max(1, min(n_rows, 2 * programs_per_sm))
    index = t.get_device()
    if index not in _sms:
        _sms[index] = torch.cuda.get_device_properties(index).multi_processor_count
    return max(1, min(n_rows, programs_per_sm * _sms[index]))


def _rows(t: torch.Tensor) -> torch.Tensor:
    t2d = t if t.dim() == 2 else t.reshape(-1, t.shape[-1])
    return t2d if t2d.stride(-1) == 1 else t2d.contiguous()


def add_rms_norm_forward(x, residual, weight, eps, keep_rstd=True):
    """(y, s, rstd) as 2-D rows: y = rms_norm(s) * weight with s = x + residual; rstd (None unless
    ``keep_rstd``) kept for the backward."""
    if x.shape != residual.shape:
        raise ValueError(f"add_rms_norm: x {tuple(x.shape)} and residual {tuple(residual.shape)} differ")
    x2d, r2d = _rows(x), _rows(residual)
    n_rows, n_cols = x2d.shape
    y, s = torch.empty_like(x2d), torch.empty_like(x2d)
    rstd = torch.empty(n_rows, dtype=torch.float32, device=x.device) if keep_rstd else None
    if n_rows:
        key = (n_rows, n_cols, x2d.stride(0), r2d.stride(0), x.dtype, residual.dtype, weight.dtype, x.get_device(),
               x2d.data_ptr() & 15, r2d.data_ptr() & 15, weight.data_ptr() & 15, eps, keep_rstd)
        tile, count = _add_rms_norm_tiles(n_cols)
        grid = lambda meta: (-(-n_rows // meta["ROWS"]),)
        _add_rms_norm_fwd_launch(key, grid, x2d, r2d, weight, y, s, rstd if keep_rstd else y, n_rows, n_cols,
                                 x2d.stride(0), r2d.stride(0), n_cols, n_cols, float(eps),
                                 _add_rms_norm_row_bucket(n_rows), BLOCK_N=tile, NT=count, STORE_RSTD=keep_rstd)
    return y, s, rstd


def add_rms_norm_backward(dy, ds, s, weight, rstd):
    """(d x = d residual, d weight) from the output gradients (``ds`` may be None) and the saved rows."""
    n_rows, n_cols = s.shape
    dy2d = _rows(dy)
    ds2d = _rows(ds) if ds is not None else dy2d
    dx = torch.empty_like(s)
    if not n_rows:
        return dx, torch.zeros_like(weight)
    key = (n_rows, n_cols, dy2d.stride(0), ds2d.stride(0), s.stride(0), dy.dtype, ds2d.dtype, s.dtype,
           weight.dtype, s.get_device(), dy2d.data_ptr() & 15, ds2d.data_ptr() & 15, s.data_ptr() & 15,
           weight.data_ptr() & 15, ds is not None)
    # one row of dweight's shares per program: as many as the chosen config launches once it is known,
    # the most any config could launch before the first call
    shares = _bwd_grids.get(key) or _add_rms_norm_programs(s, n_rows, ADD_RMS_NORM_BWD_MAX_PPS)
    dw_partial = torch.empty(shares, n_cols, dtype=torch.float32, device=s.device)

    def grid(meta):
        if len(_bwd_grids) > 1024:
            _bwd_grids.clear()
        _bwd_grids[key] = _add_rms_norm_programs(s, n_rows, meta["PPS"])
        return (_bwd_grids[key],)

    _add_rms_norm_bwd_launch(key, grid, dy2d, ds2d, s, weight, rstd, dx, dw_partial, n_rows, n_cols,
                             dy2d.stride(0), ds2d.stride(0), s.stride(0), n_cols, _add_rms_norm_row_bucket(n_rows),
                             HAS_DS=ds is not None, BLOCK_N=_add_rms_norm_block_n(n_cols))
    used = _bwd_grids[key]
    dw = torch.empty_like(weight)
    block_c = 64
    _add_rms_norm_dw_sum_launch((used, n_cols, weight.dtype, s.get_device(), weight.data_ptr() & 15),
                                (-(-n_cols // block_c),), dw_partial, dw, used, n_cols, BLOCK_P=32,
                                BLOCK_C=block_c, num_warps=4)
    return dx, dw


class AddRMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, residual, weight, eps):
        y, s, rstd = add_rms_norm_forward(x, residual, weight, eps)
        ctx.save_for_backward(s, weight, rstd)
        return y.reshape(x.shape), s.reshape(x.shape)

    @staticmethod
    def backward(ctx, dy, ds):
        s, weight, rstd = ctx.saved_tensors
        dx, dw = add_rms_norm_backward(dy, ds, s, weight, rstd)
        dx = dx.reshape(dy.shape)
        return dx, dx, dw, None


def add_rms_norm(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6):
    """(rms_norm(x + residual) * weight, x + residual), differentiable in x, residual and weight."""
    if torch.compiler.is_compiling():  # one custom op: no graph break
        return _add_rms_norm_fwd_op(x, residual, weight, eps)[:2]
    if not (torch.is_grad_enabled() and (x.requires_grad or residual.requires_grad or weight.requires_grad)):
        # no gradient wanted: no autograd node (its ~13 us of host time) and no 1/rms kept for a backward
        y, s, _ = add_rms_norm_forward(x, residual, weight, eps, keep_rstd=False)
        return (y, s) if x.dim() == 2 else (y.reshape(x.shape), s.reshape(x.shape))
    return AddRMSNormFunction.apply(x, residual, weight, eps)


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


def _add_rms_norm_fwd(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                      eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    y, s, rstd = add_rms_norm_forward(x, residual, weight, eps)
    return y.reshape(x.shape), s.reshape(x.shape), rstd


def _add_rms_norm_bwd(dy: torch.Tensor, ds: torch.Tensor, s: torch.Tensor, weight: torch.Tensor,
                      rstd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    dx, dw = add_rms_norm_backward(dy, ds, _rows(s), weight, rstd)
    return dx.reshape(s.shape), dw


_add_rms_norm_bwd_op = _custom_op(_add_rms_norm_bwd, lambda dy, ds, s, weight, rstd: (
    torch.empty_like(s), torch.empty_like(weight)))


def _add_rms_norm_grad(ctx, dy, ds, drstd):
    dx, dw = _add_rms_norm_bwd_op(dy, ds, *ctx.saved_tensors)
    return dx, dx, dw, None


_add_rms_norm_fwd_op = _custom_op(_add_rms_norm_fwd, lambda x, residual, weight, eps: (
    torch.empty_like(x), torch.empty_like(x), x.new_empty(x.shape[:-1].numel(), dtype=torch.float32)),
    grad=_add_rms_norm_grad,
    setup=lambda ctx, inputs, output: ctx.save_for_backward(output[1], inputs[2], output[2]))


def add_rms_norm_reference(x, residual, weight, eps=1e-6):
    """PyTorch eager: the sum in the input dtype, statistics in fp32 (fp64 for fp64 inputs)."""
    s = x + residual
    sf = s if s.dtype == torch.float64 else s.float()
    y = sf * torch.rsqrt(sf.pow(2).mean(-1, keepdim=True) + eps) * weight.to(sf.dtype)
    return y.to(x.dtype), s


def add_rms_norm_inputs(shape, dtype, device):
    x = torch.randn(shape, dtype=dtype, device=device)
    residual = torch.randn(shape, dtype=dtype, device=device)
    weight = 1.0 + 0.1 * torch.randn(shape[-1], dtype=dtype, device=device)
    return x, residual, weight, 1e-6


def _add_rms_norm_contract():
    """The benchmark contract (``tritonify bench THIS_FILE::add_rms_norm``); None without tritonify."""
    try:
        from tritonify.kernels.bench import Contract
    except ImportError:
        return None
    return Contract(kernel="_add_rms_norm_fwd_kernel", name="add_rms_norm", entry=add_rms_norm,
                    inputs=add_rms_norm_inputs, reference=add_rms_norm_reference,
                    shapes=[(4096, ADD_RMS_NORM_HIDDEN), (16384, ADD_RMS_NORM_HIDDEN)],
                    dtype=ADD_RMS_NORM_DTYPE, liger="fused_add_rms_norm", target=0.85)


ADD_RMS_NORM_CONTRACT = _add_rms_norm_contract()
