"""The real kernels the profile-diagnose-fix loop runs on: other projects' Triton kernels, launched as
their users launch them, at shapes their projects use.

Nothing of theirs is committed: the code comes from the pinned packages at run time (the Liger-Kernel
wheel installed on the device; vLLM's kernel file copied from the pinned wheel by `sources.py`; the
Inductor kernels generated on the device by torch.compile). Each entry names where its kernel comes
from, the Triton kernel(s) profiled, the shape and dtype, and why that shape.

    from benchmarks.realkernels.registry import KERNELS
    [k.name for k in KERNELS]

The launchers (what the user's call is, its float64 reference, eager and torch.compile stand-ins,
and the candidates a pattern's fix gives) are in `liger.py`, `vllm_attention.py` and `inductor.py`,
one function per entry, named by the entry's `launcher`.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

LIGER = ("liger-kernel", "0.8.5")
VLLM = ("vllm", "0.33.0")
TORCH = ("torch (Inductor, generated on the device)", "2.11.0+cu130")

# Llama-3-8B: hidden 4096, MLP 14336, vocabulary 128256, 32 query / 8 KV heads of 128; a training
# micro-batch of 4 x 2048 tokens = 8192 rows (the shapes Liger-Kernel's own benchmarks sweep to).
TOKENS, HIDDEN, MLP, VOCAB = 8192, 4096, 14336, 128256


@dataclass(frozen=True)
class RealKernel:
    name: str                 # this study's name for the entry
    package: str
    version: str
    file: str                 # the kernel's file inside the package
    kernels: tuple[str, ...]  # the Triton kernels profiled (for Inductor: generated, named on the device)
    call: str                 # what the user calls
    shape: str
    dtype: str
    why: str                  # why this shape
    launcher: str             # module:function that builds the case (see the module docstring)
    notes: str = ""
    tags: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict:
        return asdict(self)


def _liger(name, file, kernels, call, shape, why, launcher, dtype="bf16", notes=""):
    return RealKernel(name, *LIGER, f"liger_kernel/ops/{file}", kernels, call, shape, dtype, why,
                      f"liger:{launcher}", notes)


KERNELS: tuple[RealKernel, ...] = (
    _liger("liger_rms_norm_fwd", "rms_norm.py", ("_rms_norm_forward_kernel",),
           "LigerRMSNormFunction.apply(x, w, 1e-6)", f"x {TOKENS}x{HIDDEN}",
           "Llama-3-8B's hidden size, one training micro-batch (4 x 2048 tokens)", "rms_norm_fwd"),
    _liger("liger_rms_norm_bwd", "rms_norm.py", ("_rms_norm_backward_kernel",),
           "y.backward(dy) after LigerRMSNormFunction.apply (rms_norm_backward)", f"x {TOKENS}x{HIDDEN}",
           "the backward of the same layer (one program per SM, rows looped)", "rms_norm_bwd"),
    _liger("liger_layer_norm_fwd", "layer_norm.py", ("_layer_norm_forward_kernel",),
           "LigerLayerNormFunction.apply(x, w, b, 1e-6)", f"x {TOKENS}x{HIDDEN}",
           "a GPT-style model of hidden 4096, one micro-batch", "layer_norm_fwd"),
    _liger("liger_layer_norm_bwd", "layer_norm.py", ("_layer_norm_backward_kernel",),
           "y.backward(dy) after LigerLayerNormFunction.apply (layer_norm_backward)", f"x {TOKENS}x{HIDDEN}",
           "the backward of the same layer (one program per SM, rows looped)", "layer_norm_bwd"),
    _liger("liger_fused_add_rms_norm_bwd", "fused_add_rms_norm.py", ("_fused_add_rms_norm_backward_kernel",),
           "backward of LigerFusedAddRMSNormFunction.apply(x, r, w, 1e-6)", f"x, r {TOKENS}x{HIDDEN}",
           "the residual add + RMSNorm of a Llama block, backward (one program per SM)", "fused_add_rms_norm_bwd"),
    _liger("liger_fused_add_rms_norm_fwd", "fused_add_rms_norm.py", ("_fused_add_rms_norm_forward_kernel",),
           "LigerFusedAddRMSNormFunction.apply(x, r, w, 1e-6)", f"x, r {TOKENS}x{HIDDEN}",
           "the residual add + RMSNorm of a Llama block", "fused_add_rms_norm_fwd"),
    _liger("liger_swiglu_fwd", "swiglu.py", ("_swiglu_forward_kernel",),
           "LigerSiLUMulFunction.apply(gate, up)", f"gate, up {TOKENS}x{MLP}",
           "Llama-3-8B's MLP width", "swiglu_fwd"),
    _liger("liger_swiglu_bwd", "swiglu.py", ("_swiglu_backward_kernel",),
           "backward of LigerSiLUMulFunction.apply(gate, up)", f"gate, up {TOKENS}x{MLP}",
           "Llama-3-8B's MLP width", "swiglu_bwd"),
    _liger("liger_geglu_fwd", "geglu.py", ("_geglu_tanh_forward_kernel",),
           "LigerGELUMulFunction.apply(gate, up)", f"gate, up {TOKENS}x{MLP}",
           "Gemma-2-9B's MLP width (14336), one micro-batch", "geglu_fwd"),
    _liger("liger_cross_entropy", "cross_entropy.py", ("liger_cross_entropy_kernel",),
           "LigerCrossEntropyFunction.apply(logits, target, None)", f"logits {TOKENS}x{VOCAB}",
           "Llama-3's vocabulary, one micro-batch: the loss and its gradient in one pass", "cross_entropy"),
    _liger("liger_rope", "rope.py", ("_triton_rope",),
           "LigerRopeFunction.apply(q, k, cos, sin)", "q 4x32x2048x128, k 4x8x2048x128",
           "Llama-3-8B's heads (32 query, 8 KV, 128 wide), 4 x 2048 tokens", "rope"),
    _liger("liger_softmax", "softmax.py", ("_softmax_single_block_forward_kernel",),
           "LigerSoftmaxFunction.apply(x)", f"x 16384x{HIDDEN}",
           "rows as wide as a hidden state; the shape this project's templates compare on", "softmax"),
    _liger("liger_kl_div", "kl_div.py", ("_kldiv_kernel_forward",),
           "LigerKLDivLossFunction.apply(log_p, q, 'batchmean')", "4096x32000", 
           "distillation over Llama-2's 32000-token vocabulary, 4096 positions", "kl_div", dtype="fp32"),
    _liger("liger_group_norm_fwd", "group_norm.py", ("_group_norm_forward_kernel",),
           "LigerGroupNormFunction.apply(x, w, b, 512, 32, 1e-6)", "x 32x512x4096 (32 groups)",
           "a diffusion UNet block: 512 channels of a 64x64 map, GroupNorm(32), batch 32", "group_norm_fwd"),
    _liger("liger_dyt_fwd", "dyt.py", ("_dyt_fwd_kernel",),
           "LigerDyTFunction.apply(x, alpha, gamma, beta)", f"x {TOKENS}x{HIDDEN}",
           "DyT in place of a 4096-wide norm, one micro-batch", "dyt_fwd"),
    RealKernel("vllm_decode_grouped_stage1", *VLLM, "vllm/v1/attention/ops/triton_decode_attention.py",
               ("_fwd_grouped_kernel_stage1",), "decode_attention_fwd(q, k_cache, v_cache, o, lse, req_to_token, "
               "b_seq_len, attn_logits, num_kv_splits=8, sm_scale, page_size=16)",
               "32 requests x 4096 cached tokens, 32 q / 8 KV heads of 128, pages of 16", "bf16",
               "a Llama-3-8B decode step at batch 32 over 4k contexts, with vLLM's test's 8 KV splits",
               "vllm_attention:decode_grouped", "its two import lines (vllm.platforms, vllm.triton_utils) are "
               "replaced by `import triton` and a CUDA platform answer; nothing else of the file changes"),
    RealKernel("vllm_decode_stage2", *VLLM, "vllm/v1/attention/ops/triton_decode_attention.py",
               ("_fwd_kernel_stage2",), "the second stage of the same decode_attention_fwd call",
               "32 requests x 32 heads x 8 splits", "bf16", "the same decode step", "vllm_attention:decode_grouped"),
    RealKernel("vllm_decode_mha_stage1", *VLLM, "vllm/v1/attention/ops/triton_decode_attention.py",
               ("_fwd_kernel_stage1",), "decode_attention_fwd with one KV head per query head (MHA)",
               "32 requests x 4096 cached tokens, 32 heads of 128, pages of 16", "bf16",
               "a Llama-2-7B decode step (MHA) at batch 32 over 4k contexts", "vllm_attention:decode_mha"),
    RealKernel("inductor_llama_block", *TORCH, "torch/_inductor (generated)", ("triton_*",),
               "torch.compile(block)(x) and loss.backward(): a Llama decoder block in training",
               "x 4x2048x2048 (TinyLlama-1.1B: hidden 2048, 32 heads of 64, 4 KV heads, MLP 5632)", "bf16",
               "a small Llama trained at 4 x 2048 tokens; every Triton kernel Inductor generates for its "
               "forward and backward is one record", "inductor:llama_block",
               "the kernels and their names are Inductor's, generated on the device; their source is kept "
               "in the run's output"),
)


def by_name(name: str) -> RealKernel:
    for k in KERNELS:
        if k.name == name:
            return k
    raise KeyError(name)
