"""A direct NCHW conv2d with a hand-written backward, as conv code often starts out (Tritonify example).

`tritonify check examples/triton/conv_nchw_backward.py` reports its autotune key (TRI040: the input
size without the stride, so the stride-1 and stride-2 layers of one input share a config) and its
input gradient (TRI042: the output gradient spread out with zeros and run through the forward GEMM).
`tritonify template conv2d` inserts the NHWC implicit-GEMM template that avoids both.
"""
import torch
import triton
import triton.language as tl

CONFIGS = [triton.Config({"BLOCK_P": 64, "BLOCK_CO": 32}, num_warps=4),
           triton.Config({"BLOCK_P": 128, "BLOCK_CO": 64}, num_warps=8)]


@triton.autotune(configs=CONFIGS, key=["batch", "C_in", "H", "W", "C_out"])
@triton.jit
def conv2d_nchw_kernel(x_ptr, w_ptr, y_ptr, batch, C_in, H, W, C_out, out_h, out_w,
                       stride_h, stride_w, pad_h, pad_w, R: tl.constexpr, S: tl.constexpr,
                       BLOCK_P: tl.constexpr, BLOCK_CO: tl.constexpr):
    """y[n, co, oy, ox] = sum_{ci, r, s} x[n, ci, oy*stride - pad + r, ox*stride - pad + s] * w[co, ci, r, s]."""
    pix = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)
    co = tl.program_id(1) * BLOCK_CO + tl.arange(0, BLOCK_CO)
    n = pix // (out_h * out_w)
    oy = (pix // out_w) % out_h
    ox = pix % out_w
    pix_ok = pix < batch * out_h * out_w
    co_ok = co < C_out
    acc = tl.zeros((BLOCK_P, BLOCK_CO), dtype=tl.float32)
    for ci in range(0, C_in):
        for r in range(R):
            for s in range(S):
                iy = oy * stride_h - pad_h + r
                ix = ox * stride_w - pad_w + s
                ok = pix_ok & (iy >= 0) & (iy < H) & (ix >= 0) & (ix < W)
                x = tl.load(x_ptr + ((n * C_in + ci) * H + iy) * W + ix, mask=ok, other=0.0)
                w = tl.load(w_ptr + ((co * C_in + ci) * R + r) * S + s, mask=co_ok, other=0.0)
                acc += x.to(tl.float32)[:, None] * w.to(tl.float32)[None, :]
    out = ((n[:, None] * C_out + co[None, :]) * out_h + oy[:, None]) * out_w + ox[:, None]
    tl.store(y_ptr + out, acc.to(y_ptr.dtype.element_ty), mask=pix_ok[:, None] & co_ok[None, :])


def conv2d_nchw(x, weight, stride, padding):
    batch, c_in, H, W = x.shape
    c_out, _, R, S = weight.shape
    out_h, out_w = (H + 2 * padding - R) // stride + 1, (W + 2 * padding - S) // stride + 1
    y = torch.empty(batch, c_out, out_h, out_w, device=x.device, dtype=x.dtype)
    grid = lambda meta: (triton.cdiv(batch * out_h * out_w, meta["BLOCK_P"]), triton.cdiv(c_out, meta["BLOCK_CO"]))  # noqa: E731
    conv2d_nchw_kernel[grid](x, weight, y, batch, c_in, H, W, c_out, out_h, out_w,
                             stride, stride, padding, padding, R=R, S=S)
    return y


def conv2d_nchw_input_grad(grad_out, weight, x_shape, stride, padding):
    """dx as the forward conv of the zero-spread gradient with the flipped, transposed weight."""
    batch, c_out, out_h, out_w = grad_out.shape
    R = weight.shape[2]
    spread = torch.zeros(batch, c_out, stride * (out_h - 1) + 1, stride * (out_w - 1) + 1,
                         device=grad_out.device, dtype=grad_out.dtype)
    spread[:, :, ::stride, ::stride] = grad_out
    flipped = weight.flip(2, 3).transpose(0, 1).contiguous()
    dx = torch.empty(x_shape, device=grad_out.device, dtype=grad_out.dtype)
    H, W = spread.shape[2], spread.shape[3]
    pad = R - 1 - padding
    grid = lambda meta: (triton.cdiv(batch * x_shape[2] * x_shape[3], meta["BLOCK_P"]), triton.cdiv(x_shape[1], meta["BLOCK_CO"]))  # noqa: E731
    conv2d_nchw_kernel[grid](spread, flipped, dx, batch, c_out, H, W, x_shape[1], x_shape[2], x_shape[3],
                             1, 1, pad, pad, R=R, S=R)
    return dx
