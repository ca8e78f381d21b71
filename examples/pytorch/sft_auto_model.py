"""Fine-tune whatever causal LM the config names, loaded through the Auto class.

TRI023 fires on `AutoModelForCausalLM.from_pretrained`: Liger's `AutoLigerKernelForCausalLM`
takes the same arguments and patches the architecture it finds in the config. It also fires on
`loss_fn`, a cross-entropy of `hidden @ lm_head.weight.T` (fused linear cross-entropy).
"""
import torch
from transformers import AutoModelForCausalLM


def load(path: str):
    return AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch.bfloat16, attn_implementation="sdpa")


def loss_fn(model, hidden, labels):
    # The head and the loss, written out to add z-loss later
    logits = hidden @ model.lm_head.weight.T
    return torch.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)).float(), labels.view(-1))
