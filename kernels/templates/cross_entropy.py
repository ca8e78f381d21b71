"""Fused cross-entropy over a large vocabulary: online softmax, gradient written in place.

One program per row (token). Pass 1 streams the row in BLOCK-wide chunks keeping a running max, a
running sum of exp and the running sum of logits (for label smoothing): the logits are read once and
no (rows, vocab) probability tensor is ever allocated. When a gradient is wanted, pass 2 writes
``(softmax - smoothing/V - (1-smoothing)*onehot) / n_tokens`` over the logits themselves, so the
backward is a multiply by the incoming scalar. Rows whose target is ``ignore_index`` contribute
nothing and get a zero gradient; the mean divides by the number of non-ignored rows, read from device
memory (no host synchronisation).

Writing the gradient into the logits is the point (it saves a (rows, vocab) allocation): the logits
tensor holds the gradient after the forward, so do not read it afterwards.
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


@triton.autotune(
    configs=_autotune_configs([
        triton.Config({"BLOCK": 4096}, num_warps=8),
        triton.Config({"BLOCK": 8192}, num_warps=16),
        triton.Config({"BLOCK": 16384}, num_warps=16),
        triton.Config({"BLOCK": 32768}, num_warps=32),
        triton.Config({"BLOCK": 2048}, num_warps=4),
        triton.Config({"BLOCK": 4096}, num_warps=4),
        triton.Config({"BLOCK": 8192}, num_warps=8),
        triton.Config({"BLOCK": 4096}, num_warps=8, num_stages=4),
        triton.Config({"BLOCK": 8192}, num_warps=8, num_stages=2),
    ]),
    key=["n_cols", "HAS_GRAD"],
    prune_configs_by={"early_config_prune": _prune_blocks},
    restore_value=["logits_ptr"],  # tuning runs the kernel several times; the gradient overwrites the logits
)
@triton.jit
def _cross_entropy_kernel(logits_ptr, logits_row_stride, target_ptr, loss_ptr, n_non_ignore_ptr, n_cols,  # noqa: TRI003 (a template: the fused kernel chosen instead of Liger's op)
                          ignore_index, label_smoothing, MEAN: tl.constexpr, HAS_GRAD: tl.constexpr,
                          HAS_SMOOTHING: tl.constexpr, BLOCK: tl.constexpr):
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
    target_logit = tl.load(row_ptr + target).to(tl.float32)
    # (1-s) * (lse - x_t) + s * mean_j(lse - x_j)
    loss = lse - (1.0 - smoothing) * target_logit - smoothing * sum_logits / n_cols
    tl.store(loss_ptr + row, loss * scale)

    # pass 2: d loss / d x_j = softmax_j - s/V - (1-s)*[j == target], written over the logits
    if HAS_GRAD:
        for start in range(0, n_cols, BLOCK):
            offs = start + cols
            mask = offs < n_cols
            x = tl.load(row_ptr + offs, mask=mask, other=float("-inf")).to(tl.float32)
            grad = tl.exp(x - lse) - smoothing / n_cols
            grad = tl.where(offs == target, grad - (1.0 - smoothing), grad)
            tl.store(row_ptr + offs, (grad * scale).to(row_ptr.dtype.element_ty), mask=mask)


def cross_entropy_rows(logits: torch.Tensor, target: torch.Tensor, n_non_ignore: torch.Tensor, *,
                       ignore_index: int = -100, label_smoothing: float = 0.0, reduction: str = "mean",
                       with_grad: bool = True) -> torch.Tensor:
    """Per-row losses (already divided by the token count for "mean"); with ``with_grad`` the
    gradient of their sum replaces ``logits``. ``logits`` must be 2-D with unit column stride."""
    if logits.stride(-1) != 1:
        raise ValueError("cross_entropy: logits need a contiguous last dimension (the gradient is written in place)")
    n_rows, n_cols = logits.shape
    loss = torch.empty(n_rows, dtype=torch.float32, device=logits.device)
    if n_rows:
        _cross_entropy_kernel[(n_rows,)](logits, logits.stride(0), target, loss, n_non_ignore, n_cols,
                                         ignore_index, float(label_smoothing), MEAN=reduction == "mean",
                                         HAS_GRAD=with_grad, HAS_SMOOTHING=label_smoothing > 0)
    return loss


class CrossEntropyFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, target, ignore_index, label_smoothing, reduction):
        if reduction not in ("mean", "sum"):
            raise ValueError(f"cross_entropy: reduction must be 'mean' or 'sum', got {reduction!r}")
        if logits.dim() != 2 or target.shape != logits.shape[:1]:
            raise ValueError(f"cross_entropy: want logits (N, V) and target (N,), got {tuple(logits.shape)} "
                             f"and {tuple(target.shape)}")
        target = target.contiguous()
        n_non_ignore = (target != ignore_index).sum()  # stays on the device
        with_grad = ctx.needs_input_grad[0]
        loss = cross_entropy_rows(logits, target, n_non_ignore, ignore_index=ignore_index,
                                  label_smoothing=label_smoothing, reduction=reduction, with_grad=with_grad)
        if with_grad:
            ctx.save_for_backward(logits)  # now holds d loss / d logits
        return loss.sum()

    @staticmethod
    def backward(ctx, grad_output):
        (grad_logits,) = ctx.saved_tensors
        return grad_logits.mul_(grad_output.to(grad_logits.dtype)), None, None, None, None


def cross_entropy(logits: torch.Tensor, target: torch.Tensor, ignore_index: int = -100,
                  label_smoothing: float = 0.0, reduction: str = "mean") -> torch.Tensor:
    """Cross-entropy of (N, V) logits against (N,) class indices, as ``F.cross_entropy``. When the
    logits require grad, their storage is reused for the gradient (read nothing from them after)."""
    return CrossEntropyFunction.apply(logits, target, ignore_index, label_smoothing, reduction)


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
