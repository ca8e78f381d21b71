"""Inductor's kernels for a small Llama decoder block in training: torch.compile generates them on the
device (their names and source are Inductor's; the run keeps the generated files), each generated
Triton kernel is one profiled record.

The block is TinyLlama-1.1B's (hidden 2048, 32 query heads and 4 KV heads of 64, MLP 5632, RMSNorm
eps 1e-5, RoPE base 10000) at 4 x 2048 tokens, bf16 weights and activations, the loss a mean of
squares so that backward runs every kernel of the block's gradient.
"""
from __future__ import annotations

import os

from benchmarks.realkernels.case import Case

SMALL = os.environ.get("RK_SMALL") == "1"
DEV = os.environ.get("RK_DEVICE", "cuda")


def _block_class():
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self, hidden, heads, kv_heads, mlp, dtype):
            super().__init__()
            self.heads, self.kv_heads, self.hd = heads, kv_heads, hidden // heads
            mk = lambda i, o: nn.Linear(i, o, bias=False, device=DEV, dtype=dtype)  # noqa: E731
            self.q, self.k, self.v, self.o = (mk(hidden, hidden), mk(hidden, kv_heads * self.hd),
                                              mk(hidden, kv_heads * self.hd), mk(hidden, hidden))
            self.gate, self.up, self.down = mk(hidden, mlp), mk(hidden, mlp), mk(mlp, hidden)
            self.n1 = nn.Parameter(torch.ones(hidden, device=DEV, dtype=dtype))
            self.n2 = nn.Parameter(torch.ones(hidden, device=DEV, dtype=dtype))

        @staticmethod
        def norm(x, w, eps=1e-5):
            xf = x.float()
            return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * w

        @staticmethod
        def rope(x, cos, sin):
            half = x.shape[-1] // 2
            rot = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
            return x * cos + rot * sin

        def forward(self, x, cos, sin):
            b, s, _ = x.shape
            h = self.norm(x, self.n1)
            q = self.q(h).view(b, s, self.heads, self.hd).transpose(1, 2)
            k = self.k(h).view(b, s, self.kv_heads, self.hd).transpose(1, 2)
            v = self.v(h).view(b, s, self.kv_heads, self.hd).transpose(1, 2)
            q, k = self.rope(q, cos, sin), self.rope(k, cos, sin)
            a = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            x = x + self.o(a.transpose(1, 2).reshape(b, s, -1))
            h = self.norm(x, self.n2)
            return x + self.down(torch.nn.functional.silu(self.gate(h)) * self.up(h))

    return Block


def llama_block():
    import torch

    hidden, heads, kv, mlp, batch, seq = (128, 4, 2, 256, 2, 64) if SMALL else (2048, 32, 4, 5632, 4, 2048)
    dtype = torch.float32 if DEV == "cpu" else torch.bfloat16
    torch.manual_seed(0)
    block = _block_class()(hidden, heads, kv, mlp, dtype)
    with torch.no_grad():
        for p in block.parameters():
            if p.dim() == 2:
                p.normal_(0, hidden ** -0.5)
    hd = hidden // heads
    pos = torch.arange(seq, device=DEV, dtype=torch.float32)
    inv = 1.0 / (10000.0 ** (torch.arange(0, hd, 2, device=DEV, dtype=torch.float32) / hd))
    emb = torch.cat((torch.outer(pos, inv),) * 2, dim=-1)
    cos, sin = emb.cos().to(dtype), emb.sin().to(dtype)
    x = torch.randn(batch, seq, hidden, device=DEV).to(dtype).requires_grad_()   # the previous layer's output
    compiled = torch.compile(block)

    def step(model):
        for p in (x, *block.parameters()):
            p.grad = None
        y = model(x, cos, sin)
        y.float().pow(2).mean().backward()
        return y.detach(), x.grad

    def reference():
        ref = _block_class()(hidden, heads, kv, mlp, torch.float64)
        ref.load_state_dict({k: v.double() for k, v in block.state_dict().items()})
        x64 = x.detach().double().requires_grad_()
        y = ref(x64, cos.double(), sin.double())
        y.pow(2).mean().backward()
        return y.detach(), x64.grad

    return Case(lambda: step(compiled), reference, lambda: step(block), None, tolerance=3e-2,
                notes="forward output and input gradient checked against the block in float64; the original "
                      "is Inductor's code (torch.compile), so 'eager' is the same block uncompiled")
