"""Tanh-gated GLU for a small MLP: y = tanh(x @ Wa) * (x @ Wb), fused, one row block per program.

Written the way it usually starts: libdevice's tanh, applied to `tl.dot` results inside the loop
over hidden chunks, where the kernel is compute-bound and the out-of-line call costs real time
(TRI001 fires). One tanh per loaded element, as in a plain elementwise GLU, would run at memory speed.
"""
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def tanh_glu_kernel(x_ptr, wa_ptr, wb_ptr, y_ptr, n_rows, d_in, d_hidden,
                    BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_H: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    ks = tl.arange(0, BLOCK_K)
    x = tl.load(x_ptr + rows[:, None] * d_in + ks[None, :], mask=(rows[:, None] < n_rows) & (ks[None, :] < d_in), other=0.0)
    for start in range(0, d_hidden, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        w_mask = (ks[:, None] < d_in) & (cols[None, :] < d_hidden)
        a = tl.dot(x, tl.load(wa_ptr + ks[:, None] * d_hidden + cols[None, :], mask=w_mask, other=0.0))
        b = tl.dot(x, tl.load(wb_ptr + ks[:, None] * d_hidden + cols[None, :], mask=w_mask, other=0.0))
        y = libdevice.tanh(a) * b
        y_mask = (rows[:, None] < n_rows) & (cols[None, :] < d_hidden)
        tl.store(y_ptr + rows[:, None] * d_hidden + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=y_mask)


def tanh_glu(x: torch.Tensor, wa: torch.Tensor, wb: torch.Tensor) -> torch.Tensor:
    """x: (rows, d_in) with d_in <= 128; wa, wb: (d_in, d_hidden). Returns tanh(x @ wa) * (x @ wb)."""
    assert x.is_contiguous() and wa.is_contiguous() and wb.is_contiguous() and wa.shape == wb.shape
    n_rows, d_in = x.shape
    d_hidden = wa.shape[1]
    block_k = max(16, triton.next_power_of_2(d_in))
    assert block_k <= 128
    y = torch.empty((n_rows, d_hidden), device=x.device, dtype=x.dtype)
    tanh_glu_kernel[(triton.cdiv(n_rows, 64),)](x, wa, wb, y, n_rows, d_in, d_hidden,
                                                 BLOCK_M=64, BLOCK_K=block_k, BLOCK_H=64)
    return y
