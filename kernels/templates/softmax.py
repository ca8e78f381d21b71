"""Fused softmax over the last dimension, forward and backward.

Rows up to SOFTMAX_MAX_FUSED_COLS wide live in registers: one read, one write (the Triton tutorial's
kernel: several rows per step when rows are narrow, and a persistent grid among the autotune configs); a
wide row that is not a power of two is held as up to four equal tiles instead of one padded block.
Wider rows take the online-softmax path: one pass for the running max and sum of exp, one to normalise
(two reads, one write). The backward is ``dx = y * (dy - sum(dy * y))``, one row per program, or a
persistent grid whose programs load the next row while they finish this one (PREFETCH configs).
"""
import os

import torch
import triton
import triton.language as tl

SOFTMAX_COLS = 4096
SOFTMAX_DTYPE = "bfloat16"
SOFTMAX_MAX_FUSED_COLS = 32768  # widest row held in registers; wider rows stream in blocks of this size


def _interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def _autotune_configs(configs):
    """Every config on a GPU; the first alone on the CPU interpreter, which cannot time a choice."""
    return configs[:1] if _interpreting() or not torch.cuda.is_available() else configs


def _softmax_prune_rows(configs, named_args, **kwargs):
    """Drop multi-row configs whose tile would not fit in registers for this row width, and every
    multi-row config when the row is held as several tiles (NT > 1: one row per step)."""
    block_n = kwargs.get("BLOCK_N", named_args.get("BLOCK_N", 1))
    tiles = kwargs.get("NT", named_args.get("NT", 1))
    kept = [c for c in configs if c.kwargs["ROWS"] == 1 or (tiles == 1 and c.kwargs["ROWS"] * block_n <= 16384)]
    return kept or configs[:1]


_FWD_CONFIGS = [
    # ROWS rows per step; PPS > 0 makes the grid persistent (PPS programs per SM, each looping over
    # row blocks with the next block's loads issued during this one's arithmetic, STAGES deep)
    triton.Config({"ROWS": 1, "PPS": 0, "STAGES": 1}, num_warps=8),
    triton.Config({"ROWS": 1, "PPS": 0, "STAGES": 1}, num_warps=4),
    triton.Config({"ROWS": 1, "PPS": 0, "STAGES": 1}, num_warps=16),
    triton.Config({"ROWS": 2, "PPS": 0, "STAGES": 1}, num_warps=8),
    triton.Config({"ROWS": 4, "PPS": 0, "STAGES": 1}, num_warps=8),
    triton.Config({"ROWS": 1, "PPS": 4, "STAGES": 2}, num_warps=8),
    triton.Config({"ROWS": 1, "PPS": 8, "STAGES": 2}, num_warps=4),
    triton.Config({"ROWS": 1, "PPS": 2, "STAGES": 3}, num_warps=8),
    triton.Config({"ROWS": 2, "PPS": 4, "STAGES": 2}, num_warps=8),
    # wide rows (11008 -> a 16384 block): more warps, fewer registers per thread
    triton.Config({"ROWS": 1, "PPS": 0, "STAGES": 1}, num_warps=32),
    triton.Config({"ROWS": 1, "PPS": 2, "STAGES": 2}, num_warps=16),
]


@triton.jit
def _softmax_tile(row_ptr, index, n_cols, other, TILE: tl.constexpr):
    """Tile ``index`` of one row (elements [index * TILE, (index + 1) * TILE)), ``other`` past the row's end."""
    offs = index * TILE + tl.arange(0, TILE)
    return tl.load(row_ptr + offs, mask=offs < n_cols, other=other)


@triton.jit
def _softmax_put(row_ptr, index, n_cols, value, TILE: tl.constexpr):
    offs = index * TILE + tl.arange(0, TILE)
    tl.store(row_ptr + offs, value.to(row_ptr.dtype.element_ty), mask=offs < n_cols)


@triton.jit
def _softmax_row(x_row, y_row, n_cols, TILE: tl.constexpr, NT: tl.constexpr):
    """One row held in registers as NT (1-3) equal tiles: every load issued first, the tiles combined
    elementwise so that the max and the sum are one reduction each."""
    t0 = _softmax_tile(x_row, 0, n_cols, float("-inf"), TILE).to(tl.float32)
    m = t0
    if NT >= 2:
        t1 = _softmax_tile(x_row, 1, n_cols, float("-inf"), TILE).to(tl.float32)
        m = tl.maximum(m, t1)
    if NT >= 3:
        t2 = _softmax_tile(x_row, 2, n_cols, float("-inf"), TILE).to(tl.float32)
        m = tl.maximum(m, t2)
    # exp(x - max) = exp2(x log2(e) - max log2(e)) (log2(e) = 1.4426950408889634): one fused multiply-add
    # and one exp2 per element
    max_log2 = tl.max(m, axis=0) * 1.4426950408889634
    e0 = tl.exp2(t0 * 1.4426950408889634 - max_log2)
    total = e0
    if NT >= 2:
        e1 = tl.exp2(t1 * 1.4426950408889634 - max_log2)
        total += e1
    if NT >= 3:
        e2 = tl.exp2(t2 * 1.4426950408889634 - max_log2)
        total += e2
    # one reciprocal per row, then a multiply per element (a division is a sequence per element)
    inv = 1.0 / tl.sum(total, axis=0)
    _softmax_put(y_row, 0, n_cols, e0 * inv, TILE)
    if NT >= 2:
        _softmax_put(y_row, 1, n_cols, e1 * inv, TILE)
    if NT >= 3:
        _softmax_put(y_row, 2, n_cols, e2 * inv, TILE)


@triton.jit
def _softmax_rows(x_ptr, y_ptr, n_rows, n_cols, x_row_stride, y_row_stride, BLOCK_N: tl.constexpr, ROWS: tl.constexpr,
                  STAGES: tl.constexpr, NT: tl.constexpr):
    """One step per block of ROWS rows; on a persistent grid (PPS > 0) each program takes several."""
    cols = tl.arange(0, BLOCK_N)
    for first in tl.range(tl.program_id(0) * ROWS, n_rows, tl.num_programs(0) * ROWS, num_stages=STAGES):
        if ROWS == 1:  # one row as NT tiles of BLOCK_N: 1-D tensors, the simplest layout for the compiler
            row64 = tl.cast(first, tl.int64)
            _softmax_row(x_ptr + row64 * x_row_stride, y_ptr + row64 * y_row_stride, n_cols, BLOCK_N, NT)
        else:  # ROWS rows of one tile (NT = 1)
            rows = first + tl.arange(0, ROWS)
            mask = (rows < n_rows)[:, None] & (cols < n_cols)[None, :]
            rows64 = rows.to(tl.int64)[:, None]
            x = tl.load(x_ptr + rows64 * x_row_stride + cols[None, :], mask=mask, other=float("-inf")).to(tl.float32)
            e = tl.exp(x - tl.max(x, axis=1)[:, None])
            y = e * (1.0 / tl.sum(e, axis=1))[:, None]
            tl.store(y_ptr + rows64 * y_row_stride + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.autotune(
    configs=_autotune_configs(_FWD_CONFIGS),
    key=["n_cols", "BLOCK_N", "row_bucket"],
    prune_configs_by={"early_config_prune": _softmax_prune_rows},
)
@triton.jit(do_not_specialize=["row_bucket"])
def _softmax_fwd_kernel(x_ptr, y_ptr, n_rows, n_cols, x_row_stride, y_row_stride, row_bucket,  # noqa: TRI003 (a template: the fused kernel chosen instead of Liger's op)
                        BLOCK_N: tl.constexpr, ROWS: tl.constexpr, PPS: tl.constexpr, STAGES: tl.constexpr,
                        NT: tl.constexpr = 1):
    tl.static_assert(ROWS == 1 or NT == 1, "a row in several tiles: one row per step")
    if PPS == 0 and ROWS == 1:  # a program per row, straight-line code (no loop around it)
        row = tl.program_id(0).to(tl.int64)
        _softmax_row(x_ptr + row * x_row_stride, y_ptr + row * y_row_stride, n_cols, BLOCK_N, NT)
    else:
        _softmax_rows(x_ptr, y_ptr, n_rows, n_cols, x_row_stride, y_row_stride, BLOCK_N, ROWS, STAGES, NT)


@triton.jit
def _softmax_fwd_online_kernel(x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, BLOCK_N: tl.constexpr):  # noqa: TRI003 (a template: the fused kernel chosen instead of Liger's op)
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    running_max = float("-inf")
    running_sum = 0.0
    for start in range(0, n_cols, BLOCK_N):
        offs = start + cols
        x = tl.load(x_ptr + row * x_row_stride + offs, mask=offs < n_cols, other=float("-inf")).to(tl.float32)
        new_max = tl.maximum(running_max, tl.max(x, axis=0))
        # base 2: exp(x - m) = exp2(x*log2(e) - m*log2(e)), one fused multiply-add per element
        max_log2 = new_max * 1.4426950408889634
        running_sum = (running_sum * tl.exp2(running_max * 1.4426950408889634 - max_log2)
                       + tl.sum(tl.exp2(x * 1.4426950408889634 - max_log2), axis=0))
        running_max = new_max
    for start in range(0, n_cols, BLOCK_N):
        offs = start + cols
        mask = offs < n_cols
        x = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=float("-inf")).to(tl.float32)
        y = tl.exp(x - running_max) / running_sum
        tl.store(y_ptr + row * y_row_stride + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


_BWD_CONFIGS = [
    # PPS > 0: a persistent grid (PPS programs per SM), the next row's loads issued during this one's
    # arithmetic (STAGES deep); PPS = 0: one program per row
    triton.Config({"PPS": 0, "STAGES": 1, "RELOAD": 0}, num_warps=16),
    triton.Config({"PPS": 0, "STAGES": 1, "RELOAD": 0}, num_warps=8),
    triton.Config({"PPS": 0, "STAGES": 1, "RELOAD": 0}, num_warps=32),
    triton.Config({"PPS": 0, "STAGES": 1, "RELOAD": 0}, num_warps=4),
    triton.Config({"PPS": 2, "STAGES": 2, "RELOAD": 0}, num_warps=16),
    triton.Config({"PPS": 4, "STAGES": 2, "RELOAD": 0}, num_warps=8),
    triton.Config({"PPS": 1, "STAGES": 2, "RELOAD": 0}, num_warps=32),
    # RELOAD = 1 (rows held in registers): dy and y read again after the row's sum, from L1/L2,
    # instead of being held in fp32 across it
    triton.Config({"PPS": 0, "STAGES": 1, "RELOAD": 1}, num_warps=16),
    triton.Config({"PPS": 0, "STAGES": 1, "RELOAD": 1}, num_warps=8),
    triton.Config({"PPS": 4, "STAGES": 1, "RELOAD": 1}, num_warps=8),
    # PREFETCH = 1 (rows held in registers, persistent): the next row's dy and y loaded, in their own
    # dtype, before this row's sum. At 4096x11008 bf16 on the H200 one 32-warp program per SM took 64.3 us
    # (63 registers; Liger 64.5, the previous pick 67.7: gpu/templates/sweep_wide.py, 2026-12-01)
    triton.Config({"PPS": 1, "STAGES": 1, "RELOAD": 0, "PREFETCH": 1}, num_warps=32),
    triton.Config({"PPS": 1, "STAGES": 1, "RELOAD": 0, "PREFETCH": 1}, num_warps=16),
    triton.Config({"PPS": 2, "STAGES": 1, "RELOAD": 0, "PREFETCH": 1}, num_warps=8),
]


def _softmax_prune_bwd(configs, named_args, **kwargs):
    """Drop the prefetching configs (PREFETCH) where a row is wider than one block (two passes)."""
    whole = named_args.get("n_cols", 0) <= kwargs.get("BLOCK_N", named_args.get("BLOCK_N", 0))
    return [c for c in configs if whole or not c.kwargs.get("PREFETCH", 0)] or configs[:1]


@triton.jit
def _softmax_bwd_rows_prefetch(dy_ptr, y_ptr, dx_ptr, n_rows, n_cols, dy_row_stride, y_row_stride, dx_row_stride,
                               BLOCK_N: tl.constexpr):
    """Whole rows, a persistent grid: row r + programs is loaded before row r's sum and carried to the next step."""
    pid, step = tl.program_id(0), tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    col_mask = cols < n_cols
    first = cols < tl.where(pid < n_rows, n_cols, 0)
    dy = tl.load(dy_ptr + tl.cast(pid, tl.int64) * dy_row_stride + cols, mask=first, other=0.0)
    y = tl.load(y_ptr + tl.cast(pid, tl.int64) * y_row_stride + cols, mask=first, other=0.0)
    for row in tl.range(pid, n_rows, step, num_stages=1):
        nxt = row + step
        more = cols < tl.where(nxt < n_rows, n_cols, 0)  # nothing is read past the last row
        dy_next = tl.load(dy_ptr + tl.cast(nxt, tl.int64) * dy_row_stride + cols, mask=more, other=0.0)
        y_next = tl.load(y_ptr + tl.cast(nxt, tl.int64) * y_row_stride + cols, mask=more, other=0.0)
        dyf, yf = dy.to(tl.float32), y.to(tl.float32)
        dot = tl.sum(dyf * yf, axis=0)
        tl.store(dx_ptr + tl.cast(row, tl.int64) * dx_row_stride + cols,
                 (yf * (dyf - dot)).to(dx_ptr.dtype.element_ty), mask=col_mask)
        dy, y = dy_next, y_next


@triton.jit
def _softmax_bwd_rows(dy_ptr, y_ptr, dx_ptr, n_rows, n_cols, dy_row_stride, y_row_stride, dx_row_stride,
                      BLOCK_N: tl.constexpr, STAGES: tl.constexpr, RELOAD: tl.constexpr):
    """One row per step (a program per row, or a persistent grid striding over rows)."""
    cols = tl.arange(0, BLOCK_N)
    for row32 in tl.range(tl.program_id(0), n_rows, tl.num_programs(0), num_stages=STAGES):
        row = tl.cast(row32, tl.int64)
        if BLOCK_N >= n_cols:  # the whole row in registers: dy and y read once
            mask = cols < n_cols
            # held in their own dtype across the sum (half the registers for bf16), widened where used
            dy = tl.load(dy_ptr + row * dy_row_stride + cols, mask=mask, other=0.0)
            y = tl.load(y_ptr + row * y_row_stride + cols, mask=mask, other=0.0)
            dot = tl.sum(dy.to(tl.float32) * y.to(tl.float32), axis=0)
            if RELOAD:  # a second read (another cache modifier: not merged with the first)
                dy = tl.load(dy_ptr + row * dy_row_stride + cols, mask=mask, other=0.0, cache_modifier=".ca")
                y = tl.load(y_ptr + row * y_row_stride + cols, mask=mask, other=0.0, cache_modifier=".ca")
            dx = y.to(tl.float32) * (dy.to(tl.float32) - dot)
            tl.store(dx_ptr + row * dx_row_stride + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)
        else:  # wider rows: the dot product, then the rows again (from L2)
            dot = 0.0
            for start in range(0, n_cols, BLOCK_N):
                offs = start + cols
                mask = offs < n_cols
                dy = tl.load(dy_ptr + row * dy_row_stride + offs, mask=mask, other=0.0).to(tl.float32)
                y = tl.load(y_ptr + row * y_row_stride + offs, mask=mask, other=0.0).to(tl.float32)
                dot += tl.sum(dy * y, axis=0)
            for start in range(0, n_cols, BLOCK_N):
                offs = start + cols
                mask = offs < n_cols
                dy = tl.load(dy_ptr + row * dy_row_stride + offs, mask=mask, other=0.0).to(tl.float32)
                y = tl.load(y_ptr + row * y_row_stride + offs, mask=mask, other=0.0).to(tl.float32)
                tl.store(dx_ptr + row * dx_row_stride + offs, (y * (dy - dot)).to(dx_ptr.dtype.element_ty), mask=mask)


@triton.autotune(
    configs=_autotune_configs(_BWD_CONFIGS),
    key=["n_cols", "BLOCK_N", "row_bucket"],
    prune_configs_by={"early_config_prune": _softmax_prune_bwd},
)
@triton.jit(do_not_specialize=["row_bucket"])
def _softmax_bwd_kernel(dy_ptr, y_ptr, dx_ptr, n_rows, n_cols, dy_row_stride, y_row_stride, dx_row_stride, row_bucket,
                        BLOCK_N: tl.constexpr, PPS: tl.constexpr, STAGES: tl.constexpr, RELOAD: tl.constexpr = 0,
                        PREFETCH: tl.constexpr = 0):
    if PREFETCH:
        _softmax_bwd_rows_prefetch(dy_ptr, y_ptr, dx_ptr, n_rows, n_cols, dy_row_stride, y_row_stride, dx_row_stride,
                                   BLOCK_N)
    else:
        _softmax_bwd_rows(dy_ptr, y_ptr, dx_ptr, n_rows, n_cols, dy_row_stride, y_row_stride, dx_row_stride, BLOCK_N,
                          STAGES, RELOAD)


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


_softmax_fwd_launch = _Launcher(_softmax_fwd_kernel)
_softmax_fwd_online_launch = _Launcher(_softmax_fwd_online_kernel)
_softmax_bwd_launch = _Launcher(_softmax_bwd_kernel)


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


def _softmax_row_bucket(n_rows: int) -> int:
    """The autotuner's view of the row count: decode (a few rows), mid, training. Tuned once per
    bucket, so a config chosen for 4 rows is never reused for 16384 (nor tuned again per row count)."""
    return 0 if n_rows <= 64 else 1 if n_rows <= 2048 else 2


def _rows(t: torch.Tensor) -> torch.Tensor:
    t2d = t if t.dim() == 2 else t.reshape(-1, t.shape[-1])
    return t2d if t2d.stride(-1) == 1 else t2d.contiguous()


def _warps(block_n: int) -> int:
    return 4 if block_n <= 1024 else 8 if block_n <= 8192 else 16


def _pow2(n: int) -> int:
    return 1 << (n - 1).bit_length()


SOFTMAX_TILED_FROM = 2048  # rows at least this wide and not a power of two are held as equal tiles


def _softmax_fwd_tiles(n_cols: int) -> tuple[int, int]:
    """(tile, count): a wide row that is not a power of two held as three equal power-of-two tiles when
    that pads less than one block (11008 -> 3 x 4096 = 12288 lanes instead of 16384; 5120 -> 3 x 2048);
    otherwise one tile (two or four equal tiles never pad less than one block). The wide forward is
    bound by instructions, and a padded lane costs as much as a real one: at 4096x11008 bf16 on the H200
    three 4096 tiles took 44.1 us against 57.6 for the 16384 block and 58.5 for Liger
    (gpu/templates/sweep_wide.py, 2026-12-01)."""
    block, tile = _pow2(n_cols), _pow2(-(-n_cols // 3))
    return (tile, 3) if n_cols >= SOFTMAX_TILED_FROM and 3 * tile < block else (block, 1)


def softmax_forward(x: torch.Tensor) -> torch.Tensor:
    x2d = _rows(x)
    n_rows, n_cols = x2d.shape
    y = torch.empty_like(x2d)
    if n_rows and n_cols:
        stride = x2d.stride(0)
        key = (n_rows, n_cols, stride, x.dtype, x.get_device(), x2d.data_ptr() & 15)
        if n_cols <= SOFTMAX_MAX_FUSED_COLS:
            grid = lambda meta: (row_grid(x2d, n_rows, meta["ROWS"], meta["PPS"]),)
            tile, count = _softmax_fwd_tiles(n_cols)
            _softmax_fwd_launch(key, grid, x2d, y, n_rows, n_cols, stride, n_cols, _softmax_row_bucket(n_rows),
                                BLOCK_N=tile, NT=count)
        else:
            block_n = min(SOFTMAX_MAX_FUSED_COLS, 8192)
            _softmax_fwd_online_launch(key, (n_rows,), x2d, y, n_cols, stride, n_cols, BLOCK_N=block_n,
                                       num_warps=_warps(block_n))
    return y if x.dim() == 2 else y.reshape(x.shape)


def softmax_backward(dy: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    dy2d, y2d = _rows(dy), _rows(y)
    n_rows, n_cols = y2d.shape
    dx = torch.empty_like(y2d)
    if n_rows and n_cols:
        key = (n_rows, n_cols, dy2d.stride(0), y2d.stride(0), dy.dtype, y.dtype, y.get_device(),
               dy2d.data_ptr() & 15, y2d.data_ptr() & 15)
        block_n = _pow2(n_cols) if n_cols <= SOFTMAX_MAX_FUSED_COLS else 8192  # wider: two passes over blocks
        grid = lambda meta: (row_grid(y2d, n_rows, 1, meta["PPS"]),)
        _softmax_bwd_launch(key, grid, dy2d, y2d, dx, n_rows, n_cols, dy2d.stride(0), y2d.stride(0), n_cols,
                            _softmax_row_bucket(n_rows), BLOCK_N=block_n)
    return dx if y.dim() == 2 else dx.reshape(y.shape)


class SoftmaxFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = softmax_forward(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        return softmax_backward(dy, y)


def softmax(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension, computed in fp32, returned in x's dtype; differentiable."""
    if torch.compiler.is_compiling():  # one custom op: no graph break
        return _softmax_fwd_op(x)
    if not (torch.is_grad_enabled() and (x.requires_grad)):  # no autograd node: the Function's own ~13 us of host time are skipped
        return softmax_forward(x)
    return SoftmaxFunction.apply(x)


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


def _softmax_fwd(x: torch.Tensor) -> torch.Tensor:
    return softmax_forward(x)


def _softmax_bwd(dy: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return softmax_backward(dy, y)


_softmax_bwd_op = _custom_op(_softmax_bwd, lambda dy, y: torch.empty_like(y))
_softmax_fwd_op = _custom_op(_softmax_fwd, lambda x: torch.empty_like(x),
                             grad=lambda ctx, dy: _softmax_bwd_op(dy, *ctx.saved_tensors),
                             setup=lambda ctx, inputs, output: ctx.save_for_backward(output))


def softmax_reference(x: torch.Tensor) -> torch.Tensor:
    """PyTorch eager, in fp32 (fp64 for fp64 inputs)."""
    xf = x if x.dtype == torch.float64 else x.float()
    return torch.softmax(xf, dim=-1).to(x.dtype)


def softmax_inputs(shape, dtype, device):
    return (torch.randn(shape, dtype=dtype, device=device),)


def _softmax_contract():
    """The benchmark contract (``tritonify bench THIS_FILE::softmax``); None without tritonify."""
    try:
        from tritonify.kernels.bench import Contract
    except ImportError:
        return None
    return Contract(kernel="_softmax_fwd_kernel", name="softmax", entry=softmax, inputs=softmax_inputs,
                    reference=softmax_reference, shapes=[(4096, SOFTMAX_COLS), (16384, SOFTMAX_COLS)],
                    dtype=SOFTMAX_DTYPE, liger="softmax", target=0.85)


SOFTMAX_CONTRACT = _softmax_contract()
