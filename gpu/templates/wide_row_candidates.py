"""Candidate row kernels for the wide-row sweep (``gpu/templates/sweep_wide.py``); not a template.

Each forward computes ``y = softmax(x)`` over a row with fp32 statistics (max, sum of exp), each
backward ``dx = y * (dy - sum(dy * y))`` with an fp32 sum, like the template. They differ in how a row
is held:

* ``tiles``: the row in up to three register tiles of power-of-two widths A >= B >= C that add up to
  at least n_cols (11008 -> 8192 + 2048 + 1024 = 11264 lanes, against 16384 for one power-of-two
  block): fewer registers per thread, so two programs fit on an SM and two rows are in flight.
* ``chunked``: the row streamed in CHUNK-wide pieces twice: an online max and sum of exp, then the
  row read again (from L1/L2) and written. Few registers, many programs per SM.

RMSNorm and add+RMSNorm forwards (``rms_fwd_tiles``, ``add_rms_fwd_tiles``) hold the row the same way.

``HINTS`` = 1 marks the loads of data read once ``evict_first`` and the stores streaming (``.cs``).
"""
import triton
import triton.language as tl

LOG2E = 1.4426950408889634


def tiles(n_cols: int) -> tuple[int, int, int]:
    """(A, B, C): powers of two (B, C may be 0), A >= B >= C, A + B + C >= n_cols, little padding."""
    a = 1 << (n_cols.bit_length() - 1)
    if a == n_cols:
        return a, 0, 0
    rest = n_cols - a
    b = 1 << (rest.bit_length() - 1)
    if b == rest:
        return a, b, 0
    rest -= b
    c = 1 << (rest - 1).bit_length()
    if c >= b:  # b + c would be a power of two at least as large: one tile of 2b
        return a, 2 * b, 0
    return a, b, c


@triton.jit
def _load_tile(ptr, start, n_cols, other, BLOCK: tl.constexpr, HINTS: tl.constexpr):
    offs = start + tl.arange(0, BLOCK)
    if HINTS:
        v = tl.load(ptr + offs, mask=offs < n_cols, other=other, eviction_policy="evict_first")
    else:
        v = tl.load(ptr + offs, mask=offs < n_cols, other=other)
    return v.to(tl.float32)


@triton.jit
def _store_tile(ptr, start, n_cols, v, BLOCK: tl.constexpr, HINTS: tl.constexpr):
    offs = start + tl.arange(0, BLOCK)
    if HINTS:
        tl.store(ptr + offs, v.to(ptr.dtype.element_ty), mask=offs < n_cols, cache_modifier=".cs")
    else:
        tl.store(ptr + offs, v.to(ptr.dtype.element_ty), mask=offs < n_cols)


@triton.jit
def softmax_fwd_tiles(x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride,
                      A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, HINTS: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row, y_row = x_ptr + row * x_row_stride, y_ptr + row * y_row_stride
    xa = _load_tile(x_row, 0, n_cols, float("-inf"), A, HINTS)
    m = tl.max(xa, axis=0)
    if B > 0:
        xb = _load_tile(x_row, A, n_cols, float("-inf"), B, HINTS)
        m = tl.maximum(m, tl.max(xb, axis=0))
    if C > 0:
        xc = _load_tile(x_row, A + B, n_cols, float("-inf"), C, HINTS)
        m = tl.maximum(m, tl.max(xc, axis=0))
    m2 = m * 1.4426950408889634  # exp(x - m) = exp2(x * log2(e) - m * log2(e)): one fused multiply-add
    ea = tl.exp2(xa * 1.4426950408889634 - m2)
    total = tl.sum(ea, axis=0)
    if B > 0:
        eb = tl.exp2(xb * 1.4426950408889634 - m2)
        total += tl.sum(eb, axis=0)
    if C > 0:
        ec = tl.exp2(xc * 1.4426950408889634 - m2)
        total += tl.sum(ec, axis=0)
    inv = 1.0 / total
    _store_tile(y_row, 0, n_cols, ea * inv, A, HINTS)
    if B > 0:
        _store_tile(y_row, A, n_cols, eb * inv, B, HINTS)
    if C > 0:
        _store_tile(y_row, A + B, n_cols, ec * inv, C, HINTS)


@triton.jit
def softmax_fwd_chunked(x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, CHUNK: tl.constexpr, HINTS: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row, y_row = x_ptr + row * x_row_stride, y_ptr + row * y_row_stride
    m2 = float("-inf")  # running max, times log2(e)
    total = 0.0
    for start in range(0, n_cols, CHUNK):
        offs = start + tl.arange(0, CHUNK)
        x2 = tl.load(x_row + offs, mask=offs < n_cols, other=float("-inf")).to(tl.float32) * 1.4426950408889634
        new_m2 = tl.maximum(m2, tl.max(x2, axis=0))
        total = total * tl.exp2(m2 - new_m2) + tl.sum(tl.exp2(x2 - new_m2), axis=0)
        m2 = new_m2
    inv = 1.0 / total
    for start in range(0, n_cols, CHUNK):
        offs = start + tl.arange(0, CHUNK)
        mask = offs < n_cols
        x = tl.load(x_row + offs, mask=mask, other=float("-inf"), cache_modifier=".ca").to(tl.float32)
        y = tl.exp2(x * 1.4426950408889634 - m2) * inv
        if HINTS:
            tl.store(y_row + offs, y.to(y_ptr.dtype.element_ty), mask=mask, cache_modifier=".cs")
        else:
            tl.store(y_row + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def softmax_bwd_tiles(dy_ptr, y_ptr, dx_ptr, n_cols, dy_row_stride, y_row_stride, dx_row_stride,
                      A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, HINTS: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    dy_row, y_row, dx_row = dy_ptr + row * dy_row_stride, y_ptr + row * y_row_stride, dx_ptr + row * dx_row_stride
    dya = _load_tile(dy_row, 0, n_cols, 0.0, A, HINTS)
    ya = _load_tile(y_row, 0, n_cols, 0.0, A, HINTS)
    dot = tl.sum(dya * ya, axis=0)
    if B > 0:
        dyb = _load_tile(dy_row, A, n_cols, 0.0, B, HINTS)
        yb = _load_tile(y_row, A, n_cols, 0.0, B, HINTS)
        dot += tl.sum(dyb * yb, axis=0)
    if C > 0:
        dyc = _load_tile(dy_row, A + B, n_cols, 0.0, C, HINTS)
        yc = _load_tile(y_row, A + B, n_cols, 0.0, C, HINTS)
        dot += tl.sum(dyc * yc, axis=0)
    _store_tile(dx_row, 0, n_cols, ya * (dya - dot), A, HINTS)
    if B > 0:
        _store_tile(dx_row, A, n_cols, yb * (dyb - dot), B, HINTS)
    if C > 0:
        _store_tile(dx_row, A + B, n_cols, yc * (dyc - dot), C, HINTS)


@triton.jit
def softmax_bwd_chunked(dy_ptr, y_ptr, dx_ptr, n_cols, dy_row_stride, y_row_stride, dx_row_stride,
                        CHUNK: tl.constexpr, HINTS: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    dy_row, y_row, dx_row = dy_ptr + row * dy_row_stride, y_ptr + row * y_row_stride, dx_ptr + row * dx_row_stride
    dot = 0.0
    for start in range(0, n_cols, CHUNK):
        offs = start + tl.arange(0, CHUNK)
        mask = offs < n_cols
        dy = tl.load(dy_row + offs, mask=mask, other=0.0).to(tl.float32)
        y = tl.load(y_row + offs, mask=mask, other=0.0).to(tl.float32)
        dot += tl.sum(dy * y, axis=0)
    for start in range(0, n_cols, CHUNK):
        offs = start + tl.arange(0, CHUNK)
        mask = offs < n_cols
        dy = tl.load(dy_row + offs, mask=mask, other=0.0, cache_modifier=".ca").to(tl.float32)
        y = tl.load(y_row + offs, mask=mask, other=0.0, cache_modifier=".ca").to(tl.float32)
        dx = y * (dy - dot)
        if HINTS:
            tl.store(dx_row + offs, dx.to(dx_ptr.dtype.element_ty), mask=mask, cache_modifier=".cs")
        else:
            tl.store(dx_row + offs, dx.to(dx_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _rms_tile_out(y_row, w_ptr, start, n_cols, v, rstd, BLOCK: tl.constexpr, HINTS: tl.constexpr):
    w = _load_tile(w_ptr, start, n_cols, 0.0, BLOCK, 0)  # the weight: read by every row, from L1/L2
    _store_tile(y_row, start, n_cols, v * rstd * w, BLOCK, HINTS)


@triton.jit
def rms_fwd_tiles(x_ptr, w_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, eps,
                  A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, HINTS: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row, y_row = x_ptr + row * x_row_stride, y_ptr + row * y_row_stride
    xa = _load_tile(x_row, 0, n_cols, 0.0, A, HINTS)
    ss = tl.sum(xa * xa, axis=0)
    if B > 0:
        xb = _load_tile(x_row, A, n_cols, 0.0, B, HINTS)
        ss += tl.sum(xb * xb, axis=0)
    if C > 0:
        xc = _load_tile(x_row, A + B, n_cols, 0.0, C, HINTS)
        ss += tl.sum(xc * xc, axis=0)
    rstd = tl.rsqrt(ss / n_cols + tl.cast(eps, tl.float32))
    _rms_tile_out(y_row, w_ptr, 0, n_cols, xa, rstd, A, HINTS)
    if B > 0:
        _rms_tile_out(y_row, w_ptr, A, n_cols, xb, rstd, B, HINTS)
    if C > 0:
        _rms_tile_out(y_row, w_ptr, A + B, n_cols, xc, rstd, C, HINTS)


@triton.jit
def _add_tile(x_row, r_row, s_row, start, n_cols, BLOCK: tl.constexpr, HINTS: tl.constexpr):
    """s = x + r rounded to the residual's dtype (stored), returned in fp32."""
    s = _load_tile(x_row, start, n_cols, 0.0, BLOCK, HINTS) + _load_tile(r_row, start, n_cols, 0.0, BLOCK, HINTS)
    s = s.to(s_row.dtype.element_ty)
    _store_tile(s_row, start, n_cols, s, BLOCK, HINTS)
    return s.to(tl.float32)


@triton.jit
def add_rms_fwd_tiles(x_ptr, r_ptr, w_ptr, y_ptr, s_ptr, n_cols, row_stride, eps,
                      A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, HINTS: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row, r_row = x_ptr + row * row_stride, r_ptr + row * row_stride
    y_row, s_row = y_ptr + row * row_stride, s_ptr + row * row_stride
    sa = _add_tile(x_row, r_row, s_row, 0, n_cols, A, HINTS)
    ss = tl.sum(sa * sa, axis=0)
    if B > 0:
        sb = _add_tile(x_row, r_row, s_row, A, n_cols, B, HINTS)
        ss += tl.sum(sb * sb, axis=0)
    if C > 0:
        sc = _add_tile(x_row, r_row, s_row, A + B, n_cols, C, HINTS)
        ss += tl.sum(sc * sc, axis=0)
    rstd = tl.rsqrt(ss / n_cols + tl.cast(eps, tl.float32))
    _rms_tile_out(y_row, w_ptr, 0, n_cols, sa, rstd, A, HINTS)
    if B > 0:
        _rms_tile_out(y_row, w_ptr, A, n_cols, sb, rstd, B, HINTS)
    if C > 0:
        _rms_tile_out(y_row, w_ptr, A + B, n_cols, sc, rstd, C, HINTS)
