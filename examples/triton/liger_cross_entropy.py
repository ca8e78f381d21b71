"""Token-level cross-entropy over a large vocabulary, one program per token, online logsumexp.

TRI003 fires on `_ce_fwd`: a running max/rescaled sum over vocabulary blocks, the logit at the
label, and an ignore_index check are Liger-Kernel's cross-entropy (`LigerCrossEntropyLoss`,
`liger_cross_entropy`).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _ce_fwd(logits_ptr, logits_stride, labels_ptr, loss_ptr, lse_ptr, vocab, ignore_index,
            BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    logits_ptr += row * logits_stride
    label = tl.load(labels_ptr + row)
    if label == ignore_index:
        tl.store(loss_ptr + row, 0.0)
        return
    running_max = float("-inf")
    running_sum = 0.0
    for start in range(0, vocab, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(logits_ptr + cols, mask=cols < vocab, other=float("-inf")).to(tl.float32)
        new_max = tl.maximum(running_max, tl.max(x, axis=0))
        running_sum = running_sum * tl.exp(running_max - new_max) + tl.sum(tl.exp(x - new_max), axis=0)
        running_max = new_max
    lse = running_max + tl.log(running_sum)
    target_logit = tl.load(logits_ptr + label).to(tl.float32)
    tl.store(lse_ptr + row, lse)
    tl.store(loss_ptr + row, lse - target_logit)


def cross_entropy(logits: torch.Tensor, labels: torch.Tensor, ignore_index: int = -100) -> torch.Tensor:
    n, vocab = logits.shape
    loss = torch.empty(n, dtype=torch.float32, device=logits.device)
    lse = torch.empty(n, dtype=torch.float32, device=logits.device)
    _ce_fwd[(n,)](logits, logits.stride(0), labels, loss, lse, vocab, ignore_index, BLOCK=4096)
    valid = (labels != ignore_index).sum().clamp(min=1)
    return loss.sum() / valid
