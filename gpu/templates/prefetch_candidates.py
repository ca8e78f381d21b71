"""Candidate row kernels for the wide-row misses: a persistent grid whose programs load the next row
while they reduce and write the current one (the prefetch held in the input dtype, a loop-carried value).

Why: at 4096x11008 the softmax forward takes about 58 us against a copy ceiling of about 43 us for
the bytes it moves (x read, y written), and the backward 70 us against 64. One 16-warp program per row
holds the row in registers; while it reduces (two barriers) and writes, its SM issues no loads, and a
new program's loads start only when the previous one exits. Holding the next row's raw bf16 (half the
registers of its fp32 form) lets the loads of row i+1 overlap the arithmetic of row i.

Each kernel here is checked against float64 and timed by ``sweep_wide.py`` beside the template's own
call, Liger and torch.compile; one that wins is moved into the template as a config.
"""
from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def softmax_fwd_prefetch(x_ptr, y_ptr, n_rows, n_cols, x_row_stride, y_row_stride, BLOCK_N: tl.constexpr):
    pid, step = tl.program_id(0), tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    col_mask = cols < n_cols
    x = tl.load(x_ptr + tl.cast(pid, tl.int64) * x_row_stride + cols, mask=cols < tl.where(pid < n_rows, n_cols, 0),
                other=float("-inf"))
    for row in tl.range(pid, n_rows, step, num_stages=1):
        nxt = row + step
        x_next = tl.load(x_ptr + tl.cast(nxt, tl.int64) * x_row_stride + cols, mask=cols < tl.where(nxt < n_rows, n_cols, 0),
                         other=float("-inf"))
        xf = x.to(tl.float32)
        e = tl.exp(xf - tl.max(xf, axis=0))
        y = e * (1.0 / tl.sum(e, axis=0))
        tl.store(y_ptr + tl.cast(row, tl.int64) * y_row_stride + cols, y.to(y_ptr.dtype.element_ty), mask=col_mask)
        x = x_next


@triton.jit
def softmax_bwd_prefetch(dy_ptr, y_ptr, dx_ptr, n_rows, n_cols, dy_row_stride, y_row_stride, dx_row_stride,
                         BLOCK_N: tl.constexpr):
    pid, step = tl.program_id(0), tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    col_mask = cols < n_cols
    first = cols < tl.where(pid < n_rows, n_cols, 0)
    dy = tl.load(dy_ptr + tl.cast(pid, tl.int64) * dy_row_stride + cols, mask=first, other=0.0)
    y = tl.load(y_ptr + tl.cast(pid, tl.int64) * y_row_stride + cols, mask=first, other=0.0)
    for row in tl.range(pid, n_rows, step, num_stages=1):
        nxt = row + step
        m = cols < tl.where(nxt < n_rows, n_cols, 0)
        dy_next = tl.load(dy_ptr + tl.cast(nxt, tl.int64) * dy_row_stride + cols, mask=m, other=0.0)
        y_next = tl.load(y_ptr + tl.cast(nxt, tl.int64) * y_row_stride + cols, mask=m, other=0.0)
        dyf, yf = dy.to(tl.float32), y.to(tl.float32)
        dot = tl.sum(dyf * yf, axis=0)
        tl.store(dx_ptr + tl.cast(row, tl.int64) * dx_row_stride + cols, (yf * (dyf - dot)).to(dx_ptr.dtype.element_ty),
                 mask=col_mask)
        dy, y = dy_next, y_next


@triton.jit
def rms_fwd_prefetch(x_ptr, w_ptr, y_ptr, n_rows, n_cols, x_row_stride, y_row_stride, eps, BLOCK_N: tl.constexpr):
    pid, step = tl.program_id(0), tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    col_mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=col_mask, other=0.0)
    x = tl.load(x_ptr + tl.cast(pid, tl.int64) * x_row_stride + cols, mask=cols < tl.where(pid < n_rows, n_cols, 0), other=0.0)
    for row in tl.range(pid, n_rows, step, num_stages=1):
        nxt = row + step
        x_next = tl.load(x_ptr + tl.cast(nxt, tl.int64) * x_row_stride + cols, mask=cols < tl.where(nxt < n_rows, n_cols, 0),
                         other=0.0)
        xf = x.to(tl.float32)
        rstd = tl.rsqrt(tl.sum(xf * xf, axis=0) / n_cols + tl.cast(eps, tl.float32))
        tl.store(y_ptr + tl.cast(row, tl.int64) * y_row_stride + cols,
                 (xf * rstd * w.to(tl.float32)).to(y_ptr.dtype.element_ty), mask=col_mask)
        x = x_next


@triton.jit
def add_rms_fwd_prefetch(x_ptr, r_ptr, w_ptr, y_ptr, s_ptr, n_rows, n_cols, row_stride, eps, BLOCK_N: tl.constexpr):
    pid, step = tl.program_id(0), tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    col_mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=col_mask, other=0.0)
    first = cols < tl.where(pid < n_rows, n_cols, 0)
    x = tl.load(x_ptr + tl.cast(pid, tl.int64) * row_stride + cols, mask=first, other=0.0)
    r = tl.load(r_ptr + tl.cast(pid, tl.int64) * row_stride + cols, mask=first, other=0.0)
    for row in tl.range(pid, n_rows, step, num_stages=1):
        nxt = row + step
        m = cols < tl.where(nxt < n_rows, n_cols, 0)
        x_next = tl.load(x_ptr + tl.cast(nxt, tl.int64) * row_stride + cols, mask=m, other=0.0)
        r_next = tl.load(r_ptr + tl.cast(nxt, tl.int64) * row_stride + cols, mask=m, other=0.0)
        s = (x.to(tl.float32) + r.to(tl.float32)).to(s_ptr.dtype.element_ty)
        offs = tl.cast(row, tl.int64) * row_stride + cols
        tl.store(s_ptr + offs, s, mask=col_mask)
        sf = s.to(tl.float32)
        rstd = tl.rsqrt(tl.sum(sf * sf, axis=0) / n_cols + tl.cast(eps, tl.float32))
        tl.store(y_ptr + offs, (sf * rstd * w.to(tl.float32)).to(y_ptr.dtype.element_ty), mask=col_mask)
        x, r = x_next, r_next


def programs(n_rows: int, per_sm: int, sms: int) -> int:
    return max(1, min(n_rows, per_sm * sms))


# --------------------------------------------------------------------------- equal tiles
# A row held as NT equal power-of-two tiles instead of one padded block (11008 -> 3 x 4096 = 12288 lanes
# instead of 16384, 5120 -> 3 x 2048 = 6144 instead of 8192): the forward at 4096x11008 slows with the SM
# clock under ncu (58 -> 81 us) while the prefetching backward does not, so it is bound by instructions,
# and a third of its lanes are padding. The tiles are combined elementwise first, so each statistic is
# still one reduction (one barrier), and every load is issued before it.
@triton.jit
def _tile(row_ptr, index, n_cols, other, TILE: tl.constexpr):
    offs = index * TILE + tl.arange(0, TILE)
    return tl.load(row_ptr + offs, mask=offs < n_cols, other=other)


@triton.jit
def _put(row_ptr, index, n_cols, value, TILE: tl.constexpr):
    offs = index * TILE + tl.arange(0, TILE)
    tl.store(row_ptr + offs, value.to(row_ptr.dtype.element_ty), mask=offs < n_cols)


@triton.jit
def softmax_fwd_tiles(x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, TILE: tl.constexpr, NT: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row, y_row = x_ptr + row * x_row_stride, y_ptr + row * y_row_stride
    t0 = _tile(x_row, 0, n_cols, float("-inf"), TILE).to(tl.float32)
    m = t0
    if NT >= 2:
        t1 = _tile(x_row, 1, n_cols, float("-inf"), TILE).to(tl.float32)
        m = tl.maximum(m, t1)
    if NT >= 3:
        t2 = _tile(x_row, 2, n_cols, float("-inf"), TILE).to(tl.float32)
        m = tl.maximum(m, t2)
    if NT >= 4:
        t3 = _tile(x_row, 3, n_cols, float("-inf"), TILE).to(tl.float32)
        m = tl.maximum(m, t3)
    max_log2 = tl.max(m, axis=0) * 1.4426950408889634
    # exp(x - max) = exp2(x log2(e) - max log2(e)): one fused multiply-add and one exp2 per element
    e0 = tl.exp2(t0 * 1.4426950408889634 - max_log2)
    acc = e0
    if NT >= 2:
        e1 = tl.exp2(t1 * 1.4426950408889634 - max_log2)
        acc += e1
    if NT >= 3:
        e2 = tl.exp2(t2 * 1.4426950408889634 - max_log2)
        acc += e2
    if NT >= 4:
        e3 = tl.exp2(t3 * 1.4426950408889634 - max_log2)
        acc += e3
    inv = 1.0 / tl.sum(acc, axis=0)
    _put(y_row, 0, n_cols, e0 * inv, TILE)
    if NT >= 2:
        _put(y_row, 1, n_cols, e1 * inv, TILE)
    if NT >= 3:
        _put(y_row, 2, n_cols, e2 * inv, TILE)
    if NT >= 4:
        _put(y_row, 3, n_cols, e3 * inv, TILE)


@triton.jit
def add_rms_fwd_tiles(x_ptr, r_ptr, w_ptr, y_ptr, s_ptr, n_cols, row_stride, eps, TILE: tl.constexpr,
                      NT: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row, r_row = x_ptr + row * row_stride, r_ptr + row * row_stride
    s_row, y_row = s_ptr + row * row_stride, y_ptr + row * row_stride
    s0 = (_tile(x_row, 0, n_cols, 0.0, TILE).to(tl.float32) + _tile(r_row, 0, n_cols, 0.0, TILE).to(tl.float32)
          ).to(s_ptr.dtype.element_ty).to(tl.float32)
    acc = s0 * s0
    if NT >= 2:
        s1 = (_tile(x_row, 1, n_cols, 0.0, TILE).to(tl.float32) + _tile(r_row, 1, n_cols, 0.0, TILE).to(tl.float32)
              ).to(s_ptr.dtype.element_ty).to(tl.float32)
        acc += s1 * s1
    if NT >= 3:
        s2 = (_tile(x_row, 2, n_cols, 0.0, TILE).to(tl.float32) + _tile(r_row, 2, n_cols, 0.0, TILE).to(tl.float32)
              ).to(s_ptr.dtype.element_ty).to(tl.float32)
        acc += s2 * s2
    if NT >= 4:
        s3 = (_tile(x_row, 3, n_cols, 0.0, TILE).to(tl.float32) + _tile(r_row, 3, n_cols, 0.0, TILE).to(tl.float32)
              ).to(s_ptr.dtype.element_ty).to(tl.float32)
        acc += s3 * s3
    rstd = tl.rsqrt(tl.sum(acc, axis=0) / n_cols + tl.cast(eps, tl.float32))
    _put(s_row, 0, n_cols, s0, TILE)
    _put(y_row, 0, n_cols, s0 * rstd * _tile(w_ptr, 0, n_cols, 0.0, TILE).to(tl.float32), TILE)
    if NT >= 2:
        _put(s_row, 1, n_cols, s1, TILE)
        _put(y_row, 1, n_cols, s1 * rstd * _tile(w_ptr, 1, n_cols, 0.0, TILE).to(tl.float32), TILE)
    if NT >= 3:
        _put(s_row, 2, n_cols, s2, TILE)
        _put(y_row, 2, n_cols, s2 * rstd * _tile(w_ptr, 2, n_cols, 0.0, TILE).to(tl.float32), TILE)
    if NT >= 4:
        _put(s_row, 3, n_cols, s3, TILE)
        _put(y_row, 3, n_cols, s3 * rstd * _tile(w_ptr, 3, n_cols, 0.0, TILE).to(tl.float32), TILE)


def equal_tiles(n_cols: int, tile: int) -> int:
    """How many tiles of ``tile`` lanes cover a row (at most 4 for these kernels)."""
    return -(-n_cols // tile)
