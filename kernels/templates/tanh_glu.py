"""Fused tanh-GLU, forward and backward: ``c = tanh(a) * b``, with the fast hardware tanh.

On a GPU with bf16/fp16 data, tanh is PTX ``tanh.approx.f32`` (one MUFU instruction, max abs error
about 1e-5: far below bf16/fp16 rounding). fp32 data, and the CPU interpreter (which has no PTX),
use the exact identity tanh(x) = 2*sigmoid(2x) - 1. libdevice's tanh is avoided: it is the slow
path on GPU and unavailable under the interpreter.
"""
import os

import torch
import triton
import triton.language as tl

TANH_GLU_HIDDEN = 14336
TANH_GLU_DTYPE = "bfloat16"


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


@triton.jit
def _tanh(x, FAST_TANH: tl.constexpr):
    if FAST_TANH:
        return tl.inline_asm_elementwise("tanh.approx.f32 $0, $1;", "=f,f", [x], dtype=tl.float32,
                                         is_pure=True, pack=1)
    else:
        return 2.0 * tl.sigmoid(2.0 * x) - 1.0


@triton.autotune(configs=_ELEMENTWISE_CONFIGS, key=["n_elements"])
@triton.jit
def _tanh_glu_fwd_kernel(a_ptr, b_ptr, c_ptr, n_elements, FAST_TANH: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    act = _tanh(a, FAST_TANH)
    tl.store(c_ptr + offsets, (act * b).to(c_ptr.dtype.element_ty), mask=mask)


@triton.autotune(configs=_ELEMENTWISE_CONFIGS, key=["n_elements"])
@triton.jit
def _tanh_glu_bwd_kernel(dc_ptr, a_ptr, b_ptr, da_ptr, db_ptr, n_elements, FAST_TANH: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    dc = tl.load(dc_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    act = _tanh(a, FAST_TANH)
    dact = 1.0 - act * act
    tl.store(da_ptr + offsets, (dc * b * dact).to(da_ptr.dtype.element_ty), mask=mask)
    tl.store(db_ptr + offsets, (dc * act).to(db_ptr.dtype.element_ty), mask=mask)


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


_tanh_glu_fwd_launch = _Launcher(_tanh_glu_fwd_kernel)
_tanh_glu_bwd_launch = _Launcher(_tanh_glu_bwd_kernel)


def _grid(n_elements: int):
    return lambda meta: (triton.cdiv(n_elements, meta["BLOCK"]),)


def _fast_tanh_ok(t: torch.Tensor) -> bool:
    """PTX tanh.approx only on an NVIDIA GPU, and only where the output rounding hides its error."""
    return t.is_cuda and torch.version.hip is None and not _interpreting() and t.dtype in (torch.bfloat16, torch.float16)


def tanh_glu_forward(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if a.shape != b.shape:
        raise ValueError(f"tanh_glu: gate {tuple(a.shape)} and up {tuple(b.shape)} differ")
    a, b = a.contiguous(), b.contiguous()
    c = torch.empty_like(a)
    if a.numel():
        _tanh_glu_fwd_launch(_grid(a.numel()), a, b, c, a.numel(), FAST_TANH=_fast_tanh_ok(a))
    return c


def tanh_glu_backward(dc: torch.Tensor, a: torch.Tensor, b: torch.Tensor):
    """(da, db) as new tensors: a and b are left intact (they may be needed elsewhere)."""
    dc = dc.contiguous()
    da, db = torch.empty_like(a), torch.empty_like(b)
    if a.numel():
        _tanh_glu_bwd_launch(_grid(a.numel()), dc, a, b, da, db, a.numel(), FAST_TANH=_fast_tanh_ok(a))
    return da, db


class TanhGLUFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        c = tanh_glu_forward(a, b)
        ctx.save_for_backward(a.contiguous(), b.contiguous())
        return c

    @staticmethod
    def backward(ctx, dc):
        a, b = ctx.saved_tensors
        return tanh_glu_backward(dc, a, b)


def tanh_glu(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """tanh(a) * b element-wise (a: gate projection, b: up projection), differentiable in both."""
    if torch.compiler.is_compiling():  # one custom op: no graph break
        return _tanh_glu_fwd_op(a, b)
    if not (torch.is_grad_enabled() and (a.requires_grad or b.requires_grad)):  # no autograd node: the Function's own ~13 us of host time are skipped
        return tanh_glu_forward(a, b)
    return TanhGLUFunction.apply(a, b)


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


def _tanh_glu_fwd(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return tanh_glu_forward(a, b)


def _tanh_glu_bwd(dc: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return tanh_glu_backward(dc, a.contiguous(), b.contiguous())


_tanh_glu_bwd_op = _custom_op(_tanh_glu_bwd, lambda dc, a, b: (torch.empty_like(a), torch.empty_like(b)))
_tanh_glu_fwd_op = _custom_op(_tanh_glu_fwd, lambda a, b: torch.empty_like(a),
    grad=lambda ctx, dc: _tanh_glu_bwd_op(dc, *ctx.saved_tensors),
    setup=lambda ctx, inputs, output: ctx.save_for_backward(*inputs))


def tanh_glu_reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """PyTorch eager: the activation in fp32 (fp64 for fp64 inputs), result in a's dtype."""
    af = a if a.dtype == torch.float64 else a.float()
    bf = b if b.dtype == torch.float64 else b.float()
    return (torch.tanh(af) * bf).to(a.dtype)


def tanh_glu_inputs(shape, dtype, device):
    return torch.randn(shape, dtype=dtype, device=device), torch.randn(shape, dtype=dtype, device=device)


def _tanh_glu_contract():
    """The benchmark contract (``tritonify bench THIS_FILE::tanh_glu``); None without tritonify."""
    try:
        from tritonify.kernels.bench import Contract
    except ImportError:
        return None
    return Contract(kernel="_tanh_glu_fwd_kernel", name="tanh_glu", entry=tanh_glu, inputs=tanh_glu_inputs,
                    reference=tanh_glu_reference, shapes=[(4096, TANH_GLU_HIDDEN), (16384, TANH_GLU_HIDDEN)],
                    dtype=TANH_GLU_DTYPE, liger=None, target=0.85)


TANH_GLU_CONTRACT = _tanh_glu_contract()
