"""Token counts per expert for a mixture-of-experts router (the histogram that sizes each
expert's slice before the grouped GEMM). Each program walks a contiguous chunk of tokens.

Tritonify:
- TRI008 fires on the `tl.atomic_add` inside the loop: every iteration adds into the same
  few expert counters that all other programs also hit. Count per program first (a local
  histogram, e.g. `tl.histogram(ids, NUM_EXPERTS)`) and add once per program.
- TRI012 fires: the kernel is autotuned, so each benchmark run adds the counts again.
- TRI011 fires: the tuned BLOCK_T tiles `n_tokens` (loop and mask), yet the key only names
  `n_experts`; the config tuned for the first batch size is reused for every other.
"""
import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_T": 256}, num_warps=4),
        triton.Config({"BLOCK_T": 1024}, num_warps=8),
    ],
    key=["n_experts"],
)
@triton.jit
def _expert_histogram(expert_ids_ptr, counts_ptr, n_tokens, n_experts,
                      TOKENS_PER_PROGRAM: tl.constexpr, BLOCK_T: tl.constexpr):
    pid = tl.program_id(0)
    start = pid * TOKENS_PER_PROGRAM
    for i in range(0, TOKENS_PER_PROGRAM, BLOCK_T):
        offs = start + i + tl.arange(0, BLOCK_T)
        valid = offs < n_tokens
        ids = tl.load(expert_ids_ptr + offs, mask=valid, other=0)
        tl.atomic_add(counts_ptr + ids, 1, mask=valid & (ids < n_experts))


def expert_counts(expert_ids: torch.Tensor, n_experts: int, tokens_per_program: int = 4096) -> torch.Tensor:
    counts = torch.zeros(n_experts, dtype=torch.int32, device=expert_ids.device)
    n_tokens = expert_ids.numel()
    grid = (triton.cdiv(n_tokens, tokens_per_program),)
    _expert_histogram[grid](expert_ids, counts, n_tokens, n_experts, TOKENS_PER_PROGRAM=tokens_per_program)
    return counts
