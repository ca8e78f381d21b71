"""A sparse MoE block in the Hugging Face style: the experts run in a Python loop.

`tritonify check --select TRI037 examples/pytorch/moe_block.py` points at the loop; "Insert template"
inside the class offers the fused MoE template (`tritonify template moe`).
"""
import torch
import torch.nn.functional as F
from torch import nn


class SparseMoeBlock(nn.Module):
    def __init__(self, hidden: int, intermediate: int, num_experts: int, top_k: int):
        super().__init__()
        self.num_experts, self.top_k = num_experts, top_k
        self.gate = nn.Linear(hidden, num_experts, bias=False)
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(hidden, intermediate, bias=False), nn.SiLU(),
                          nn.Linear(intermediate, hidden, bias=False))
            for _ in range(num_experts))

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        routing = F.softmax(self.gate(hidden_states), dim=-1, dtype=torch.float)
        weights, selected = torch.topk(routing, self.top_k, dim=-1)
        weights = (weights / weights.sum(-1, keepdim=True)).to(hidden_states.dtype)
        out = torch.zeros_like(hidden_states)
        expert_mask = F.one_hot(selected, num_classes=self.num_experts).permute(2, 1, 0)
        for expert_idx in range(self.num_experts):  # TRI037
            idx, top_x = torch.where(expert_mask[expert_idx])
            current = self.experts[expert_idx](hidden_states[top_x]) * weights[top_x, idx, None]
            out.index_add_(0, top_x, current)
        return out
