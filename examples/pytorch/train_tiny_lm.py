"""A small decoder-only language model trained from scratch with plain PyTorch modules.

TRI023 fires on each `nn.RMSNorm` module (Liger's LigerRMSNorm replaces them) and on the loss,
a cross-entropy of the `lm_head` projection (Liger's fused linear cross-entropy never
materialises the tokens x vocab logits).
"""
import torch
import torch.nn.functional as F
from torch import nn


class Block(nn.Module):
    def __init__(self, dim: int, heads: int, hidden: int):
        super().__init__()
        self.attn_norm = nn.RMSNorm(dim, eps=1e-6)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.mlp_norm = nn.RMSNorm(dim, eps=1e-6)
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x, mask):
        h = self.attn_norm(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        h = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class TinyLM(nn.Module):
    def __init__(self, vocab: int = 32000, dim: int = 512, layers: int = 4, heads: int = 8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(Block(dim, heads, 4 * dim) for _ in range(layers))
        self.norm = nn.RMSNorm(dim, eps=1e-6)
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens, labels=None):
        T = tokens.shape[1]
        mask = torch.triu(torch.full((T, T), float("-inf"), device=tokens.device), diagonal=1)
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x, mask)
        hidden = self.norm(x)
        logits = self.lm_head(hidden)
        if labels is None:
            return logits
        loss = F.cross_entropy(
            logits[:, :-1, :].reshape(-1, logits.size(-1)),
            labels[:, 1:].reshape(-1),
            ignore_index=-100,
        )
        return logits, loss


def train(steps: int = 100, device: str = "cuda"):
    model = TinyLM().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for _ in range(steps):
        tokens = torch.randint(0, 32000, (8, 256), device=device)
        _, loss = model(tokens, labels=tokens)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)


if __name__ == "__main__":
    train()
