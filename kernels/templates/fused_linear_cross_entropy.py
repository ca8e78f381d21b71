"""Chunked fused linear + cross-entropy: the lm_head matmul and the loss without (tokens, vocab) logits.

For a 128K vocabulary the logits of 8K tokens take 2 GiB in bf16 (4 GiB as fp32, again for their
gradient). Here the tokens are processed in chunks: each chunk's logits are computed by one matmul,
the cross-entropy kernel turns them into losses and, in place, into their gradient (online softmax,
label smoothing, ignore_index), and two more matmuls fold that gradient into d hidden and d weight
straight away. Peak memory is one chunk of logits; the backward only scales the stored gradients,
on the device, and skips even that when ``grad_output`` is 1 (``loss.backward()``).
"""
import math
import os

import torch
import triton
import triton.language as tl

FUSED_LINEAR_CROSS_ENTROPY_HIDDEN = 4096
FUSED_LINEAR_CROSS_ENTROPY_VOCAB = 128256
FUSED_LINEAR_CROSS_ENTROPY_DTYPE = "bfloat16"
FUSED_LINEAR_CROSS_ENTROPY_MIN_CHUNK = 1024


def _interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def _autotune_configs(configs):
    """Every config on a GPU; the first alone on the CPU interpreter, which cannot time a choice."""
    return configs[:1] if _interpreting() or not torch.cuda.is_available() else configs


def _prune_blocks(configs, named_args, **kwargs):
    """Keep blocks no wider than the vocabulary (rounded up to a power of two), at least one."""
    width = triton.next_power_of_2(named_args["n_cols"])
    kept = [c for c in configs if c.kwargs["BLOCK"] <= width]
    return kept or configs[:1]


@triton.autotune(
    configs=_autotune_configs([
        triton.Config({"BLOCK": 4096}, num_warps=8),
        triton.Config({"BLOCK": 8192}, num_warps=16),
        triton.Config({"BLOCK": 16384}, num_warps=16),
        triton.Config({"BLOCK": 32768}, num_warps=32),
    ]),
    key=["n_cols", "HAS_GRAD"],
    prune_configs_by={"early_config_prune": _prune_blocks},
    restore_value=["logits_ptr"],  # tuning runs the kernel several times; the gradient overwrites the logits
)
@triton.jit
def _fused_linear_cross_entropy_kernel(logits_ptr, logits_row_stride, target_ptr, loss_ptr, n_non_ignore_ptr, n_cols,  # noqa: TRI003 (a template: the fused kernel chosen instead of Liger's op)
                                 ignore_index, label_smoothing, MEAN: tl.constexpr, HAS_GRAD: tl.constexpr,
                                 BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    row_ptr = logits_ptr + row * logits_row_stride
    target = tl.load(target_ptr + row)
    cols = tl.arange(0, BLOCK)
    scale = 1.0
    if MEAN:
        scale = 1.0 / tl.load(n_non_ignore_ptr).to(tl.float32)
    if target == ignore_index:
        tl.store(loss_ptr + row, 0.0 * scale)  # 0, or NaN when every row is ignored (as PyTorch's mean)
        if HAS_GRAD:
            for start in range(0, n_cols, BLOCK):
                offs = start + cols
                tl.store(row_ptr + offs, tl.zeros([BLOCK], dtype=row_ptr.dtype.element_ty), mask=offs < n_cols)
        return
    smoothing = tl.cast(label_smoothing, tl.float32)
    target_logit = tl.load(row_ptr + target).to(tl.float32)
    if BLOCK >= n_cols:  # the whole row in registers: one read, one write
        mask = cols < n_cols
        x = tl.load(row_ptr + cols, mask=mask, other=float("-inf")).to(tl.float32)
        row_max = tl.max(x, axis=0)
        e = tl.exp2((x - row_max) * 1.4426950408889634)
        total = tl.sum(e, axis=0)
        lse = row_max + tl.log(total)
        sum_logits = tl.sum(tl.where(mask, x, 0.0), axis=0)
        loss = lse - (1.0 - smoothing) * target_logit - smoothing * sum_logits / n_cols
        tl.store(loss_ptr + row, loss * scale)
        if HAS_GRAD:
            grad = e / total - smoothing / n_cols
            grad = tl.where(cols == target, grad - (1.0 - smoothing), grad)
            tl.store(row_ptr + cols, (grad * scale).to(row_ptr.dtype.element_ty), mask=mask)
    else:
        running_max = float("-inf")
        running_sum = 0.0
        sum_logits = 0.0
        for start in range(0, n_cols, BLOCK):
            offs = start + cols
            mask = offs < n_cols
            x = tl.load(row_ptr + offs, mask=mask, other=float("-inf")).to(tl.float32)
            new_max = tl.maximum(running_max, tl.max(x, axis=0))
            # base 2: exp(x - m) = exp2(x*log2(e) - m*log2(e)), one fused multiply-add per element
            max_log2 = new_max * 1.4426950408889634
            running_sum = (running_sum * tl.exp2(running_max * 1.4426950408889634 - max_log2)
                           + tl.sum(tl.exp2(x * 1.4426950408889634 - max_log2), axis=0))
            running_max = new_max
            sum_logits += tl.sum(tl.where(mask, x, 0.0), axis=0)
        lse = running_max + tl.log(running_sum)
        loss = lse - (1.0 - smoothing) * target_logit - smoothing * sum_logits / n_cols
        tl.store(loss_ptr + row, loss * scale)
        if HAS_GRAD:  # the row again, from L2: softmax - s/V - (1-s)*onehot, over the chunk's logits
            lse_log2 = lse * 1.4426950408889634
            for start in range(0, n_cols, BLOCK):
                offs = start + cols
                mask = offs < n_cols
                x = tl.load(row_ptr + offs, mask=mask, other=float("-inf")).to(tl.float32)
                grad = tl.exp2(x * 1.4426950408889634 - lse_log2) - smoothing / n_cols
                grad = tl.where(offs == target, grad - (1.0 - smoothing), grad)
                tl.store(row_ptr + offs, (grad * scale).to(row_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _fused_linear_cross_entropy_scale_kernel(grad_ptr, n_elements, factor_ptr, BLOCK: tl.constexpr):
    """grad *= factor, in place; every program returns at once when factor is 1 (loss.backward())."""
    factor = tl.load(factor_ptr).to(tl.float32)
    if factor != 1.0:
        for start in range(tl.program_id(0).to(tl.int64) * BLOCK, n_elements, tl.num_programs(0) * BLOCK):
            offs = start + tl.arange(0, BLOCK)
            mask = offs < n_elements
            g = tl.load(grad_ptr + offs, mask=mask, other=0.0).to(tl.float32)
            tl.store(grad_ptr + offs, (g * factor).to(grad_ptr.dtype.element_ty), mask=mask)


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


_fused_linear_cross_entropy_launch = _Launcher(_fused_linear_cross_entropy_kernel)
_fused_linear_cross_entropy_scale_launch = _Launcher(_fused_linear_cross_entropy_scale_kernel)
_FUSED_LINEAR_CROSS_ENTROPY_SCALE_BLOCK = 4096


def fused_linear_cross_entropy_scale_(grad: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
    """``grad *= factor`` in place (contiguous ``grad``, one-element ``factor``): no host
    synchronisation, and no memory traffic when the factor is 1."""
    n = grad.numel()
    if n:
        programs = -(-n // _FUSED_LINEAR_CROSS_ENTROPY_SCALE_BLOCK)
        programs = min(programs, 528 if grad.is_cuda else 4)  # a persistent grid: 4 programs per SM on an H100/H200
        key = (n, grad.dtype, factor.dtype, grad.get_device(), grad.data_ptr() & 15, factor.data_ptr() & 15)
        _fused_linear_cross_entropy_scale_launch(key, (max(1, programs),), grad, n, factor,
                                                 BLOCK=_FUSED_LINEAR_CROSS_ENTROPY_SCALE_BLOCK)
    return grad


def _chunk_rows(n_rows: int, hidden: int, vocab: int) -> int:
    """Rows per chunk: a chunk's logits about as large as the hidden states (Liger's rule), a power of
    two, but at least FUSED_LINEAR_CROSS_ENTROPY_MIN_CHUNK rows: every chunk reads the whole weight
    twice and updates the whole weight gradient, so small chunks turn a matmul-bound loss into a
    memory-bound one (H200, 8192x4096x128256: 256-row chunks took 54 ms forward + backward, 1.13x
    torch.compile's time; a 1024-row chunk's logits take 256 MB in bf16)."""
    chunks = max(1, math.ceil(vocab / hidden))
    rows = max(triton.next_power_of_2(math.ceil(n_rows / chunks)), FUSED_LINEAR_CROSS_ENTROPY_MIN_CHUNK)
    return max(1, min(rows, n_rows))


def fused_linear_cross_entropy_forward(hidden, weight, target, bias, ignore_index, label_smoothing, reduction,
                                       need_h=True, need_w=True, need_b=True):
    """(loss, d hidden, d weight, d bias): the gradients of the loss, computed chunk by chunk (None where not wanted)."""
    if reduction not in ("mean", "sum"):
        raise ValueError(f"fused_linear_cross_entropy: reduction must be 'mean' or 'sum', got {reduction!r}")
    if hidden.dim() != 2 or weight.dim() != 2 or hidden.shape[1] != weight.shape[1]:
        raise ValueError(f"fused_linear_cross_entropy: want hidden (N, H) and weight (V, H), got "
                         f"{tuple(hidden.shape)} and {tuple(weight.shape)}")
    n_rows, n_hidden = hidden.shape
    vocab = weight.shape[0]
    target = target.contiguous()
    n_non_ignore = (target != ignore_index).sum()
    need_b = need_b and bias is not None
    with_grad = need_h or need_w or need_b
    grad_hidden = torch.empty_like(hidden) if need_h else None
    grad_weight = torch.zeros_like(weight) if need_w else None
    grad_bias = torch.zeros_like(bias) if need_b else None
    loss = torch.empty(n_rows, dtype=torch.float32, device=hidden.device)
    step = _chunk_rows(n_rows, n_hidden, vocab)
    for start in range(0, n_rows, step):
        end = min(start + step, n_rows)
        h = hidden[start:end]
        logits = h @ weight.t()
        if bias is not None:
            logits += bias
        rows, chunk_target, chunk_loss = end - start, target[start:end], loss[start:end]
        key = (rows, logits.stride(0), vocab, logits.dtype, target.dtype, logits.get_device(), logits.data_ptr() & 15,
               chunk_target.data_ptr() & 15, chunk_loss.data_ptr() & 15, ignore_index, label_smoothing, reduction,
               with_grad)
        _fused_linear_cross_entropy_launch(
            key, (rows,), logits, logits.stride(0), chunk_target, chunk_loss, n_non_ignore, vocab,
            ignore_index, float(label_smoothing), MEAN=reduction == "mean", HAS_GRAD=with_grad)
        # logits now hold d loss / d logits for this chunk
        if need_h:
            torch.mm(logits, weight, out=grad_hidden[start:end])
        if need_w:
            grad_weight.addmm_(logits.t(), h)
        if need_b:
            grad_bias += logits.sum(0)
    return loss.sum(), grad_hidden, grad_weight, grad_bias


class FusedLinearCrossEntropyFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, hidden, weight, target, bias, ignore_index, label_smoothing, reduction):
        need = ctx.needs_input_grad
        loss, *grads = fused_linear_cross_entropy_forward(hidden, weight, target, bias, ignore_index, label_smoothing,
                                                          reduction, need[0], need[1], need[3])
        ctx.save_for_backward(*grads)
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        # the gradients were computed in the forward: scale them (nothing to do for loss.backward())
        grads = [fused_linear_cross_entropy_scale_(g, grad_output) if g is not None else None for g in ctx.saved_tensors]
        return grads[0], grads[1], None, grads[2], None, None, None


def fused_linear_cross_entropy(hidden: torch.Tensor, weight: torch.Tensor, target: torch.Tensor,
                               bias: torch.Tensor | None = None, ignore_index: int = -100,
                               label_smoothing: float = 0.0, reduction: str = "mean") -> torch.Tensor:
    """``F.cross_entropy(hidden @ weight.T + bias, target)`` without materialising the logits.
    hidden (N, H), weight (V, H) as in ``nn.Linear``, target (N,)."""
    if torch.compiler.is_compiling():  # one custom op: no graph break
        return _fused_linear_cross_entropy_fwd_op(hidden, weight, target, bias, ignore_index, label_smoothing, reduction)[0]
    if not (torch.is_grad_enabled() and (hidden.requires_grad or weight.requires_grad or (bias is not None and bias.requires_grad))):  # no autograd node: the Function's own ~13 us of host time are skipped
        return fused_linear_cross_entropy_forward(hidden, weight, target, bias, ignore_index, label_smoothing, reduction,
                                                  False, False, False)[0]
    return FusedLinearCrossEntropyFunction.apply(hidden, weight, target, bias, ignore_index, label_smoothing, reduction)


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


def _fused_linear_cross_entropy_fwd(hidden: torch.Tensor, weight: torch.Tensor, target: torch.Tensor,
                                    bias: torch.Tensor | None, ignore_index: int, label_smoothing: float,
                                    reduction: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    loss, gh, gw, gb = fused_linear_cross_entropy_forward(hidden, weight, target, bias, ignore_index, label_smoothing,
                                                          reduction)
    return loss, gh, gw, gb if gb is not None else hidden.new_empty(0)


def _fused_linear_cross_entropy_grad(ctx, grad_loss, *unused):
    gh, gw, gb = (g * grad_loss.to(g.dtype) for g in ctx.saved_tensors)
    return gh, gw, None, gb if ctx.has_bias else None, None, None, None


def _fused_linear_cross_entropy_setup(ctx, inputs, output):
    ctx.has_bias = inputs[3] is not None
    ctx.save_for_backward(*output[1:])


_fused_linear_cross_entropy_fwd_op = _custom_op(
    _fused_linear_cross_entropy_fwd, lambda hidden, weight, target, bias, ignore_index, label_smoothing, reduction: (
        hidden.new_empty((), dtype=torch.float32), torch.empty_like(hidden), torch.empty_like(weight),
        torch.empty_like(bias) if bias is not None else hidden.new_empty(0)),
    grad=_fused_linear_cross_entropy_grad,
    setup=_fused_linear_cross_entropy_setup)


def fused_linear_cross_entropy_reference(hidden, weight, target, bias=None, ignore_index=-100,
                                         label_smoothing=0.0, reduction="mean"):
    """PyTorch eager: the matmul in the inputs' dtype, the loss in fp32 (fp64 for fp64 inputs)."""
    logits = torch.nn.functional.linear(hidden, weight, bias)
    logits = logits if logits.dtype == torch.float64 else logits.float()
    return torch.nn.functional.cross_entropy(logits, target, ignore_index=ignore_index,
                                             label_smoothing=label_smoothing, reduction=reduction)


def fused_linear_cross_entropy_inputs(shape, dtype, device):
    n_rows, n_hidden, vocab = shape
    hidden = torch.randn(n_rows, n_hidden, dtype=dtype, device=device)
    weight = torch.randn(vocab, n_hidden, dtype=dtype, device=device) / math.sqrt(n_hidden)
    target = torch.randint(0, vocab, (n_rows,), device=device)
    target[torch.rand(n_rows, device=device) < 0.1] = -100
    return hidden, weight, target


def _liger_fused_linear_cross_entropy(hidden, weight, target):
    from liger_kernel.transformers.functional import liger_fused_linear_cross_entropy

    out = liger_fused_linear_cross_entropy(hidden, weight, target)
    return out[0] if isinstance(out, tuple) else out


def _fused_linear_cross_entropy_contract():
    """The benchmark contract (``tritonify bench THIS_FILE::fused_linear_cross_entropy``); None without tritonify."""
    try:
        from tritonify.kernels.bench import Contract
    except ImportError:
        return None
    shape = (8192, FUSED_LINEAR_CROSS_ENTROPY_HIDDEN, FUSED_LINEAR_CROSS_ENTROPY_VOCAB)
    return Contract(kernel="_fused_linear_cross_entropy_kernel", name="fused_linear_cross_entropy",
                    entry=fused_linear_cross_entropy, inputs=fused_linear_cross_entropy_inputs,
                    reference=fused_linear_cross_entropy_reference, shapes=[shape],
                    dtype=FUSED_LINEAR_CROSS_ENTROPY_DTYPE, liger=_liger_fused_linear_cross_entropy,
                    flops=lambda s: 2 * s[0] * s[1] * s[2], atol=2e-2, rtol=1e-2, target=0.6)


FUSED_LINEAR_CROSS_ENTROPY_CONTRACT = _fused_linear_cross_entropy_contract()
