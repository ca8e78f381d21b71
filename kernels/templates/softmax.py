"""Fused softmax over the last dimension, forward and backward.

Rows up to SOFTMAX_MAX_FUSED_COLS wide live in registers: one read, one write (the Triton tutorial's
kernel: several rows per step when rows are narrow, and a persistent grid among the autotune configs). Wider rows take the online-softmax path: one
pass for the running max and sum of exp, one to normalise (two reads, one write). The backward is
``dx = y * (dy - sum(dy * y))``, one row per program (or a persistent grid); a row that is not a power
of two wide can be held in three power-of-two tiles instead of one padded block (SPLIT configs).
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
def _softmax_load_tile(row_ptr, start, n_cols, other, BLOCK: tl.constexpr, AGAIN: tl.constexpr):
    """Elements [start, start + BLOCK) of one row in fp32, ``other`` past the row's end. AGAIN = 1: a
    second read of the same elements (another cache modifier, so it is not merged with the first)."""
    offs = start + tl.arange(0, BLOCK)
    if AGAIN:
        tile = tl.load(row_ptr + offs, mask=offs < n_cols, other=other, cache_modifier=".ca")
    else:
        tile = tl.load(row_ptr + offs, mask=offs < n_cols, other=other)
    return tile.to(tl.float32)


@triton.jit
def _softmax_store_tile(row_ptr, start, n_cols, value, BLOCK: tl.constexpr):
    offs = start + tl.arange(0, BLOCK)
    tl.store(row_ptr + offs, value.to(row_ptr.dtype.element_ty), mask=offs < n_cols)


@triton.autotune(
    configs=_autotune_configs(_FWD_CONFIGS),
    key=["n_cols", "BLOCK_N", "row_bucket"],
    prune_configs_by={"early_config_prune": _prune_rows},
)
@triton.jit(do_not_specialize=["row_bucket"])
def _softmax_fwd_kernel(x_ptr, y_ptr, n_rows, n_cols, x_row_stride, y_row_stride, row_bucket,  # noqa: TRI003 (a template: the fused kernel chosen instead of Liger's op)
                        BLOCK_N: tl.constexpr, ROWS: tl.constexpr, PPS: tl.constexpr, STAGES: tl.constexpr):
    cols = tl.arange(0, BLOCK_N)
    # one step per block of ROWS rows; with a persistent grid (PPS > 0) each program takes several
    for first in tl.range(tl.program_id(0) * ROWS, n_rows, tl.num_programs(0) * ROWS, num_stages=STAGES):
        if ROWS == 1:  # one row: 1-D tensors, the simplest layout for the compiler
            row64 = tl.cast(first, tl.int64)
            x = tl.load(x_ptr + row64 * x_row_stride + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            e = tl.exp(x - tl.max(x, axis=0))
            # one reciprocal per row, then a multiply per element (a division is a sequence per element)
            tl.store(y_ptr + row64 * y_row_stride + cols, (e * (1.0 / tl.sum(e, axis=0))).to(y_ptr.dtype.element_ty),
                     mask=cols < n_cols)
        else:
            rows = first + tl.arange(0, ROWS)
            mask = (rows < n_rows)[:, None] & (cols < n_cols)[None, :]
            rows64 = rows.to(tl.int64)[:, None]
            x = tl.load(x_ptr + rows64 * x_row_stride + cols[None, :], mask=mask, other=float("-inf")).to(tl.float32)
            e = tl.exp(x - tl.max(x, axis=1)[:, None])
            y = e * (1.0 / tl.sum(e, axis=1))[:, None]
            tl.store(y_ptr + rows64 * y_row_stride + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)


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
    # SPLIT: a row that is not a power of two wide held in three power-of-two tiles (11008 -> 8192 +
    # 2048 + 1024 lanes instead of 16384), every load issued before the sum; with RELOAD, 8 warps fit
    # two programs (two rows) on an SM. The autotuner's pick at 4096x11008 on the H200 (2026-12-01);
    # SPLIT at 8 or 16 warps without RELOAD measured 10% slower and was dropped
    triton.Config({"PPS": 0, "STAGES": 1, "RELOAD": 1, "SPLIT": 1}, num_warps=8),
    triton.Config({"PPS": 0, "STAGES": 1, "RELOAD": 0, "SPLIT": 1}, num_warps=32),
]


def _softmax_prune_split(configs, named_args, **kwargs):
    """Drop the three-tile configs (SPLIT) where the row is one power of two wide, or too wide to be held."""
    split = kwargs.get("TILE_B", named_args.get("TILE_B", 0)) > 0
    return [c for c in configs if split or not c.kwargs.get("SPLIT", 0)] or configs[:1]


@triton.autotune(
    configs=_autotune_configs(_BWD_CONFIGS),
    key=["n_cols", "BLOCK_N", "row_bucket"],
    prune_configs_by={"early_config_prune": _softmax_prune_split},
)
@triton.jit(do_not_specialize=["row_bucket"])
def _softmax_bwd_kernel(dy_ptr, y_ptr, dx_ptr, n_rows, n_cols, dy_row_stride, y_row_stride, dx_row_stride, row_bucket,
                        BLOCK_N: tl.constexpr, PPS: tl.constexpr, STAGES: tl.constexpr, RELOAD: tl.constexpr = 0,
                        SPLIT: tl.constexpr = 0, TILE_A: tl.constexpr = 0, TILE_B: tl.constexpr = 0,
                        TILE_C: tl.constexpr = 0):
    cols = tl.arange(0, BLOCK_N)
    for row32 in tl.range(tl.program_id(0), n_rows, tl.num_programs(0), num_stages=STAGES):
        row = tl.cast(row32, tl.int64)
        if SPLIT and TILE_B > 0:  # the row in three tiles, every load issued before the reduction
            dy_row, y_row = dy_ptr + row * dy_row_stride, y_ptr + row * y_row_stride
            dya = _softmax_load_tile(dy_row, 0, n_cols, 0.0, TILE_A, 0)
            dyb = _softmax_load_tile(dy_row, TILE_A, n_cols, 0.0, TILE_B, 0)
            dyc = _softmax_load_tile(dy_row, TILE_A + TILE_B, n_cols, 0.0, TILE_C, 0)
            ya = _softmax_load_tile(y_row, 0, n_cols, 0.0, TILE_A, 0)
            yb = _softmax_load_tile(y_row, TILE_A, n_cols, 0.0, TILE_B, 0)
            yc = _softmax_load_tile(y_row, TILE_A + TILE_B, n_cols, 0.0, TILE_C, 0)
            dot = tl.sum(dya * ya, axis=0) + tl.sum(dyb * yb, axis=0) + tl.sum(dyc * yc, axis=0)
            if RELOAD:  # dy and y read again (from L1) instead of held across the sum: fewer registers
                dya = _softmax_load_tile(dy_row, 0, n_cols, 0.0, TILE_A, 1)
                dyb = _softmax_load_tile(dy_row, TILE_A, n_cols, 0.0, TILE_B, 1)
                dyc = _softmax_load_tile(dy_row, TILE_A + TILE_B, n_cols, 0.0, TILE_C, 1)
                ya = _softmax_load_tile(y_row, 0, n_cols, 0.0, TILE_A, 1)
                yb = _softmax_load_tile(y_row, TILE_A, n_cols, 0.0, TILE_B, 1)
                yc = _softmax_load_tile(y_row, TILE_A + TILE_B, n_cols, 0.0, TILE_C, 1)
            dx_row = dx_ptr + row * dx_row_stride
            _softmax_store_tile(dx_row, 0, n_cols, ya * (dya - dot), TILE_A)
            _softmax_store_tile(dx_row, TILE_A, n_cols, yb * (dyb - dot), TILE_B)
            _softmax_store_tile(dx_row, TILE_A + TILE_B, n_cols, yc * (dyc - dot), TILE_C)
        elif BLOCK_N >= n_cols:  # the whole row in registers: dy and y read once
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


def _softmax_tiles(n_cols: int) -> tuple[int, int, int]:
    """Three powers of two covering a row that is not one (11008 -> 8192 + 2048 + 1024, 5120 -> 4096 +
    512 + 512); (n_cols, 0, 0) for a power of two or a row too wide to hold (the SPLIT configs are
    pruned then)."""
    a = 1 << (n_cols.bit_length() - 1)
    if a == n_cols or n_cols > SOFTMAX_MAX_FUSED_COLS:
        return _pow2(n_cols), 0, 0
    rest = n_cols - a
    b = 1 << (rest.bit_length() - 1)
    if b == rest:  # exactly two: the second halved, so there are three
        return a, max(b // 2, 1), max(b // 2, 1)
    return a, b, 1 << (rest - b - 1).bit_length()


def softmax_forward(x: torch.Tensor) -> torch.Tensor:
    x2d = _rows(x)
    n_rows, n_cols = x2d.shape
    y = torch.empty_like(x2d)
    if n_rows and n_cols:
        stride = x2d.stride(0)
        key = (n_rows, n_cols, stride, x.dtype, x.get_device(), x2d.data_ptr() & 15)
        if n_cols <= SOFTMAX_MAX_FUSED_COLS:
            grid = lambda meta: (row_grid(x2d, n_rows, meta["ROWS"], meta["PPS"]),)
            _softmax_fwd_launch(key, grid, x2d, y, n_rows, n_cols, stride, n_cols, _softmax_row_bucket(n_rows),
                                BLOCK_N=_pow2(n_cols))
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
        a, b, c = _softmax_tiles(n_cols)
        grid = lambda meta: (row_grid(y2d, n_rows, 1, meta["PPS"]),)
        _softmax_bwd_launch(key, grid, dy2d, y2d, dx, n_rows, n_cols, dy2d.stride(0), y2d.stride(0), n_cols,
                            _softmax_row_bucket(n_rows), BLOCK_N=block_n, TILE_A=a, TILE_B=b, TILE_C=c)
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
