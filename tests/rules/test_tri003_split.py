"""TRI003 on ops split over several kernels of one file (issue 26's misses).

A fused linear cross-entropy whose launcher computes the logits with `F.linear`, one kernel storing
each row's log-sum-exp and a second loading it to write `lse - logit[target]` (fla's Ascend
backend): neither kernel alone is a cross-entropy, the pair is Liger's fused linear CE. Each
quiet case keeps a reading the policy does not want: a vocabulary split across ranks, partial
log-sum-exps per block, a log-probability picked for sampling, a loss kernel whose LSE comes from
nowhere in the file."""
import textwrap

from tests.lintutil import lint, lint_fixture, marked_lines

FIXTURE = "TRI003_split_lce.py"


def _fixture_text() -> str:
    from tests.lintutil import FIXTURES

    return (FIXTURES / FIXTURE).read_text()


def test_split_fused_linear_cross_entropy_is_reported_once_on_the_loss_kernel():
    found = lint_fixture(FIXTURE, "TRI003")
    assert [f.line for f in found] == marked_lines(FIXTURE, "TRI003")
    msg = found[0].message
    assert "`target_loss_kernel` re-implements fused linear + cross-entropy split over two kernels" in msg
    assert "`row_lse_kernel` stores each row's log-sum-exp" in msg
    assert "`linear_cross_entropy_fwd` computes with a matmul" in msg
    assert "liger_fused_linear_cross_entropy(input, weight, target" in msg
    assert "the module form takes the weight FIRST" in msg


def test_without_the_matmul_it_is_a_plain_cross_entropy():
    text = _fixture_text().replace("c_logits = F.linear(x[start:end], weight, bias)", "c_logits = x[start:end]")
    found = lint(text, "TRI003", path="proj/ops/ce.py")
    assert len(found) == 1
    assert "re-implements cross-entropy split over two kernels" in found[0].message
    assert "liger_cross_entropy(input, target" in found[0].message


def test_a_vocabulary_split_across_ranks_is_quiet():
    text = _fixture_text().replace(
        "        c_lse = row_lse(c_logits)\n",
        "        c_lse = row_lse(c_logits)\n        torch.distributed.all_reduce(c_lse)\n")
    assert lint(text, "TRI003", path="proj/ops/ce.py") == []


def test_partial_lse_per_vocabulary_block_is_not_the_partner():
    text = _fixture_text().replace("tl.store(z + i, m + tl.log(acc))", "tl.store(z + i * 4 + tl.program_id(1), m + tl.log(acc))")
    assert lint(text, "TRI003", path="proj/ops/ce.py") == []


def test_loss_kernel_whose_lse_comes_from_elsewhere_is_quiet():
    text = _fixture_text().replace("c_lse = row_lse(c_logits)", "c_lse = torch.logsumexp(c_logits.float(), -1)")
    assert lint(text, "TRI003", path="proj/ops/ce.py") == []


def test_a_target_log_probability_for_sampling_is_not_a_loss():
    # x[target] - lse: the selected log-probability (a sampler's or a policy's), no softmax gradient
    text = _fixture_text().replace("tl.store(loss + i, row_lse - picked)", "tl.store(loss + i, picked - row_lse)")
    text = text.replace("        grad = tl.exp(v - row_lse)\n", "        grad = v\n")
    assert lint(text, "TRI003", path="proj/ops/ce.py") == []


def test_the_loss_needs_the_loaded_lse_as_the_rows_normaliser():
    # `lse - x[t]` stored, but the row is never normalised by that value: not a cross-entropy
    text = _fixture_text().replace("grad = tl.exp(v - row_lse)", "grad = tl.exp(v)")
    assert lint(text, "TRI003", path="proj/ops/ce.py") == []


def test_liger_first_false_and_noqa_still_apply():
    from tritonify.diagnostics.engine import lint_text
    from tritonify.diagnostics.settings import from_table

    off = from_table({"liger-first": False, "select": ["TRI003"]})
    assert [f for f in lint_text(_fixture_text(), "proj/ops/ce.py", off).findings if f.code == "TRI003"] == []
    quiet = _fixture_text().replace("BV: tl.constexpr):  # TRI003", "BV: tl.constexpr):  # noqa: TRI003")
    assert lint(textwrap.dedent(quiet), "TRI003", path="proj/ops/ce.py") == []


# ---- a distillation KL on logits whose launcher computes both logits with matmuls -------------------
KL = "TRI003_fused_linear_kl.py"


def _kl_text() -> str:
    from tests.lintutil import FIXTURES

    return (FIXTURES / KL).read_text()


def test_kl_on_logits_from_two_matmuls_is_liger_fused_linear_jsd_at_beta_zero():
    found = lint_fixture(KL, "TRI003")
    assert [f.line for f in found] == marked_lines(KL, "TRI003")
    msg = found[0].message
    assert "`distill_kl_kernel` re-implements fused linear + KL divergence (distillation: student and teacher" in msg
    assert "`distill_kl_fwd` computes both logits with matmuls" in msg
    assert "LigerFusedLinearJSD(jsd_beta=0.0)" in msg
    assert "liger_fused_linear_jsd(student_input, student_weight, teacher_input, teacher_weight, jsd_beta=0.0)" in msg


def test_kl_on_logits_the_launcher_does_not_compute_stays_quiet():
    # logits handed in from elsewhere: Liger's KL takes log-probabilities, so no drop-in (as before)
    text = _kl_text().replace("c_s = F.linear(x[start:end], weight)", "c_s = x[start:end]")
    text = text.replace("c_t = F.linear(target_x[start:end], target_weight)", "c_t = target_x[start:end]")
    assert lint(text, "TRI003", path="proj/ops/kl.py") == []


def test_kl_with_only_one_side_from_a_matmul_stays_quiet():
    text = _kl_text().replace("c_t = F.linear(target_x[start:end], target_weight)", "c_t = target_x[start:end]")
    assert lint(text, "TRI003", path="proj/ops/kl.py") == []


def test_kl_whose_launcher_reduces_across_ranks_stays_quiet():
    text = _kl_text().replace("    return loss.sum() / n", "    torch.distributed.all_reduce(loss)\n    return loss.sum() / n")
    assert lint(text, "TRI003", path="proj/ops/kl.py") == []


# ---- a GLU whose activation is a constexpr string chosen inside a helper ---------------------------
GLU = "TRI003_glu_act_helper.py"


def _glu_text() -> str:
    from tests.lintutil import FIXTURES

    return (FIXTURES / GLU).read_text()


def test_activation_string_compared_inside_a_helper_is_specialised():
    found = lint_fixture(GLU, "TRI003")
    assert [f.line for f in found] == marked_lines(GLU, "TRI003")
    msg = found[0].message
    assert "specialised by the constexpr `ACTIVATION_TYPE`" in msg
    assert "re-implements SwiGLU when `ACTIVATION_TYPE == 'silu'`" in msg
    assert "re-implements GeGLU when `ACTIVATION_TYPE == 'gelu'`" in msg


def test_a_helper_selector_with_no_liger_branch_stays_quiet():
    text = _glu_text().replace("return x * tl.sigmoid(x)", "return tl.maximum(x, 0.0)")
    text = text.replace("return 0.5 * x * (1 + tl.math.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))",
                        "return tl.minimum(x, 6.0)")
    assert lint(text, "TRI003", path="proj/ops/act.py") == []


def test_rows_filtered_by_a_loaded_expert_id_stay_quiet():
    # sglang's kernel as it is: `if expert_id == -1: return` skips rows of experts that are not
    # local (MoE routing), the layout of round 5's padded silu_and_mul
    text = _glu_text().replace(
        "def act_mul_kernel(gate_up, out, half, BLOCK: tl.constexpr, ACTIVATION_TYPE: tl.constexpr):  # TRI003\n"
        "    row = tl.program_id(0).to(tl.int64)\n",
        "def act_mul_kernel(gate_up, out, half, expert_ids, BLOCK: tl.constexpr, ACTIVATION_TYPE: tl.constexpr):\n"
        "    row = tl.program_id(0).to(tl.int64)\n"
        "    expert_id = tl.load(expert_ids + row)\n"
        "    if expert_id == -1:\n"
        "        return\n")
    assert "expert_id == -1" in text
    assert lint(text, "TRI003", path="proj/ops/act.py") == []


# ---- a GRPO per-token policy loss from logits --------------------------------------------------------
GRPO = "TRI003_grpo_logits.py"


def _grpo_text() -> str:
    from tests.lintutil import FIXTURES

    return (FIXTURES / GRPO).read_text()


def test_grpo_per_token_loss_from_logits_is_liger_triton_grpo_loss():
    found = lint_fixture(GRPO, "TRI003")
    assert [f.line for f in found] == marked_lines(GRPO, "TRI003")
    msg = found[0].message
    assert "`token_policy_loss_kernel` re-implements the GRPO per-token policy loss from logits" in msg
    assert "liger_kernel.transformers.grpo_loss.triton_grpo_loss(logits, old_logp, ref_logp, completion_ids" in msg
    assert "old_logp=None" in msg and "reduce=False" in msg and "the default is 0.9" in msg


def test_a_kl_to_the_reference_without_an_advantage_is_not_grpo():
    text = _grpo_text().replace("tl.store(loss + r, kl * beta - adv)", "tl.store(loss + r, kl * beta)")
    assert lint(text, "TRI003", path="proj/ops/rl.py") == []


def test_a_ratio_without_the_k3_estimator_is_not_claimed():
    # exp(ref - logp) * adv: no `exp(d) - d` term, so not the KL Liger's GRPO adds
    text = _grpo_text().replace("kl = tl.exp(d) - d - 1", "kl = tl.exp(d)")
    assert lint(text, "TRI003", path="proj/ops/rl.py") == []


def test_liger_own_grpo_kernels_read_as_grpo():
    # the positive control: Liger's own per-token GRPO kernels (quiet there: its own tree) are what
    # the reading calls GRPO; its selective log-softmax and the backward kernels are not
    import importlib.util
    from pathlib import Path

    import pytest

    spec = importlib.util.find_spec("liger_kernel")
    if spec is None or spec.origin is None:
        pytest.skip("liger-kernel is not installed")
    from tritonify.diagnostics.context import PythonContext
    from tritonify.diagnostics.liger.recognise import grpo_token_loss
    from tritonify.diagnostics.liger.symbolic import build_graph
    from tritonify.diagnostics.source import SourceFile

    path = Path(spec.origin).parent / "ops" / "grpo_loss.py"
    ctx = PythonContext(SourceFile.from_text(path.read_text(), str(path)))
    helpers = {k.name: k.node for k in ctx.kernels}
    read = {k.name: grpo_token_loss(build_graph(k, ctx.imports, helpers)) for k in ctx.kernels if not k.is_helper}
    assert read["_grpo_loss_fwd_kernel"] and read["_grpo_loss_fwd_kernel_seq"]
    assert not read["_grpo_loss_bwd_kernel"] and not read["_selective_log_softmax_kernel"]


def test_a_flag_tested_inside_a_helper_is_specialised_too():
    # `if IS_RMS:` inside the helper the kernel passes the flag to: RMSNorm one way, LayerNorm the other
    code = '''
    import triton
    import triton.language as tl

    @triton.jit
    def _normalise(x, n, eps, IS_RMS: tl.constexpr):
        if IS_RMS:
            return x * tl.rsqrt(tl.sum(x * x, axis=0) / n + eps)
        else:
            xc = x - tl.sum(x, axis=0) / n
            return xc * tl.rsqrt(tl.sum(xc * xc, axis=0) / n + eps)

    @triton.jit
    def norm_kernel(x_ptr, w_ptr, y_ptr, n, eps, BLOCK: tl.constexpr, IS_RMS: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n
        x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        tl.store(y_ptr + row * n + cols, _normalise(x, n, eps, IS_RMS) * w, mask=mask)
    '''
    found = lint(code, "TRI003", path="proj/ops/norm.py")
    assert len(found) == 1
    assert "re-implements RMSNorm when `IS_RMS` is true" in found[0].message
    assert "re-implements LayerNorm when `IS_RMS` is false" in found[0].message
