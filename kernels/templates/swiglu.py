"""Fused SwiGLU, forward and backward: ``c = silu(a) * b`` for the gated MLP of Llama-style models.

One read of the gate and up projections, one write of the product; the backward recomputes
silu from a (cheaper than storing it) and writes da and db in one pass. Math is fp32 in registers.
"""
import os

import torch
import triton
import triton.language as tl

SWIGLU_HIDDEN = 14336
SWIGLU_DTYPE = "bfloat16"


def _interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def _autotune_configs(configs):
    """Every config on a GPU; the first alone on the CPU interpreter, which cannot time a choice."""
    return configs[:1] if _interpreting() or not torch.cuda.is_available() else configs


_ELEMENTWISE_CONFIGS = _autotune_configs([
    triton.Config({"BLOCK": 1024}, num_warps=4),
    triton.Config({"BLOCK": 2048}, num_warps=8),
    triton.Config({"BLOCK": 4096}, num_warps=8),
    triton.Config({"BLOCK": 8192}, num_warps=16),
])


@triton.autotune(configs=_ELEMENTWISE_CONFIGS, key=["n_elements"])
@triton.jit
def _swiglu_fwd_kernel(a_ptr, b_ptr, c_ptr, n_elements, BLOCK: tl.constexpr):  # noqa: TRI003 (a template: the fused kernel chosen instead of Liger's op)
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    act = a * tl.sigmoid(a)
    tl.store(c_ptr + offsets, (act * b).to(c_ptr.dtype.element_ty), mask=mask)


@triton.autotune(configs=_ELEMENTWISE_CONFIGS, key=["n_elements"])
@triton.jit
def _swiglu_bwd_kernel(dc_ptr, a_ptr, b_ptr, da_ptr, db_ptr, n_elements, BLOCK: tl.constexpr):  # noqa: TRI003 (a template: the fused kernel chosen instead of Liger's op)
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    dc = tl.load(dc_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    sig = tl.sigmoid(a)
    act = a * sig
    dact = sig * (1.0 + a * (1.0 - sig))
    tl.store(da_ptr + offsets, (dc * b * dact).to(da_ptr.dtype.element_ty), mask=mask)
    tl.store(db_ptr + offsets, (dc * act).to(db_ptr.dtype.element_ty), mask=mask)


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


_swiglu_fwd_launch = _Launcher(_swiglu_fwd_kernel)
_swiglu_bwd_launch = _Launcher(_swiglu_bwd_kernel)


def _grid(n_elements: int):
    return lambda meta: (-(-n_elements // meta["BLOCK"]),)


def swiglu_forward(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if a.shape != b.shape:
        raise ValueError(f"swiglu: gate {tuple(a.shape)} and up {tuple(b.shape)} differ")
    a, b = a.contiguous(), b.contiguous()
    c = torch.empty_like(a)
    n = a.numel()
    if n:
        key = (n, a.dtype, b.dtype, a.get_device(), a.data_ptr() & 15, b.data_ptr() & 15)
        _swiglu_fwd_launch(key, _grid(n), a, b, c, n)
    return c


def swiglu_backward(dc: torch.Tensor, a: torch.Tensor, b: torch.Tensor):
    """(da, db) as new tensors: a and b are left intact (they may be needed elsewhere)."""
    dc = dc.contiguous()
    da, db = torch.empty_like(a), torch.empty_like(b)
    n = a.numel()
    if n:
        key = (n, dc.dtype, a.dtype, b.dtype, a.get_device(), dc.data_ptr() & 15, a.data_ptr() & 15, b.data_ptr() & 15)
        _swiglu_bwd_launch(key, _grid(n), dc, a, b, da, db, n)
    return da, db


class SwiGLUFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        c = swiglu_forward(a, b)
        ctx.save_for_backward(a.contiguous(), b.contiguous())
        return c

    @staticmethod
    def backward(ctx, dc):
        a, b = ctx.saved_tensors
        return swiglu_backward(dc, a, b)


def swiglu(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """silu(a) * b element-wise (a: gate projection, b: up projection), differentiable in both."""
    if torch.compiler.is_compiling():  # one custom op: no graph break
        return _swiglu_fwd_op(a, b)
    if not (torch.is_grad_enabled() and (a.requires_grad or b.requires_grad)):  # no autograd node: the Function's own ~13 us of host time are skipped
        return swiglu_forward(a, b)
    return SwiGLUFunction.apply(a, b)


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


def _swiglu_fwd(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return swiglu_forward(a, b)


def _swiglu_bwd(dc: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return swiglu_backward(dc, a.contiguous(), b.contiguous())


_swiglu_bwd_op = _custom_op(_swiglu_bwd, lambda dc, a, b: (torch.empty_like(a), torch.empty_like(b)))
_swiglu_fwd_op = _custom_op(_swiglu_fwd, lambda a, b: torch.empty_like(a),
    grad=lambda ctx, dc: _swiglu_bwd_op(dc, *ctx.saved_tensors),
    setup=lambda ctx, inputs, output: ctx.save_for_backward(*inputs))


def swiglu_reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """PyTorch eager: the activation in fp32 (fp64 for fp64 inputs), result in a's dtype."""
    af = a if a.dtype == torch.float64 else a.float()
    bf = b if b.dtype == torch.float64 else b.float()
    return (torch.nn.functional.silu(af) * bf).to(a.dtype)


def swiglu_inputs(shape, dtype, device):
    return torch.randn(shape, dtype=dtype, device=device), torch.randn(shape, dtype=dtype, device=device)


def _swiglu_contract():
    """The benchmark contract (``tritonify bench THIS_FILE::swiglu``); None without tritonify."""
    try:
        from tritonify.kernels.bench import Contract
    except ImportError:
        return None
    return Contract(kernel="_swiglu_fwd_kernel", name="swiglu", entry=swiglu, inputs=swiglu_inputs,
                    reference=swiglu_reference, shapes=[(4096, SWIGLU_HIDDEN), (16384, SWIGLU_HIDDEN)],
                    dtype=SWIGLU_DTYPE, liger="swiglu", target=0.85)


SWIGLU_CONTRACT = _swiglu_contract()
