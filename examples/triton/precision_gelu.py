"""GELU forward and backward for a ViT MLP, element-wise in Triton.

The precision rules fire here:
- TRI013 (information): the forward uses exact erf-GELU; if the model tolerates the tanh
  approximation, the sigmoid form is cheaper. (ViT checkpoints were trained with exact GELU,
  so keeping erf here is a fair choice: that is why the rule is information only.)
- TRI022: a `tl.device_print` left in the backward from a debugging session.
"""
import torch
import triton
import triton.language as tl

INV_SQRT2 = tl.constexpr(0.7071067811865476)
INV_SQRT_2PI = tl.constexpr(0.3989422804014327)


@triton.jit
def gelu_fwd_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = 0.5 * x * (1.0 + tl.erf(x * INV_SQRT2))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def gelu_bwd_kernel(x_ptr, dy_ptr, dx_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    cdf = 0.5 * (1.0 + tl.erf(x * INV_SQRT2))
    pdf = tl.exp(-0.5 * x * x) * INV_SQRT_2PI
    dx = dy * (cdf + x * pdf)
    tl.device_print("dx", dx)
    tl.store(dx_ptr + offs, dx.to(dx_ptr.dtype.element_ty), mask=mask)


class GELU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        gelu_fwd_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        ctx.save_for_backward(x)
        return y

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        dy = dy.contiguous()
        dx = torch.empty_like(x)
        n = x.numel()
        gelu_bwd_kernel[(triton.cdiv(n, 1024),)](x, dy, dx, n, BLOCK=1024)
        return dx
