"""An MoE router as a Triton kernel: softmax over the experts, then top-k by repeated argmax.

`tritonify check --select TRI036 examples/triton/moe_router_topk.py` reports the mask: the chosen
expert's probability is overwritten with 0.0, which ties with every probability that underflowed to
0.0 (a confident router over many experts), so argmax can choose the same expert twice.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def router_topk_kernel(logits_ptr, weights_ptr, ids_ptr, n_experts, stride, TOP_K: tl.constexpr,
                       BLOCK_E: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_E)
    valid = cols < n_experts
    x = tl.load(logits_ptr + row * stride + cols, mask=valid, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    probs = e / tl.sum(e, axis=0)
    for k in tl.static_range(TOP_K):
        best = tl.argmax(probs, axis=0)
        tl.store(weights_ptr + row * TOP_K + k, tl.max(probs, axis=0))
        tl.store(ids_ptr + row * TOP_K + k, best)
        probs = tl.where(cols == best, 0.0, probs)  # TRI036: mask with float("-inf")


def router_topk(logits: torch.Tensor, top_k: int):
    n_tokens, n_experts = logits.shape
    weights = torch.empty(n_tokens, top_k, device=logits.device)
    ids = torch.empty(n_tokens, top_k, dtype=torch.int32, device=logits.device)
    router_topk_kernel[(n_tokens,)](logits, weights, ids, n_experts, logits.stride(0), TOP_K=top_k,
                                    BLOCK_E=triton.next_power_of_2(n_experts))
    return weights, ids
