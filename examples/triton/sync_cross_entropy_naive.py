"""A first-draft cross-entropy forward: one program per token computes log-sum-exp over the
whole vocabulary row, the loss at the label, and adds it to a scalar mean-loss accumulator.

Tritonify:
- TRI009 fires on `tl.exp(logits)`: log-sum-exp without subtracting the row max overflows to
  inf (and the loss to nan) as soon as a logit passes ~88 in fp32.
- The one `tl.atomic_add(loss_sum_ptr, ...)` per program is not reported by the atomic rule: it is
  paid once per program (the sum order still changes run to run; store per-token losses and
  reduce them if the loss must be bit-reproducible).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _cross_entropy_fwd(logits_ptr, labels_ptr, loss_sum_ptr, lse_ptr, stride_row, vocab, inv_n_valid,
                       ignore_index, BLOCK_V: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    label = tl.load(labels_ptr + row)
    cols = tl.arange(0, BLOCK_V)
    logits = tl.load(logits_ptr + row * stride_row + cols, mask=cols < vocab, other=float("-inf")).to(tl.float32)
    sum_exp = tl.sum(tl.exp(logits), axis=0)
    lse = tl.log(sum_exp)
    tl.store(lse_ptr + row, lse)
    target = tl.sum(tl.where(cols == label, logits, 0.0), axis=0)
    loss = tl.where(label == ignore_index, 0.0, lse - target)
    tl.atomic_add(loss_sum_ptr, loss * inv_n_valid)


def cross_entropy(logits: torch.Tensor, labels: torch.Tensor, ignore_index: int = -100) -> torch.Tensor:
    """Mean cross-entropy over the tokens whose label is not ignore_index (vocab up to 32k)."""
    n, vocab = logits.shape
    n_valid = int((labels != ignore_index).sum().clamp(min=1))
    loss = torch.zeros((), dtype=torch.float32, device=logits.device)
    lse = torch.empty(n, dtype=torch.float32, device=logits.device)
    _cross_entropy_fwd[(n,)](logits, labels, loss, lse, logits.stride(0), vocab, 1.0 / n_valid, ignore_index,
                             BLOCK_V=triton.next_power_of_2(vocab))
    return loss
