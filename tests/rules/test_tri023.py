import ast
import subprocess
import sys
import textwrap

from tritonify.diagnostics.model import Applicability, Severity

from tests.lintutil import fixed, lint, lint_fixture, marked_lines


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI023.py", "TRI023")
    assert [f.line for f in findings] == marked_lines("TRI023.py", "TRI023")
    assert all(f.severity is Severity.INFO for f in findings)


def test_rms_norm_fix_keeps_eps_and_imports_once():
    code = """
    import torch
    from torch import nn

    class M(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.a = nn.RMSNorm(d, eps=1e-5)
            self.b = torch.nn.RMSNorm((d,), elementwise_affine=False)
    """
    a, b = lint(code, "TRI023")
    assert "liger_kernel.transformers.LigerRMSNorm(hidden_size, eps=1e-6)" in a.message
    assert "machine epsilon" in b.message          # eps=None in torch
    assert a.fixes[0].applicability is Applicability.UNSAFE
    out = fixed(code, a)
    assert "self.a = LigerRMSNorm(d, eps=1e-5)" in out
    assert "from liger_kernel.transformers import LigerRMSNorm" in out
    out = fixed(out, lint(out, "TRI023")[0])
    assert "self.b = LigerRMSNorm(d, eps=1e-6, elementwise_affine=False)" in out
    assert out.count("import LigerRMSNorm") == 1
    ast.parse(out)
    assert lint(out, "TRI023") == []


def test_layer_norm_fix_writes_torch_default_eps():
    code = """
    from torch import nn
    norm = nn.LayerNorm(768)
    no_bias = nn.LayerNorm(768, bias=False)
    """
    ln, no_bias = lint(code, "TRI023")
    assert "eps=1e-5" in ln.message and "1e-6" in ln.message
    assert "norm = LigerLayerNorm(768, eps=1e-5)" in fixed(code, ln)
    assert no_bias.fixes == [] and "zero-initialised" in no_bias.message


LM = """
import torch.nn.functional as F

def loss(model, h, labels):
    logits = model.lm_head(h)
    return F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1), ignore_index=-1, label_smoothing=0.1)
"""


def test_lm_head_cross_entropy_becomes_fused_linear_cross_entropy():
    (f,) = lint(LM, "TRI023")
    assert "liger_kernel.transformers.functional.liger_fused_linear_cross_entropy(hidden, weight, target)" in f.message
    assert "LigerFusedLinearCrossEntropyLoss()(weight, hidden, target)" in f.message and "weight FIRST" in f.message
    out = fixed(LM, f)
    assert ("return liger_fused_linear_cross_entropy(h.reshape(-1, h.size(-1)), model.lm_head.weight, labels.view(-1), "
            "bias=model.lm_head.bias, ignore_index=-1, label_smoothing=0.1)") in out
    assert "from liger_kernel.transformers.functional import liger_fused_linear_cross_entropy" in out
    ast.parse(out)


def test_cross_entropy_without_a_projection_or_with_unmappable_args():
    plain = """
    import torch.nn.functional as F
    def loss(logits, labels):
        return F.cross_entropy(logits, labels)
    """
    assert lint(plain, "TRI023") == []
    legacy = LM.replace("ignore_index=-1, label_smoothing=0.1", "size_average=False")
    (f,) = lint(legacy, "TRI023")
    assert f.fixes == []                       # reported, but size_average has no Liger spelling
    unflattened = LM.replace("logits.view(-1, logits.size(-1))", "logits")
    (f,) = lint(unflattened, "TRI023")
    assert f.fixes == []                       # 3-D logits: Liger wants 2-D input


def test_model_patch_is_inserted_before_the_build_statement():
    code = """
    import torch
    from transformers import LlamaForCausalLM

    def main(path):
        model = LlamaForCausalLM.from_pretrained(path, torch_dtype=torch.bfloat16)
        return model
    """
    (f,) = lint(code, "TRI023")
    assert "liger_kernel.transformers.apply_liger_kernel_to_llama()" in f.message
    assert "_apply_liger_kernel_to_instance(model=model)" in f.message
    assert "monkey_patch(" not in f.message
    out = fixed(code, f)
    assert "    apply_liger_kernel_to_llama()\n    model = LlamaForCausalLM.from_pretrained" in out
    assert "from liger_kernel.transformers import apply_liger_kernel_to_llama" in out
    ast.parse(out)
    assert lint(out, "TRI023") == []           # Liger is now applied in this file


def test_models_are_quiet_when_liger_is_applied_some_other_way():
    base = """
    from transformers import Gemma2ForCausalLM, TrainingArguments
    model = Gemma2ForCausalLM.from_pretrained("google/gemma-2-2b")
    """
    (f,) = lint(base, "TRI023")
    assert "apply_liger_kernel_to_gemma2" in f.message
    trainer = base + "args = TrainingArguments(output_dir='o', use_liger_kernel=True)\n"
    assert lint(trainer, "TRI023") == []
    instance = base + "import liger_kernel.transformers as lk\nlk._apply_liger_kernel_to_instance(model=model)\n"
    assert lint(instance, "TRI023") == []


def test_auto_model_becomes_auto_liger_model():
    code = """
    from transformers import AutoModelForCausalLM
    m = AutoModelForCausalLM.from_pretrained("x", torch_dtype="auto")
    """
    (f,) = lint(code, "TRI023")
    out = fixed(code, f)
    assert 'm = AutoLigerKernelForCausalLM.from_pretrained("x", torch_dtype="auto")' in out
    assert "from liger_kernel.transformers import AutoLigerKernelForCausalLM" in out


def test_unknown_or_local_classes_are_quiet():
    code = """
    from transformers import BertForMaskedLM
    from mylib import LlamaForCausalLM
    a = BertForMaskedLM.from_pretrained("bert-base-uncased")
    b = LlamaForCausalLM.from_pretrained("x")
    """
    assert lint(code, "TRI023") == []


def test_linting_never_imports_liger_or_torch():
    probe = textwrap.dedent("""
        import sys
        from tritonify.diagnostics.engine import lint_text
        from tritonify.diagnostics.settings import Settings
        src = open(sys.argv[1]).read()
        lint_text(src, "x.py", Settings(select=("TRI003", "TRI023")))
        bad = sorted(m for m in sys.modules if m.split(".")[0] in ("liger_kernel", "torch", "triton", "transformers"))
        print(bad)
        sys.exit(1 if bad else 0)
    """)
    from tests.lintutil import FIXTURES
    for name in ("TRI003.py", "TRI023.py"):
        proc = subprocess.run([sys.executable, "-c", probe, str(FIXTURES / name)], capture_output=True, text=True, timeout=60, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr


def test_hugging_face_building_blocks_become_their_liger_modules():
    code = """
    from transformers.models.llama.modeling_llama import LlamaRMSNorm, LlamaMLP, apply_rotary_pos_emb
    from transformers.models.gemma2.modeling_gemma2 import Gemma2RMSNorm

    class Block:
        def __init__(self, config):
            self.norm = LlamaRMSNorm(config.hidden_size, eps=config.rms_norm_eps)
            self.post = Gemma2RMSNorm(config.hidden_size)
            self.mlp = LlamaMLP(config)

        def rope(self, q, k, cos, sin):
            return apply_rotary_pos_emb(q, k, cos, sin)
    """
    findings = lint(code, "TRI023")
    assert [f.message.split("`")[1] for f in findings] == ["LlamaRMSNorm", "Gemma2RMSNorm", "LlamaMLP", "apply_rotary_pos_emb"]
    assert "`liger_kernel.transformers.rms_norm.LigerRMSNormForGemma2`" in findings[1].message
    out = textwrap.dedent(code)
    for _ in findings:
        out = fixed(out, lint(out, "TRI023")[0])
    assert "self.post = LigerRMSNormForGemma2(config.hidden_size)" in out
    assert "from liger_kernel.transformers.rms_norm import LigerRMSNormForGemma2" in out
    assert "return liger_rotary_pos_emb(q, k, cos, sin)" in out
    assert lint(out, "TRI023") == []


DPO_TRAINER = """
import torch
import torch.nn.functional as F

class Trainer:
    def logps(self, model, ids, labels):
        logits = model(ids).logits[:, :-1]
        return torch.gather(F.log_softmax(logits, dim=-1), 2, labels[:, 1:, None]).squeeze(-1).sum(-1)

    def loss(self, model, ref, batch):
        pc, pr = self.logps(model, *batch).chunk(2)
        with torch.no_grad():
            rc, rr = self.logps(ref, *batch).chunk(2)
        margin = (pc - rc) - (pr - rr)
        return -F.logsigmoid(self.beta * margin).mean()
"""


def test_dpo_in_a_trainer_method_names_the_chunked_loss_and_its_argument_order():
    (f,) = lint(DPO_TRAINER, "TRI023")
    assert "DPO" in f.message
    assert ("`liger_kernel.chunked_loss.LigerFusedLinearDPOLoss(beta=0.1)(lin_weight, _input, target, "
            "ref_input=None, ref_weight=None)`") in f.message
    assert "weight FIRST" in f.message and "chosen then rejected" in f.message
    assert f.fixes == []                     # needs hidden states and the lm_head weight: no automatic rewrite
    line = textwrap.dedent(DPO_TRAINER).splitlines()[f.line - 1]
    assert "F.logsigmoid(self.beta * margin)" in line


def test_preference_losses_need_token_log_probs_in_the_file():
    no_logps = DPO_TRAINER.replace("torch.gather(F.log_softmax(logits, dim=-1), 2, labels[:, 1:, None]).squeeze(-1).sum(-1)",
                                   "model.score(ids, labels)")
    assert lint(no_logps, "TRI023") == []
    trl_helper = no_logps.replace("import torch\n", "import torch\nfrom trl.trainer.utils import selective_log_softmax\n").replace(
        "model.score(ids, labels)", "selective_log_softmax(model(ids).logits, labels).sum(-1)")
    (f,) = lint(trl_helper, "TRI023")
    assert "LigerFusedLinearDPOLoss" in f.message


def test_preference_margin_must_be_scaled_by_beta():
    unscaled = DPO_TRAINER.replace("self.beta * margin", "margin")
    assert lint(unscaled, "TRI023") == []
    temperature = DPO_TRAINER.replace("self.beta * margin", "self.temperature * margin")
    assert lint(temperature, "TRI023") == []


def test_grpo_clip_loss_names_both_liger_entry_points():
    code = """
    import torch

    def loss(logits, ids, old, adv, eps_low, eps_high):
        logps = torch.gather(logits.log_softmax(-1), -1, ids[..., None]).squeeze(-1)
        ratio = (logps - old).exp()
        clipped = ratio.clamp(1 - eps_low, 1 + eps_high)
        return -torch.minimum(ratio * adv[:, None], clipped * adv[:, None]).mean()
    """
    (f,) = lint(code, "TRI023")
    assert "LigerFusedLinearGRPOLoss(beta=0.04, epsilon_low=0.2, epsilon_high=0.2, loss_type='dapo')" in f.message
    assert "(_input, lin_weight, selected_token_ids, attention_mask, advantages)" in f.message and "input FIRST" in f.message
    assert "liger_kernel.transformers.grpo_loss.triton_grpo_loss(logits, old_logp, ref_logp" in f.message
    assert "defaults are 0.9 and 0.4" in f.message
    # the ratio must be exp(logp - old_logp): a plain clamp-and-min of a tensor is something else
    assert lint(code.replace("(logps - old).exp()", "logps * old"), "TRI023") == []
    # ... and the unclipped side must use the same ratio
    assert lint(code.replace("torch.minimum(ratio * adv", "torch.minimum(old * adv"), "TRI023") == []
    # per-token advantages (PPO with GAE): Liger's GRPO loss takes one advantage per sequence
    assert lint(code.replace("adv[:, None]", "adv"), "TRI023") == []
    # ... also when the broadcast happened where the name was assigned
    assigned = code.replace("ratio = (logps - old).exp()", "adv = adv.unsqueeze(1)\n        ratio = (logps - old).exp()")
    (f,) = lint(assigned.replace("adv[:, None]", "adv"), "TRI023")
    assert "GRPO" in f.message


def test_group_norm_fix_swaps_groups_and_channels_and_writes_eps():
    code = """
    import torch
    from torch import nn
    a = nn.GroupNorm(32, 256)
    b = torch.nn.GroupNorm(num_channels=64, num_groups=4, eps=1e-6)
    c = nn.GroupNorm(4, 64, 1e-5, False)
    """
    a, b = lint(code, "TRI023")                 # c: affine=False, no Liger drop-in
    assert "`liger_kernel.transformers.group_norm.LigerGroupNorm(num_channels, num_groups, eps=1e-5)`" in a.message
    assert "channels FIRST" in a.message and "repr() raises AttributeError" in a.message
    out = fixed(code, a)
    assert "a = LigerGroupNorm(256, 32, eps=1e-5)" in out
    assert "from liger_kernel.transformers.group_norm import LigerGroupNorm" in out
    assert "b = LigerGroupNorm(64, 4, eps=1e-6)" in fixed(code, b)
    ast.parse(out)


def test_orpo_written_as_log_of_sigmoid_is_recognised():
    code = """
    import torch
    import torch.nn.functional as F

    def batch_logps(logits, labels):
        return torch.gather(logits.log_softmax(-1), dim=2, index=labels.unsqueeze(2)).squeeze(2).mean(-1)

    def odds_ratio_loss(self, chosen, rejected):
        log_odds = (chosen - rejected) - (torch.log1p(-torch.exp(chosen)) - torch.log1p(-torch.exp(rejected)))
        sig_ratio = F.sigmoid(log_odds)
        ratio = torch.log(sig_ratio)
        return self.beta * ratio
    """
    (f,) = lint(code, "TRI023")
    assert "ORPO" in f.message and "LigerFusedLinearORPOLoss(beta=0.1)(lin_weight, _input, target)" in f.message
    # log of a sigmoid of something else is not a preference loss
    other = code.replace("sig_ratio = F.sigmoid(log_odds)", "sig_ratio = F.sigmoid(chosen)")
    assert lint(other, "TRI023") == []


def test_grpo_with_a_clamped_log_ratio_reassigned_in_place():
    code = """
    import torch

    def token_logps(logits, ids):
        return torch.gather(logits.log_softmax(-1), 2, ids.unsqueeze(-1)).squeeze(-1)

    def loss(self, logps, old_logps, adv, mask):
        log_ratio = logps - old_logps
        log_ratio = torch.clamp(log_ratio, -self.clamp, self.clamp)
        coef_1 = torch.exp(log_ratio)
        coef_2 = torch.clamp(coef_1, 1.0 - self.eps_low, 1.0 + self.eps_high)
        per_token = -torch.min(coef_1 * adv.unsqueeze(1), coef_2 * adv.unsqueeze(1))
        return (per_token * mask).sum() / mask.sum()
    """
    (f,) = lint(code, "TRI023")
    assert "LigerFusedLinearGRPOLoss" in f.message
