"""Supervised fine-tuning of a Llama checkpoint with a hand-written training loop.

TRI023 fires on `LlamaForCausalLM.from_pretrained`: nothing in this file applies Liger, so
the model runs Hugging Face's eager RMSNorm, SwiGLU, RoPE and a cross-entropy over the full
(tokens x 128k vocab) logits. `apply_liger_kernel_to_llama()` before loading swaps all four.
It also fires on the reward head's `nn.LayerNorm` (LigerLayerNorm, with eps written out).
"""
import torch
from torch import nn
from transformers import AutoTokenizer, LlamaForCausalLM


class RewardHead(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)
        self.score = nn.Linear(hidden, 1)

    def forward(self, h):
        return self.score(self.norm(h[:, -1]))


def main(path: str = "meta-llama/Llama-3.1-8B"):
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = LlamaForCausalLM.from_pretrained(path, torch_dtype=torch.bfloat16).cuda()
    model.gradient_checkpointing_enable()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    batch = tokenizer(["The capital of France is Paris."] * 4, return_tensors="pt").to("cuda")
    for _ in range(10):
        out = model(**batch, labels=batch["input_ids"])
        out.loss.backward()
        opt.step()
        opt.zero_grad()


if __name__ == "__main__":
    main()
