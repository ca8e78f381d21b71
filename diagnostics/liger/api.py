"""The liger-kernel 0.8.5 API that TRI003 and TRI023 suggest, as static tables.

Importing liger costs about 2 s and logs backend warnings, and the monkey-patch functions need
`transformers`; a linter must not pay that on every keystroke. So the names live here, copied
from the installed 0.8.5 source, and `tests/test_liger_api.py` checks every one of them against
the installed package (or, for names that need transformers, against its source text).
"""
from __future__ import annotations

from dataclasses import dataclass

LIGER_VERSION = "0.8.5"
TRANSFORMERS = "liger_kernel.transformers"
FUNCTIONAL = "liger_kernel.transformers.functional"
GROUP_NORM_MODULE_PATH = "liger_kernel.transformers.group_norm"
QWEN2VL_MROPE_MODULE_PATH = "liger_kernel.transformers.qwen2vl_mrope"
LLAMA4_ROPE_MODULE_PATH = "liger_kernel.transformers.llama4_rope"


@dataclass(frozen=True)
class LigerOp:
    """One op Liger ships, and how to call it instead of a hand-written kernel."""

    key: str
    title: str            # what the user reads: "RMSNorm"
    signature: str        # the data flow that identified it, in words
    module_class: str     # name in liger_kernel.transformers (an nn.Module or function)
    module_call: str      # its constructor / call, as documented in 0.8.5
    functional: str       # name in liger_kernel.transformers.functional
    functional_call: str  # its signature
    helper_params: str    # parameters of the helper the fix writes
    helper_body: str      # the call the helper returns
    caveat: str = ""      # a behaviour of the Liger op the user must know before switching
    module_path: str = TRANSFORMERS   # where module_class lives (LigerGroupNorm is only in its submodule)
    functional_path: str = FUNCTIONAL  # where `functional` lives (Llama-4's RoPE has no entry in functional)

    @property
    def module_api(self) -> str:
        return f"{self.module_path}.{self.module_call}"

    @property
    def functional_api(self) -> str:
        return f"{self.functional_path}.{self.functional_call}"


OPS: dict[str, LigerOp] = {op.key: op for op in (
    LigerOp(
        "rms_norm", "RMSNorm", "mean of squares -> rsqrt -> scale",
        "LigerRMSNorm", "LigerRMSNorm(hidden_size, eps=1e-6)",
        "liger_rms_norm", "liger_rms_norm(X, W, eps)",
        "x, weight, eps=1e-6", "liger_rms_norm(x, weight, eps)",
        # round 9 (six RMSNorm kernels that keep fp32 until the store): where the kernel rounds decides the mode
        "the default casting_mode='llama' rounds x * rstd to the input dtype before the weight; a kernel that "
        "keeps fp32 until the store matches casting_mode='gemma'",
    ),
    LigerOp(
        "fused_add_rms_norm", "residual add + RMSNorm", "x + residual, then mean of squares -> rsqrt -> scale",
        "LigerFusedAddRMSNorm", "LigerFusedAddRMSNorm(hidden_size, eps=1e-6)",
        "liger_fused_add_rms_norm", "liger_fused_add_rms_norm(X, R, W, eps)",
        "x, residual, weight, eps=1e-6", "liger_fused_add_rms_norm(x, residual, weight, eps)",
        "returns (normed, x + residual)",
    ),
    LigerOp(
        "layer_norm", "LayerNorm", "mean subtraction + variance -> rsqrt -> scale",
        "LigerLayerNorm", "LigerLayerNorm(hidden_size, eps=1e-6)",
        "liger_layer_norm", "liger_layer_norm(X, W, B, eps)",
        "x, weight, bias, eps=1e-5", "liger_layer_norm(x, weight, bias, eps)",
        "LigerLayerNorm's eps defaults to 1e-6, nn.LayerNorm's to 1e-5",
    ),
    LigerOp(
        "group_norm", "GroupNorm", "per-group mean and variance -> rsqrt -> per-channel weight and bias",
        "LigerGroupNorm", "LigerGroupNorm(num_channels, num_groups, eps=1e-6)",
        "liger_group_norm", "liger_group_norm(X, affine_scaling_weight, affine_shifting_bias, num_channels, num_groups, eps)",
        "x, weight, bias, num_channels, num_groups, eps=1e-5",
        "liger_group_norm(x, weight, bias, num_channels, num_groups, eps)",
        "LigerGroupNorm is importable only from liger_kernel.transformers.group_norm, its eps defaults to 1e-6 "
        "where nn.GroupNorm's is 1e-5, and in 0.8.5 its repr() raises AttributeError (printing the model fails)",
        module_path=GROUP_NORM_MODULE_PATH,
    ),
    LigerOp(
        "modulated_rms_norm", "modulated RMSNorm (AdaLN)",
        "RMSNorm(x) * w * (1 + scale) [+ shift], scale and shift per row",
        "LigerModulatedRMSNorm", "LigerModulatedRMSNorm(hidden_size, eps=1e-6)",
        "liger_modulated_rms_norm", "liger_modulated_rms_norm(X, W, scale, shift=None, eps=1e-6)",
        "x, weight, scale, shift=None, eps=1e-6", "liger_modulated_rms_norm(x, weight, scale, shift, eps, in_place=False)",
        "its forward is `forward(hidden_states, scale, shift=None)`; scale and shift hold one row per contiguous "
        "block of x's rows (their row count must divide x's), so a kernel that gathers them through an index differs",
    ),
    LigerOp(
        "poly_norm", "PolyNorm", "w0*norm(x^3) + w1*norm(x^2) + w2*norm(x) + b, norm(u) = u * rsqrt(mean(u^2) + eps)",
        "LigerPolyNorm", "LigerPolyNorm(eps=1e-6)",
        "liger_poly_norm", "liger_poly_norm(X, W, B, eps=1e-6)",
        "x, weight, bias, eps=1e-6", "liger_poly_norm(x, weight, bias, eps, in_place=False)",
        "weight holds (w0, w1, w2) and bias is a scalar; in_place=True (the default) reuses the incoming gradient's "
        "memory in backward",
    ),
    LigerOp(
        "dyt", "DyT (dynamic tanh)", "gamma * tanh(alpha * x) + beta with a scalar alpha",
        "LigerDyT", "LigerDyT(hidden_size, beta=True, init_alpha=0.5)",
        "liger_dyt", "liger_dyt(x, alpha, gamma, beta)",
        "x, alpha, gamma, beta=None", "liger_dyt(x, alpha, gamma, beta)",
        "alpha is a one-element tensor; pass beta=None for no shift",
    ),
    LigerOp(
        "relu_squared", "ReLU^2", "relu(x) * relu(x)",
        "LigerReLUSquared", "LigerReLUSquared()",
        "liger_relu_squared", "liger_relu_squared(x)",
        "x", "liger_relu_squared(x)",
    ),
    LigerOp(
        "sparsemax", "sparsemax", "max(x - tau, 0) with tau from a cumulative sum of the sorted row",
        "LigerSparsemax", "LigerSparsemax(dim=-1)",
        "liger_sparsemax", "liger_sparsemax(input, dim=-1)",
        "x, dim=-1", "liger_sparsemax(x, dim=dim)",
    ),
    LigerOp(
        "swiglu", "SwiGLU", "silu(gate) * up",
        "LigerSwiGLUMLP", "LigerSwiGLUMLP(config)",
        "liger_swiglu", "liger_swiglu(a, b)",
        "gate, up", "liger_swiglu(gate, up)",
        "its backward overwrites gate and up in place",
    ),
    LigerOp(
        "geglu", "GeGLU", "gelu(gate) * up",
        "LigerGEGLUMLP", "LigerGEGLUMLP(config)",
        "liger_geglu", "liger_geglu(a, b)",
        "gate, up", "liger_geglu(gate, up)",
        "Liger uses the tanh approximation of GELU; its backward overwrites gate and up in place",
    ),
    LigerOp(
        "cross_entropy", "cross-entropy", "row logsumexp + target gather",
        "LigerCrossEntropyLoss", "LigerCrossEntropyLoss(ignore_index=-100)",
        "liger_cross_entropy", "liger_cross_entropy(input, target, ignore_index=-100)",
        "logits, target, ignore_index=-100", "liger_cross_entropy(logits, target, ignore_index=ignore_index)",
        "its forward overwrites the 2-D logits with their gradient",
    ),
    LigerOp(
        "fused_linear_cross_entropy", "fused linear + cross-entropy",
        "tl.dot logits -> logsumexp + target gather, logits never stored",
        "LigerFusedLinearCrossEntropyLoss", "LigerFusedLinearCrossEntropyLoss()(lin_weight, _input, target)",
        "liger_fused_linear_cross_entropy", "liger_fused_linear_cross_entropy(input, weight, target, bias=None, ignore_index=-100)",
        "hidden, weight, target, bias=None, ignore_index=-100",
        "liger_fused_linear_cross_entropy(hidden, weight, target, bias=bias, ignore_index=ignore_index)",
        "the module form takes the weight FIRST",
    ),
    LigerOp(
        "softmax", "softmax", "row max -> exp -> sum -> divide, no target",
        "LigerSoftmax", "LigerSoftmax()",
        "liger_softmax", "liger_softmax(x)",
        "x", "liger_softmax(x)",
    ),
    LigerOp(
        "kl_div", "KL divergence", "p * (log p - log q)",
        "LigerKLDIVLoss", "LigerKLDIVLoss(eps=1e-10)",
        "liger_kl_div", "liger_kl_div(input, target, reduction='mean', log_target=False)",
        "log_q, p, reduction='batchmean'", "liger_kl_div(log_q, p, reduction=reduction)",
        "input is log q, target is p (as torch.nn.KLDivLoss); the functional default reduction is 'mean'",
    ),
    LigerOp(
        # issue 26: a KL kernel on logits whose launcher computes both logits with matmuls (fla's
        # FusedKLDivLoss): Liger's fused linear JSD at beta 0 is that forward KL, KL(teacher || student)
        "fused_linear_kl_div", "fused linear + KL divergence",
        "distillation: student and teacher logits from matmuls in the launcher, log-softmax of each, p * (log p - log q)",
        "LigerFusedLinearJSD", "LigerFusedLinearJSD(jsd_beta=0.5)",
        "liger_fused_linear_jsd",
        "liger_fused_linear_jsd(student_input, student_weight, teacher_input, teacher_weight, shift_labels=None, jsd_beta=0.5)",
        "student_input, student_weight, teacher_input, teacher_weight",
        "liger_fused_linear_jsd(student_input, student_weight, teacher_input, teacher_weight, jsd_beta=0.0)",
        "pass jsd_beta=0.0: beta 0 is the forward KL, KL(teacher || student), with the teacher the side whose "
        "probabilities weight the sum (the default 0.5 is the symmetric JSD); the module's forward takes "
        "(student_input, student_weight, teacher_input, teacher_weight, shift_labels)",
    ),
    LigerOp(
        "jsd", "Jensen-Shannon divergence", "mixture 0.5*(p+q), then KL of each side against it",
        "LigerJSD", "LigerJSD(beta=0.5)",
        "liger_jsd", "liger_jsd(input, target, beta=0.5)",
        "log_q, log_p, beta=0.5", "liger_jsd(log_q, log_p, beta=beta)",
        "both inputs are log-probabilities",
    ),
    LigerOp(
        "tvd", "total variation distance", "0.5 * |p - q|",
        "LigerTVDLoss", "LigerTVDLoss(reduction='batchmean')",
        "liger_tvd", "liger_tvd(input, target, reduction='mean')",
        "p, q, reduction='batchmean'", "liger_tvd(p, q, reduction=reduction)",
    ),
    LigerOp(
        "rope", "rotary position embedding (RoPE)", "x1*cos - x2*sin, x2*cos + x1*sin (rotate-half)",
        "liger_rotary_pos_emb", "liger_rotary_pos_emb(q, k, cos, sin)",
        "liger_rope", "liger_rope(q, k, cos, sin)",
        "q, k, cos, sin", "liger_rope(q, k, cos, sin)",
        "cos/sin are Hugging Face style (both halves duplicated); q and k are rotated together",
    ),
    LigerOp(
        "qwen2vl_mrope", "Qwen2-VL multimodal RoPE (mrope)",
        "rotate-half RoPE with cos/sin assembled from temporal, height and width sections",
        "liger_multimodal_rotary_pos_emb", "liger_multimodal_rotary_pos_emb(q, k, cos, sin, mrope_section, unsqueeze_dim=1)",
        "liger_qwen2vl_mrope", "liger_qwen2vl_mrope(q, k, cos, sin, mrope_section, unsqueeze_dim=1)",
        "q, k, cos, sin, mrope_section", "liger_qwen2vl_mrope(q, k, cos, sin, mrope_section)",
        "cos/sin are Hugging Face Qwen2-VL style with a leading dimension of 3 (temporal, height, width); "
        "mrope_section holds the three section sizes",
        module_path=QWEN2VL_MROPE_MODULE_PATH,
    ),
    LigerOp(
        # liger_kernel/ops/llama4_rope.py: one program per (batch*seq, head), q and k [B, S, H, D],
        # freqs_cis complex [S, D/2] (or its real view [S, D/2, 2]) indexed by the sequence position;
        # the backward is the same kernel with the conjugate frequencies
        "llama4_rope", "Llama-4 complex-frequency RoPE",
        "interleaved pairs (x[2i], x[2i+1]) times freqs_cis read as (cos, sin) pairs of one tensor",
        "liger_llama4_text_rotary_pos_emb", "liger_llama4_text_rotary_pos_emb(xq, xk, freqs_cis)",
        "liger_llama4_vision_rotary_pos_emb", "liger_llama4_vision_rotary_pos_emb(query, key, freqs_ci)",
        "q, k, freqs_cis", "liger_llama4_vision_rotary_pos_emb(q, k, freqs_cis)",
        "q and k are [batch, seq, heads, head_dim] (a [tokens, heads, head_dim] tensor is one batch: "
        "`q.unsqueeze(0)`) and the whole head_dim is rotated; freqs_cis is complex [seq, head_dim/2]; it "
        "rotates q and k in place when they are already contiguous in the compute dtype (clone them if the "
        "inputs must survive); no position ids (the frequencies are indexed by the sequence position)",
        functional_path=LLAMA4_ROPE_MODULE_PATH,
    ),
)}


# ---- host-code replacements (TRI023) ------------------------------------------------------
# torch module -> Liger module. Both keep a `weight` parameter, so state dicts still load.
RMS_NORM_MODULE = "LigerRMSNorm"            # LigerRMSNorm(hidden_size, eps=1e-6, ..., elementwise_affine=True)
LAYER_NORM_MODULE = "LigerLayerNorm"        # LigerLayerNorm(hidden_size, eps=1e-6, bias=False, ...)
GROUP_NORM_MODULE = "LigerGroupNorm"        # only in liger_kernel.transformers.group_norm; (num_channels, num_groups, eps=1e-6)
FLCE_MODULE = "LigerFusedLinearCrossEntropyLoss"
FLCE_FUNCTION = "liger_fused_linear_cross_entropy"
AUTO_MODEL = "AutoLigerKernelForCausalLM"   # needs transformers; from_pretrained(...) as AutoModelForCausalLM
APPLY_TO_INSTANCE = "_apply_liger_kernel_to_instance"

# Hand-written preference / policy losses -> liger_kernel.chunked_loss (pure torch, chunked over the
# batch, fused with the lm_head matmul). Constructor calls as the message prints them; the API test
# checks every keyword's default against the installed class.
CHUNKED_LOSS = "liger_kernel.chunked_loss"
GRPO_FROM_LOGITS_MODULE = "liger_kernel.transformers.grpo_loss"


@dataclass(frozen=True)
class ChunkedLoss:
    """A liger_kernel.chunked_loss module and how to call it."""

    name: str
    constructor: str      # with the defaults the message shows
    forward: str          # the leading forward() parameters, in order

    @property
    def api(self) -> str:
        return f"{CHUNKED_LOSS}.{self.constructor}({self.forward})"


CHUNKED_LOSSES: dict[str, ChunkedLoss] = {
    "dpo": ChunkedLoss("LigerFusedLinearDPOLoss", "LigerFusedLinearDPOLoss(beta=0.1)",
                       "lin_weight, _input, target, ref_input=None, ref_weight=None"),
    "orpo": ChunkedLoss("LigerFusedLinearORPOLoss", "LigerFusedLinearORPOLoss(beta=0.1)", "lin_weight, _input, target"),
    "cpo": ChunkedLoss("LigerFusedLinearCPOLoss", "LigerFusedLinearCPOLoss(beta=0.1)", "lin_weight, _input, target"),
    "simpo": ChunkedLoss("LigerFusedLinearSimPOLoss", "LigerFusedLinearSimPOLoss(beta=0.1, gamma=0.5)",
                         "lin_weight, _input, target"),
    "grpo": ChunkedLoss("LigerFusedLinearGRPOLoss",
                        "LigerFusedLinearGRPOLoss(beta=0.04, epsilon_low=0.2, epsilon_high=0.2, loss_type='dapo')",
                        "_input, lin_weight, selected_token_ids, attention_mask, advantages"),
}
# GRPO straight from logits (Triton): defaults the message warns about (temperature 0.9, eps_high 0.4).
GRPO_FROM_LOGITS = "triton_grpo_loss"
GRPO_FROM_LOGITS_CALL = ("triton_grpo_loss(logits, old_logp, ref_logp, completion_ids, advantages, completion_mask=None, "
                         "temperature=0.9, beta=0.04, eps_low=0.2, eps_high=0.4)")

# model_type -> (apply function, Hugging Face classes it patches). The class names were read from
# each apply function's body in monkey_patch.py (0.8.5); the test re-checks that statically.
HF_MODELS: dict[str, tuple[str, tuple[str, ...]]] = {
    mt: (f"apply_liger_kernel_to_{mt}", classes) for mt, classes in {
        "llama": ("LlamaForCausalLM", "LlamaModel"),
        "mistral": ("MistralForCausalLM", "MistralModel"),
        "ministral": ("MinistralForCausalLM", "MinistralModel"),
        "mixtral": ("MixtralForCausalLM", "MixtralModel"),
        "qwen2": ("Qwen2ForCausalLM", "Qwen2Model"),
        "qwen3": ("Qwen3ForCausalLM", "Qwen3Model"),
        "qwen3_moe": ("Qwen3MoeForCausalLM", "Qwen3MoeModel"),
        "qwen3_next": ("Qwen3NextForCausalLM", "Qwen3NextModel"),
        "qwen3_5": ("Qwen3_5ForCausalLM", "Qwen3_5ForConditionalGeneration"),
        "qwen3_5_moe": ("Qwen3_5MoeForCausalLM", "Qwen3_5MoeForConditionalGeneration"),
        "gemma": ("GemmaForCausalLM", "GemmaModel"),
        "gemma2": ("Gemma2ForCausalLM", "Gemma2Model"),
        "gemma3_text": ("Gemma3ForCausalLM",),
        "gemma3": ("Gemma3ForConditionalGeneration",),
        "gemma4_text": ("Gemma4ForCausalLM",),
        "gemma4": ("Gemma4ForConditionalGeneration",),
        "phi3": ("Phi3ForCausalLM", "Phi3Model"),
        "granite": ("GraniteForCausalLM", "GraniteModel"),
        "olmo2": ("Olmo2ForCausalLM", "Olmo2Model"),
        "olmo3": ("Olmo3ForCausalLM", "Olmo3Model"),
        "glm4": ("Glm4ForCausalLM", "Glm4Model"),
        "glm4v": ("Glm4vForConditionalGeneration",),
        "glm4v_moe": ("Glm4vMoeForConditionalGeneration",),
        "gpt_oss": ("GptOssForCausalLM", "GptOssModel"),
        "nemotron": ("NemotronForCausalLM",),
        "smollm3": ("SmolLM3ForCausalLM", "SmolLM3Model"),
        "smolvlm": ("SmolVLMForConditionalGeneration",),
        "llava": ("LlavaForConditionalGeneration",),
        "internvl": ("InternVLForConditionalGeneration",),
        "paligemma": ("PaliGemmaForConditionalGeneration",),
        "mllama": ("MllamaForConditionalGeneration", "MllamaForCausalLM"),
        "llama4": ("Llama4ForConditionalGeneration", "Llama4ForCausalLM"),
        "qwen2_vl": ("Qwen2VLForConditionalGeneration",),
        "qwen2_5_vl": ("Qwen2_5_VLForConditionalGeneration",),
        "qwen3_vl": ("Qwen3VLForConditionalGeneration",),
        "qwen3_vl_moe": ("Qwen3VLMoeForConditionalGeneration",),
        "falcon_h1": ("FalconH1ForCausalLM", "FalconH1Model"),
        "hunyuan_v1_dense": ("HunYuanDenseV1ForCausalLM",),
        "hunyuan_v1_moe": ("HunYuanMoEV1ForCausalLM",),
        "deepseek_v2": ("DeepseekV2ForCausalLM", "DeepseekV2Model"),
        "deepseek_v3": ("DeepseekV3ForCausalLM", "DeepseekV3Model"),
        "deepseek_v4": ("DeepseekV4ForCausalLM", "DeepseekV4Model"),
        "exaone4": ("Exaone4ForCausalLM", "Exaone4Model"),
    }.items()
}

# Hugging Face class name -> (model_type, apply function)
HF_CLASS_TO_APPLY: dict[str, tuple[str, str]] = {
    cls: (mt, fn) for mt, (fn, classes) in HF_MODELS.items() for cls in classes
}

# Every apply function liger-kernel 0.8.5 exports (45), including those this table does not
# map a class to (pixtral: a vision tower; muse_glimmer: not in transformers).
APPLY_FUNCTIONS: tuple[str, ...] = tuple(sorted({fn for fn, _ in HF_MODELS.values()} | {
    "apply_liger_kernel_to_pixtral", "apply_liger_kernel_to_muse_glimmer",
}))

# Names that mean "Liger is already applied in this file".
LIGER_ENTRY_POINTS = frozenset(APPLY_FUNCTIONS) | {APPLY_TO_INSTANCE, "_apply_liger_kernel", AUTO_MODEL}


# Hugging Face building blocks -> the Liger module the apply functions swap in for them
# (`modeling_<m>.<HF name> = <Liger name>` in monkey_patch.py). Constructor arguments match
# (hidden_size, eps) for norms and (config) for MLPs; apply_rotary_pos_emb keeps its signature.
RMS_NORM_MODULE_PATH = "liger_kernel.transformers.rms_norm"
_LLAMA_STYLE_NORMS = ("Llama", "Mistral", "Ministral", "Mixtral", "Qwen2", "Qwen3", "Qwen3Moe", "Phi3", "Granite",
                      "SmolLM3", "GptOss", "DeepseekV2", "DeepseekV3")
_SWIGLU_MLPS = ("Llama", "Mistral", "Ministral", "Qwen2", "Qwen3", "Granite", "SmolLM3", "Olmo2")
HF_MODULES: dict[str, tuple[str, str]] = {
    **{f"{p}RMSNorm": (TRANSFORMERS, "LigerRMSNorm") for p in _LLAMA_STYLE_NORMS},
    "GemmaRMSNorm": (RMS_NORM_MODULE_PATH, "LigerRMSNormForGemma"),
    "Gemma2RMSNorm": (RMS_NORM_MODULE_PATH, "LigerRMSNormForGemma2"),
    "Gemma3RMSNorm": (RMS_NORM_MODULE_PATH, "LigerRMSNormForGemma3"),
    "Olmo2RMSNorm": (RMS_NORM_MODULE_PATH, "LigerRMSNormForOlmo2"),
    "Glm4RMSNorm": (RMS_NORM_MODULE_PATH, "LigerRMSNormForGlm4"),
    "Qwen3NextRMSNorm": (RMS_NORM_MODULE_PATH, "LigerRMSNormForQwen3Next"),
    **{f"{p}MLP": (TRANSFORMERS, "LigerSwiGLUMLP") for p in _SWIGLU_MLPS},
    "Phi3MLP": (TRANSFORMERS, "LigerPhi3SwiGLUMLP"),
    "Glm4MLP": (TRANSFORMERS, "LigerPhi3SwiGLUMLP"),
    "Qwen3MoeMLP": (TRANSFORMERS, "LigerQwen3MoeSwiGLUMLP"),
    "GemmaMLP": (TRANSFORMERS, "LigerGEGLUMLP"),
    "Gemma2MLP": (TRANSFORMERS, "LigerGEGLUMLP"),
    "Gemma3MLP": (TRANSFORMERS, "LigerGEGLUMLP"),
    "MixtralBlockSparseTop2MLP": (TRANSFORMERS, "LigerBlockSparseTop2MLP"),
    "apply_rotary_pos_emb": (TRANSFORMERS, "liger_rotary_pos_emb"),
}

