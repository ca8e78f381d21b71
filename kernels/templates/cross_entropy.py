"""Fused cross-entropy for training: the gradient is computed in the forward pass.

One program per row (token). A training step needs the loss and d loss / d logits, and the gradient
needs the row's log-sum-exp, which the forward computes anyway: so the forward writes the gradient
``(softmax - smoothing/V - (1-smoothing)*onehot) / n_tokens`` straight away, while the row is still in
registers (vocabularies up to the widest block) or in L2 (wider rows are streamed twice: the second
read of a row follows the first within the same program, so it comes from L2, not DRAM). The
backward is then a scale by ``grad_output``, skipped on the device when it is 1.0 (``loss.backward()``),
so fwd + bwd moves about the logits once in and the gradient once out.

Where the gradient goes: over the logits (``inplace=True``, the default; Liger does the same; read
nothing from the logits afterwards), into a buffer you pass (``grad_buffer=``, e.g. reused across
steps), or into a new tensor (``inplace=False``). Rows whose target is ``ignore_index`` contribute
nothing and get a zero gradient; the mean divides by the number of non-ignored rows, read from device
memory (no host synchronisation).
"""
import os

import torch
import triton
import triton.language as tl

CROSS_ENTROPY_VOCAB = 128256
CROSS_ENTROPY_DTYPE = "bfloat16"


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


@triton.jit
def _cross_entropy_count(target_ptr, n_rows, ignore_index, BLOCK: tl.constexpr):
    """The number of rows whose target is not ignore_index (exact in fp32 below 2**24 rows)."""
    count = 0.0
    for start in range(0, n_rows, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        t = tl.load(target_ptr + offs, mask=offs < n_rows, other=ignore_index)
        count += tl.sum(tl.where(t != ignore_index, 1.0, 0.0), axis=0)
    return count


@triton.jit
def _cross_entropy_count_kernel(target_ptr, work_ptr, n_rows, ignore_index, BLOCK: tl.constexpr):
    """One program, before the row kernel of a mean over many rows: work[1] = the non-ignored rows."""
    tl.store(work_ptr + 1, _cross_entropy_count(target_ptr, n_rows, ignore_index, BLOCK))


@triton.autotune(
    configs=_autotune_configs([
        triton.Config({"BLOCK": 4096}, num_warps=8),
        triton.Config({"BLOCK": 8192}, num_warps=16),
        triton.Config({"BLOCK": 16384}, num_warps=16),
        triton.Config({"BLOCK": 32768}, num_warps=32),
        triton.Config({"BLOCK": 32768}, num_warps=16),
        triton.Config({"BLOCK": 2048}, num_warps=4),
        triton.Config({"BLOCK": 4096}, num_warps=4),
        triton.Config({"BLOCK": 8192}, num_warps=8),
        triton.Config({"BLOCK": 4096}, num_warps=8, num_stages=4),
        triton.Config({"BLOCK": 8192}, num_warps=8, num_stages=2),
    ]),
    key=["n_cols", "HAS_GRAD", "row_bucket"],
    prune_configs_by={"early_config_prune": _prune_blocks},
    restore_value=["logits_ptr", "grad_ptr"],  # tuning runs the kernel several times; the gradient may overwrite the logits
)
@triton.jit(do_not_specialize=["row_bucket"])
def _cross_entropy_kernel(logits_ptr, logits_row_stride, grad_ptr, grad_row_stride, target_ptr, work_ptr,  # noqa: TRI003 (a template: the fused kernel chosen instead of Liger's op)
                          done_ptr, n_rows, n_cols, ignore_index, label_smoothing, row_bucket, MEAN: tl.constexpr,
                          COUNT_INLINE: tl.constexpr, HAS_GRAD: tl.constexpr, HAS_SMOOTHING: tl.constexpr,
                          BLOCK: tl.constexpr):
    """One program per row: the row's loss into work[4 + row] (and its gradient); the last program to
    finish (``done_ptr``: a zero counter, reset by that program) sums the row losses, in row order,
    into work[0]: the loss, with no reduction op after. The mean's token count is work[1] (written by
    the count kernel), or, for a few rows (COUNT_INLINE), counted by each program from the targets."""
    row = tl.program_id(0).to(tl.int64)
    row_ptr = logits_ptr + row * logits_row_stride
    grad_row_ptr = grad_ptr + row * grad_row_stride
    target = tl.load(target_ptr + row)
    cols = tl.arange(0, BLOCK)
    scale = 1.0
    if MEAN:
        if COUNT_INLINE:
            scale = 1.0 / _cross_entropy_count(target_ptr, n_rows, ignore_index, 1024)
        else:
            scale = 1.0 / tl.load(work_ptr + 1)
    if target == ignore_index:
        tl.store(work_ptr + 4 + row, 0.0 * scale)  # 0, or NaN when every row is ignored (as PyTorch's mean)
        if HAS_GRAD:
            for start in range(0, n_cols, BLOCK):
                offs = start + cols
                tl.store(grad_row_ptr + offs, tl.zeros([BLOCK], dtype=grad_ptr.dtype.element_ty), mask=offs < n_cols)
    else:
        smoothing = tl.cast(label_smoothing, tl.float32)
        target_logit = tl.load(row_ptr + target).to(tl.float32)
        if BLOCK >= n_cols:
            # the whole row in registers: one read, one write
            mask = cols < n_cols
            x = tl.load(row_ptr + cols, mask=mask, other=float("-inf")).to(tl.float32)
            row_max = tl.max(x, axis=0)
            e = tl.exp2((x - row_max) * 1.4426950408889634)
            total = tl.sum(e, axis=0)
            lse = row_max + tl.log(total)
            sum_logits = 0.0
            if HAS_SMOOTHING:
                sum_logits = tl.sum(tl.where(mask, x, 0.0), axis=0)
            loss = lse - (1.0 - smoothing) * target_logit - smoothing * sum_logits / n_cols
            tl.store(work_ptr + 4 + row, loss * scale)
            if HAS_GRAD:
                grad = e / total - smoothing / n_cols
                grad = tl.where(cols == target, grad - (1.0 - smoothing), grad)
                tl.store(grad_row_ptr + cols, (grad * scale).to(grad_ptr.dtype.element_ty), mask=mask)
        else:
            # pass 1: online max / sum(exp) / sum(x)
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
                if HAS_SMOOTHING:  # the sum of logits only matters with label smoothing: skip its select and add
                    sum_logits += tl.sum(tl.where(mask, x, 0.0), axis=0)
            lse = running_max + tl.log(running_sum)
            # (1-s) * (lse - x_t) + s * mean_j(lse - x_j)
            loss = lse - (1.0 - smoothing) * target_logit - smoothing * sum_logits / n_cols
            tl.store(work_ptr + 4 + row, loss * scale)
            # pass 2 (the row again, now from L2): d loss / d x_j = softmax_j - s/V - (1-s)*[j == target]
            if HAS_GRAD:
                lse_log2 = lse * 1.4426950408889634
                for start in range(0, n_cols, BLOCK):
                    offs = start + cols
                    mask = offs < n_cols
                    x = tl.load(row_ptr + offs, mask=mask, other=float("-inf")).to(tl.float32)
                    grad = tl.exp2(x * 1.4426950408889634 - lse_log2) - smoothing / n_cols
                    grad = tl.where(offs == target, grad - (1.0 - smoothing), grad)
                    tl.store(grad_row_ptr + offs, (grad * scale).to(grad_ptr.dtype.element_ty), mask=mask)
    # the row losses are in memory before this program counts itself done (release); the last one to
    # arrive reads them all (acquire, past L1) and writes their sum
    tl.debug_barrier()
    done = tl.atomic_add(done_ptr, 1.0, sem="acq_rel")
    if done == tl.cast(n_rows - 1, tl.float32):
        total = tl.zeros([1024], dtype=tl.float32)
        for start in range(0, n_rows, 1024):
            offs = start + tl.arange(0, 1024)
            total += tl.load(work_ptr + 4 + offs, mask=offs < n_rows, other=0.0, cache_modifier=".cg")
        tl.store(work_ptr, tl.sum(total, axis=0))
        tl.atomic_add(done_ptr, -tl.cast(n_rows, tl.float32))  # zero again (exact) for the next call on this stream


@triton.jit
def _cross_entropy_scale_kernel(grad_ptr, n_elements, factor_ptr, BLOCK: tl.constexpr):
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


_cross_entropy_launch = _Launcher(_cross_entropy_kernel)
_cross_entropy_count_launch = _Launcher(_cross_entropy_count_kernel)
_cross_entropy_scale_launch = _Launcher(_cross_entropy_scale_kernel)
_CROSS_ENTROPY_SCALE_BLOCK = 4096


def _cross_entropy_programs(n_elements: int, device: torch.device) -> int:
    """A persistent grid for the scale: a few programs per SM (they exit at once for a factor of 1)."""
    programs = -(-n_elements // _CROSS_ENTROPY_SCALE_BLOCK)
    return max(1, min(programs, 4 * _cross_entropy_sm_count(device) if device.type == "cuda" else 4))


_cross_entropy_sms = {}


def _cross_entropy_sm_count(device: torch.device) -> int:
    index = device.index if device.index is not None else torch.cuda.current_device()
    if index not in _cross_entropy_sms:
        _cross_entropy_sms[index] = torch.cuda.get_device_properties(index).multi_processor_count
    return _cross_entropy_sms[index]


def _cross_entropy_row_bucket(n_rows: int) -> int:
    """The autotuner's view of the row count: decode (a few rows), mid, training. Tuned once per
    bucket, so a config chosen for 4 rows is never reused for 16384 (nor tuned again per row count)."""
    return 0 if n_rows <= 64 else 1 if n_rows <= 2048 else 2


def cross_entropy_scale_(grad: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
    """``grad *= factor`` in place (``grad`` contiguous, ``factor`` a one-element tensor), with no
    host synchronisation and no memory traffic when the factor is 1."""
    n = grad.numel()
    if n:
        key = (n, grad.dtype, factor.dtype, grad.get_device(), grad.data_ptr() & 15, factor.data_ptr() & 15)
        _cross_entropy_scale_launch(key, (_cross_entropy_programs(n, grad.device),), grad, n, factor,
                                    BLOCK=_CROSS_ENTROPY_SCALE_BLOCK)
    return grad


_CROSS_ENTROPY_INLINE_COUNT_ROWS = 2048  # up to here each program counts the targets itself (no count launch)
_cross_entropy_done = {}


def _cross_entropy_done_counter(logits: torch.Tensor, device: int) -> torch.Tensor:
    """A zero fp32 counter per device and stream: the row kernel's last program resets it, so it is
    zero between calls; calls on one stream run one after the other, other streams get their own."""
    stream = torch._C._cuda_getCurrentRawStream(device) if device >= 0 else 0
    counter = _cross_entropy_done.get((device, stream))
    if counter is None:
        counter = _cross_entropy_done[(device, stream)] = torch.zeros(1, dtype=torch.float32, device=logits.device)
    return counter


def cross_entropy_loss(logits, target, ignore_index, label_smoothing, reduction, grad):
    """The loss (a 0-d fp32 tensor); with ``grad`` (``logits`` itself, or a buffer of its shape)
    d loss / d logits is written there in the same pass. One launch and one allocation for up to
    2048 rows (a second launch counts the tokens of a mean over more): the token count and the sum of
    the row losses are done by the kernels, with no ATen op and no host synchronisation."""
    mean = reduction == "mean"
    if not mean and reduction != "sum":
        raise ValueError(f"cross_entropy: reduction must be 'mean' or 'sum', got {reduction!r}")
    if logits.dim() != 2 or target.dim() != 1 or target.shape[0] != logits.shape[0]:
        raise ValueError(f"cross_entropy: want logits (N, V) and target (N,), got {tuple(logits.shape)} "
                         f"and {tuple(target.shape)}")
    n_rows, n_cols = logits.shape
    out = grad if grad is not None else logits
    row_stride, col_stride = logits.stride()
    out_stride = out.stride()
    if col_stride != 1 or out_stride[1] != 1:
        raise ValueError("cross_entropy: logits and gradient need a contiguous last dimension")
    if n_rows >= 1 << 24:
        raise ValueError(f"cross_entropy: {n_rows} rows; at most 2**24 - 1 (the counts are exact fp32)")
    target = target if target.is_contiguous() else target.contiguous()
    # work: [the loss, the token count, -, -, the row losses ...]
    work = torch.empty(n_rows + 4, dtype=torch.float32, device=logits.device)
    if not n_rows:  # nothing to sum: PyTorch's mean of no rows is NaN, the sum 0
        work[0] = float("nan") if mean else 0.0
        return work[0]
    device = logits.get_device()
    inline = n_rows <= _CROSS_ENTROPY_INLINE_COUNT_ROWS
    key = (n_rows, n_cols, row_stride, out_stride[0], logits.dtype, out.dtype, target.dtype, device,
           logits.data_ptr() & 15, out.data_ptr() & 15, target.data_ptr() & 15, ignore_index, label_smoothing, mean,
           grad is not None)
    if mean and not inline:
        _cross_entropy_count_launch(key, (1,), target, work, n_rows, ignore_index, BLOCK=1024, num_warps=4)
    _cross_entropy_launch(key, (n_rows,), logits, row_stride, out, out_stride[0], target, work,
                          _cross_entropy_done_counter(logits, device), n_rows, n_cols, ignore_index,
                          float(label_smoothing), _cross_entropy_row_bucket(n_rows),
                          MEAN=mean, COUNT_INLINE=inline, HAS_GRAD=grad is not None, HAS_SMOOTHING=label_smoothing > 0)
    return work[0]


class CrossEntropyFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, target, ignore_index, label_smoothing, reduction, inplace, grad_buffer):
        grad = None
        if ctx.needs_input_grad[0]:
            if grad_buffer is not None:
                if grad_buffer.shape != logits.shape or grad_buffer.dtype != logits.dtype:
                    raise ValueError(f"cross_entropy: grad_buffer must be {tuple(logits.shape)} {logits.dtype}, got "
                                     f"{tuple(grad_buffer.shape)} {grad_buffer.dtype}")
                grad = grad_buffer
            else:
                grad = logits if inplace else torch.empty_like(logits)
        loss = cross_entropy_loss(logits, target, ignore_index, label_smoothing, reduction, grad)
        if grad is not None:
            # d loss / d logits, computed here. Saved as a detached alias (a tensor object of its own, not
            # the logits' own), so that for leaf logits autograd's gradient accumulation takes it over as
            # .grad instead of copying it into a new logits-sized tensor (the logits themselves are held by
            # the caller, so returning them would force that copy)
            ctx.save_for_backward(grad.detach())
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        (grad,) = ctx.saved_tensors
        return cross_entropy_scale_(grad, grad_output), None, None, None, None, None, None


def cross_entropy(logits: torch.Tensor, target: torch.Tensor, ignore_index: int = -100,
                  label_smoothing: float = 0.0, reduction: str = "mean", inplace: bool = True,
                  grad_buffer: torch.Tensor | None = None) -> torch.Tensor:
    """Cross-entropy of (N, V) logits against (N,) class indices, as ``F.cross_entropy``. When the
    logits require grad, the gradient is computed in this call and stored over the logits
    (``inplace``: read nothing from them after), in ``grad_buffer``, or in a new tensor."""
    if torch.compiler.is_compiling():  # one custom op: no graph break
        return _cross_entropy_fwd_op(logits, target, ignore_index, label_smoothing, reduction, logits.requires_grad)[0]
    if not (torch.is_grad_enabled() and logits.requires_grad):  # no autograd node: the Function's own ~13 us of host time are skipped
        return cross_entropy_loss(logits, target, ignore_index, label_smoothing, reduction, None)
    return CrossEntropyFunction.apply(logits, target, ignore_index, label_smoothing, reduction, inplace, grad_buffer)


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


def _cross_entropy_fwd(logits: torch.Tensor, target: torch.Tensor, ignore_index: int, label_smoothing: float,
                       reduction: str, with_grad: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """(loss, gradient): under torch.compile the gradient goes to a new tensor (a compiled graph may
    still read the logits, so they are not overwritten)."""
    grad = torch.empty_like(logits) if with_grad else logits.new_empty(0)
    return cross_entropy_loss(logits, target, ignore_index, label_smoothing, reduction, grad if with_grad else None), grad


def _cross_entropy_fwd_fake(logits, target, ignore_index, label_smoothing, reduction, with_grad):
    return logits.new_empty((), dtype=torch.float32), torch.empty_like(logits) if with_grad else logits.new_empty(0)


def _cross_entropy_grad(ctx, grad_loss, unused):
    (grad,) = ctx.saved_tensors
    return grad * grad_loss.to(grad.dtype), None, None, None, None, None


_cross_entropy_fwd_op = _custom_op(_cross_entropy_fwd, _cross_entropy_fwd_fake, grad=_cross_entropy_grad,
                                   setup=lambda ctx, inputs, output: ctx.save_for_backward(output[1]))


def cross_entropy_reference(logits, target, ignore_index=-100, label_smoothing=0.0, reduction="mean"):
    """PyTorch eager, in fp32 (fp64 for fp64 inputs)."""
    x = logits if logits.dtype == torch.float64 else logits.float()
    return torch.nn.functional.cross_entropy(x, target, ignore_index=ignore_index,
                                             label_smoothing=label_smoothing, reduction=reduction)


def cross_entropy_inputs(shape, dtype, device):
    n_rows, vocab = shape
    logits = torch.randn(shape, dtype=dtype, device=device)
    target = torch.randint(0, vocab, (n_rows,), device=device)
    target[torch.rand(n_rows, device=device) < 0.1] = -100  # some padding tokens
    return logits, target


def _cross_entropy_contract():
    """The benchmark contract (``tritonify bench THIS_FILE::cross_entropy``); None without tritonify."""
    try:
        from tritonify.kernels.bench import Contract
    except ImportError:
        return None
    return Contract(kernel="_cross_entropy_kernel", name="cross_entropy", entry=cross_entropy,
                    inputs=cross_entropy_inputs, reference=cross_entropy_reference,
                    shapes=[(4096, CROSS_ENTROPY_VOCAB), (8192, CROSS_ENTROPY_VOCAB)],
                    dtype=CROSS_ENTROPY_DTYPE, liger="cross_entropy", target=0.85,
                    # our loss is fp32; Liger returns it in the logits' dtype (bf16 rounds ~11.8 by up to 0.03),
                    # and a baseline that fails the check is not timed
                    atol=1e-3, rtol=4e-3)


CROSS_ENTROPY_CONTRACT = _cross_entropy_contract()
