"""Linear + GELU: ``y = gelu_tanh(x @ weight.T + bias)``, the matmul by cuBLAS, the GELU one Triton pass.

The matmul (with the bias in cuBLAS's epilogue) is ``torch.addmm``: on the H200 cuBLAS beat a Triton
``tl.dot`` matmul with the GELU in its epilogue (8192x4096x14336 bf16: 1,805 us against eager
``F.linear`` + ``F.gelu`` 1,583 us; Tritonify's H200 template measurements, 2026-12-01). The GELU is
then one element-wise Triton pass over the pre-activation ``z`` (in place when no gradient is wanted).
For training, ``z`` is kept (instead of recomputed with a second matmul, which cost the fused kernel
0.79x of torch.compile forward + backward) and the backward is one Triton pass
``dz = dy * gelu'(z)`` followed by cuBLAS matmuls for the input and weight gradients. tanh is written
through the exact identity 0.5*(1 + tanh(u)) = sigmoid(2u), which needs no libdevice (and runs under
the CPU interpreter). Math is fp32 in registers.
"""
import os

import torch
import triton
import triton.language as tl

LINEAR_GELU_IN_FEATURES = 4096
LINEAR_GELU_OUT_FEATURES = 14336
LINEAR_GELU_DTYPE = "bfloat16"


def _interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def _autotune_configs(configs):
    """Every config on a GPU; the first alone on the CPU interpreter, which cannot time a choice."""
    return configs[:1] if _interpreting() or not torch.cuda.is_available() else configs


_ELEMENTWISE_CONFIGS = _autotune_configs([
    triton.Config({"BLOCK": 4096}, num_warps=8),
    triton.Config({"BLOCK": 1024}, num_warps=4),
    triton.Config({"BLOCK": 2048}, num_warps=8),
    triton.Config({"BLOCK": 8192}, num_warps=16),
])


def _elementwise_grid(n_elements: int):
    return lambda meta: (-(-n_elements // meta["BLOCK"]),)


# the GELU may run in place (y is z): tuning runs it several times, so z is restored after each run
@triton.autotune(configs=_ELEMENTWISE_CONFIGS, key=["n_elements"], restore_value=["y_ptr"])
@triton.jit
def _linear_gelu_kernel(z_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):  # noqa: TRI003 (a template: the fused kernel chosen instead of Liger's op)
    """y = gelu_tanh(z) = z * sigmoid(2 * sqrt(2/pi) * (z + 0.044715 z^3)); y may be z itself."""
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    z = tl.load(z_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    y = z * tl.sigmoid(1.5957691216057308 * (z + 0.044715 * z * z * z))
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.autotune(configs=_ELEMENTWISE_CONFIGS, key=["n_elements"])
@triton.jit
def _linear_gelu_bwd_kernel(dy_ptr, z_ptr, dz_ptr, n_elements, BLOCK: tl.constexpr):
    """dz = dy * gelu_tanh'(z), with s = sigmoid(2u), u = sqrt(2/pi) (z + 0.044715 z^3):
    gelu = z s, so gelu' = s + z s (1 - s) 2 u'."""
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    dy = tl.load(dy_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    z = tl.load(z_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    s = tl.sigmoid(1.5957691216057308 * (z + 0.044715 * z * z * z))
    du = 1.5957691216057308 * (1.0 + 0.134145 * z * z)
    tl.store(dz_ptr + offsets, (dy * (s + z * s * (1.0 - s) * du)).to(dz_ptr.dtype.element_ty), mask=mask)


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


_linear_gelu_launch = _Launcher(_linear_gelu_kernel)
_linear_gelu_bwd_launch = _Launcher(_linear_gelu_bwd_kernel)


def _gelu_(z: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """y = gelu_tanh(z), element-wise over contiguous tensors of one shape (y may be z)."""
    n = z.numel()
    if n:
        key = (n, z.dtype, y.dtype, z.get_device(), z.data_ptr() & 15, y.data_ptr() & 15)
        _linear_gelu_launch(key, _elementwise_grid(n), z, y, n)
    return y


def linear_gelu_dz(dy: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """d loss / d z from the output gradient and the kept pre-activation (a new tensor)."""
    dy = dy.reshape(z.shape)
    dy = dy if dy.is_contiguous() else dy.contiguous()
    dz = torch.empty_like(z)
    n = z.numel()
    if n:
        key = (n, dy.dtype, z.dtype, z.get_device(), dy.data_ptr() & 15, z.data_ptr() & 15)
        _linear_gelu_bwd_launch(key, _elementwise_grid(n), dy, z, dz, n)
    return dz


def linear_gelu_forward(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, keep_z: bool = False):
    """(y, z): y = gelu_tanh(x @ weight.T + bias) in x's leading shape; z, the pre-activation as (M, N)
    rows, is kept for a backward when ``keep_z`` (otherwise the GELU overwrites it and z is None)."""
    if x.shape[-1] != weight.shape[1]:
        raise ValueError(f"linear_gelu: x has {x.shape[-1]} features, weight expects {weight.shape[1]}")
    x2d = x if x.dim() == 2 else x.reshape(-1, x.shape[-1])
    z = torch.addmm(bias, x2d, weight.t()) if bias is not None else torch.mm(x2d, weight.t())  # cuBLAS
    y = _gelu_(z, torch.empty_like(z) if keep_z else z)
    return (y if x.dim() == 2 else y.reshape(*x.shape[:-1], weight.shape[0])), (z if keep_z else None)


def linear_gelu_grads(dz: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, bias, needs=(True, True, True)):
    """(dx, dweight, dbias) from dz (M, N): two cuBLAS matmuls and a column sum."""
    x2d = x.reshape(-1, x.shape[-1])
    dx = (dz @ weight).reshape(x.shape) if needs[0] else None
    dw = dz.t() @ x2d if needs[1] else None
    db = dz.sum(0) if bias is not None and needs[2] else None
    return dx, dw, db


class LinearGELUFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        y, z = linear_gelu_forward(x, weight, bias, keep_z=True)
        ctx.save_for_backward(x, weight, bias, z)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, weight, bias, z = ctx.saved_tensors
        return linear_gelu_grads(linear_gelu_dz(dy, z), x, weight, bias, ctx.needs_input_grad)


def linear_gelu(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """``gelu(F.linear(x, weight, bias), approximate="tanh")``; weight is (out, in) as in nn.Linear."""
    if torch.compiler.is_compiling():  # one custom op: no graph break
        return _linear_gelu_fwd_op(x, weight, bias)[0]
    if not (torch.is_grad_enabled() and (x.requires_grad or weight.requires_grad or (bias is not None and bias.requires_grad))):
        # no gradient wanted: no autograd node (its ~13 us of host time), the GELU in place over z
        return linear_gelu_forward(x, weight, bias)[0]
    return LinearGELUFunction.apply(x, weight, bias)


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


def _linear_gelu_fwd(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    return linear_gelu_forward(x, weight, bias, keep_z=True)


def _linear_gelu_bwd(dy: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    return linear_gelu_dz(dy, z)


def _linear_gelu_grad(ctx, dy, dz_unused):
    x, weight, bias, z = ctx.saved_tensors
    return linear_gelu_grads(_linear_gelu_bwd_op(dy, z), x, weight, bias)


_linear_gelu_bwd_op = _custom_op(_linear_gelu_bwd, lambda dy, z: torch.empty_like(z))
_linear_gelu_fwd_op = _custom_op(
    _linear_gelu_fwd,
    lambda x, weight, bias: (x.new_empty(*x.shape[:-1], weight.shape[0]), x.new_empty(x.shape[:-1].numel(), weight.shape[0])),
    grad=_linear_gelu_grad,
    setup=lambda ctx, inputs, output: ctx.save_for_backward(*inputs, output[1]))


def linear_gelu_reference(x, weight, bias=None):
    """PyTorch eager: cuBLAS matmul, then the GELU (the same rounding of z to x's dtype as the template)."""
    return torch.nn.functional.gelu(torch.nn.functional.linear(x, weight, bias), approximate="tanh")


def linear_gelu_inputs(shape, dtype, device):
    M, K, N = shape
    x = torch.randn(M, K, dtype=dtype, device=device)
    weight = torch.randn(N, K, dtype=dtype, device=device) / K ** 0.5
    bias = 0.1 * torch.randn(N, dtype=dtype, device=device)
    return x, weight, bias


def _linear_gelu_contract():
    """The benchmark contract (``tritonify bench THIS_FILE::linear_gelu``); None without tritonify."""
    try:
        from tritonify.kernels.bench import Contract
    except ImportError:
        return None
    return Contract(kernel="_linear_gelu_kernel", name="linear_gelu", entry=linear_gelu, inputs=linear_gelu_inputs,
                    reference=linear_gelu_reference,
                    shapes=[(8192, LINEAR_GELU_IN_FEATURES, LINEAR_GELU_OUT_FEATURES)], dtype=LINEAR_GELU_DTYPE,
                    liger=None, flops=lambda s: 2 * s[0] * s[1] * s[2], target=0.95)


LINEAR_GELU_CONTRACT = _linear_gelu_contract()
