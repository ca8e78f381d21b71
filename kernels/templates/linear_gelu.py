"""Fused linear + GELU: ``y = gelu_tanh(x @ weight.T + bias)`` with the GELU in the matmul's epilogue.

A tiled ``tl.dot`` matmul (grouped program order for L2 reuse, fp32 accumulation) whose epilogue adds
the bias and applies the tanh-approximated GELU before the single store, so the pre-activation never
goes to memory. tanh is written through the exact identity 0.5*(1 + tanh(u)) = sigmoid(2u), which needs
no libdevice (and runs under the CPU interpreter, where bf16 operands are upcast before the dot
because the interpreter's bf16 ``tl.dot`` is wrong in triton 3.9). fp32 inputs use IEEE fp32 products (no TF32), so
they match an fp32 reference. The backward recomputes the pre-activation with one matmul instead of
storing it (an activation-memory saving) and uses PyTorch matmuls for the three gradients.
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


def _matmul_config(bm, bn, bk, stages, warps):
    return triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}, num_stages=stages, num_warps=warps)


@triton.autotune(
    configs=_autotune_configs([
        _matmul_config(32, 32, 32, 1, 4) if _interpreting() else _matmul_config(128, 256, 64, 3, 8),
        _matmul_config(128, 128, 64, 4, 8),
        _matmul_config(128, 256, 64, 4, 8),
        _matmul_config(256, 128, 64, 3, 8),
        _matmul_config(256, 128, 64, 4, 8),
        _matmul_config(128, 128, 64, 5, 4),
        _matmul_config(128, 128, 32, 4, 4),
        _matmul_config(64, 256, 32, 4, 4),
        _matmul_config(128, 64, 32, 4, 4),
    ]),
    key=["M", "N", "K"],
)
@triton.heuristics({"EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0})
@triton.jit
def _linear_gelu_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, stride_xm, stride_xk, stride_wn, stride_wk,
                        stride_ym, stride_yn, HAS_BIAS: tl.constexpr, PRECISION: tl.constexpr, UPCAST: tl.constexpr,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                        EVEN_K: tl.constexpr):
    # grouped ordering: GROUP_M row-tiles share each column-tile of the weight while it is in L2
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    group_size = GROUP_M * num_n
    first_m = (pid // group_size) * GROUP_M
    group_m = min(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group_size) % group_m
    pid_n = (pid % group_size) // group_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    # the loads wrap rows and columns past the edge back into the matrix (never stored): no M/N masks
    # in the main loop, so every load is a full, vectorised one
    load_m = offs_m % M
    load_n = offs_n % N
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + load_m.to(tl.int64)[:, None] * stride_xm + offs_k[None, :] * stride_xk
    w_ptrs = w_ptr + load_n.to(tl.int64)[None, :] * stride_wn + offs_k[:, None] * stride_wk  # (BLOCK_K, BLOCK_N) of W.T
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(tl.cdiv(K, BLOCK_K)):
        if EVEN_K:
            x = tl.load(x_ptrs)
            w = tl.load(w_ptrs)
        else:
            k_left = K - k * BLOCK_K
            x = tl.load(x_ptrs, mask=offs_k[None, :] < k_left, other=0.0)
            w = tl.load(w_ptrs, mask=offs_k[:, None] < k_left, other=0.0)
        if UPCAST:  # the CPU interpreter's bf16 tl.dot returns garbage (triton 3.9); fp32 operands are exact there
            x = x.to(tl.float32)
            w = w.to(tl.float32)
        acc = tl.dot(x, w, acc, input_precision=PRECISION)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk

    # epilogue: bias, then gelu_tanh(z) = z * sigmoid(2 * sqrt(2/pi) * (z + 0.044715 z^3))
    if HAS_BIAS:
        acc += tl.load(b_ptr + load_n).to(tl.float32)[None, :]
    y = acc * tl.sigmoid(1.5957691216057308 * (acc + 0.044715 * acc * acc * acc))
    y_ptrs = y_ptr + offs_m.to(tl.int64)[:, None] * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, y.to(y_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


class _Launcher:
    """``kernel[grid](*args, **constexprs)`` without the per-call dispatch after the first call.

    The first call for a key goes through Triton (autotuning, compilation, heuristics); it records the
    compiled kernel and the values of every constexpr parameter it was launched with. Later calls with
    the same key launch that compiled kernel directly: no autotuner lookup, no argument binding. The
    key holds everything Triton specialises on (dtype, alignment and device of each tensor, the value
    of every scalar), so a call that would compile or tune differently never takes the short path.
    ``grid`` is a tuple, or a function of the constexprs and the chosen config. Under the interpreter
    every call goes through Triton."""

    def __init__(self, kernel):
        self.kernel, self.heuristics, self.cache = kernel, [], {}
        self.direct = not _interpreting() and hasattr(triton, "knobs") and not any(
            c.pre_hook for c in getattr(kernel, "configs", []))
        jit = kernel
        while self.direct and not isinstance(jit, triton.runtime.jit.JITFunction):
            if hasattr(jit, "values"):  # a triton.heuristics layer
                self.heuristics.append(jit.values)
            jit = getattr(jit, "fn", None)
            self.direct = jit is not None
        self.params = jit.params if self.direct else []
        self.stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)

    def __call__(self, grid, *args, **constexprs):
        if not self.direct:
            return self.kernel[grid](*args, **constexprs)
        key = (*constexprs.items(), *[(a.dtype, a.data_ptr() & 15, a.get_device()) if isinstance(a, torch.Tensor)
                                      else a for a in args])
        hit = self.cache.get(key)
        if hit is None:
            compiled = self.kernel[grid](*args, **constexprs)
            config = getattr(self.kernel, "best_config", None)
            meta = {**constexprs, **(config.all_kwargs() if config is not None else {})}
            named = {p.name: a for p, a in zip(self.params, args)}
            for values in reversed(self.heuristics):
                meta.update({name: rule({**named, **meta}) for name, rule in values.items()})
            tail = tuple(meta[p.name] if p.name in meta else p.default for p in self.params[len(args):])
            if len(self.cache) > 1024:
                self.cache.clear()
            self.cache[key] = (compiled, tail, meta)
            return compiled
        compiled, tail, meta = hit
        values = (*args, *tail)
        if callable(grid):
            grid = grid(meta)
        if self.stream is not None:
            stream = self.stream(torch._C._cuda_getDevice())
        else:
            stream = triton.runtime.driver.active.get_current_stream(triton.runtime.driver.active.get_current_device())
        hooks = triton.knobs.runtime
        enter = hooks.launch_enter_hook
        compiled.run(grid[0], grid[1] if len(grid) > 1 else 1, grid[2] if len(grid) > 2 else 1, stream,
                     compiled.function, compiled.packed_metadata,
                     compiled.launch_metadata(grid, stream, *values) if enter is not None else None,
                     enter, hooks.launch_exit_hook, *values)
        return compiled


_linear_gelu_launch = _Launcher(_linear_gelu_kernel)


def linear_gelu_forward(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    if x.shape[-1] != weight.shape[1]:
        raise ValueError(f"linear_gelu: x has {x.shape[-1]} features, weight expects {weight.shape[1]}")
    x2d = x.reshape(-1, x.shape[-1])
    M, K = x2d.shape
    N = weight.shape[0]
    y = torch.empty(M, N, dtype=x.dtype, device=x.device)
    if M and N:
        grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
        _linear_gelu_launch(grid, x2d, weight, bias if bias is not None else weight, y, M, N, K,
                                  x2d.stride(0), x2d.stride(1), weight.stride(0), weight.stride(1),
                                  y.stride(0), y.stride(1), HAS_BIAS=bias is not None,
                                  PRECISION="ieee" if x.dtype == torch.float32 else "tf32",
                                  UPCAST=x.device.type == "cpu" and x.dtype == torch.bfloat16)
    return y.reshape(*x.shape[:-1], N)


class LinearGELUFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight, bias)
        return linear_gelu_forward(x, weight, bias)

    @staticmethod
    def backward(ctx, dy):
        x, weight, bias = ctx.saved_tensors
        x2d = x.reshape(-1, x.shape[-1])
        with torch.enable_grad():  # recompute z, differentiate the GELU alone
            z = torch.nn.functional.linear(x2d, weight, bias).detach().requires_grad_()
            (dz,) = torch.autograd.grad(torch.nn.functional.gelu(z, approximate="tanh"), z, dy.reshape(z.shape))
        dx = (dz @ weight).reshape(x.shape) if ctx.needs_input_grad[0] else None
        dw = dz.t() @ x2d if ctx.needs_input_grad[1] else None
        db = dz.sum(0) if bias is not None and ctx.needs_input_grad[2] else None
        return dx, dw, db


def linear_gelu(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """``gelu(F.linear(x, weight, bias), approximate="tanh")`` in one kernel; weight is (out, in) as in nn.Linear."""
    if torch.compiler.is_compiling():  # one custom op: no graph break
        return _linear_gelu_fwd_op(x, weight, bias)
    if not (torch.is_grad_enabled() and (x.requires_grad or weight.requires_grad or (bias is not None and bias.requires_grad))):  # no autograd node: the Function's own ~13 us of host time are skipped
        return linear_gelu_forward(x, weight, bias)
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


def _linear_gelu_fwd(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    return linear_gelu_forward(x, weight, bias)


def _linear_gelu_grad(ctx, dy):
    """The GELU's derivative in PyTorch ops (torch.compile fuses them), then the two matmuls."""
    x, weight, bias = ctx.saved_tensors
    x2d = x.reshape(-1, x.shape[-1])
    z = torch.nn.functional.linear(x2d, weight, bias).float()
    inner = 0.7978845608028654 * (z + 0.044715 * z ** 3)
    t = torch.tanh(inner)
    dgelu = 0.5 * (1 + t) + 0.5 * z * (1 - t * t) * 0.7978845608028654 * (1 + 3 * 0.044715 * z * z)
    dz = (dy.reshape(z.shape).float() * dgelu).to(x.dtype)
    return (dz @ weight).reshape(x.shape), dz.t() @ x2d, dz.sum(0) if bias is not None else None


_linear_gelu_fwd_op = _custom_op(_linear_gelu_fwd, lambda x, weight, bias: x.new_empty(*x.shape[:-1], weight.shape[0]),
    grad=_linear_gelu_grad,
    setup=lambda ctx, inputs, output: ctx.save_for_backward(*inputs))


def linear_gelu_reference(x, weight, bias=None):
    """PyTorch eager: cuBLAS matmul, then the GELU."""
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
                    liger=None, flops=lambda s: 2 * s[0] * s[1] * s[2], target=0.8)


LINEAR_GELU_CONTRACT = _linear_gelu_contract()
