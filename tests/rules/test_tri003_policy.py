"""TRI003 in the default set (issue 26): the Liger-first policy and its exceptions.

Each class of false reading seen on real code stays quiet, next to the plain op that is reported:
providers of the ops, `liger-first = false`, and the fused forms Liger does not ship."""
import textwrap

import pytest

from tritonify.diagnostics.engine import lint_text
from tritonify.diagnostics.settings import Settings, SettingsError, from_table

from tests.lintutil import lint

HEAD = "import triton\nimport triton.language as tl\n\n"

RMS = """
@triton.jit
def rms_kernel(x_ptr, w_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / n + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * n + cols, {out}, mask=mask)
"""


def tri003(body: str, path: str = "my_project/ops/norm.py"):
    return lint(HEAD + textwrap.dedent(body), "TRI003", path=path)


def test_plain_rms_norm_is_reported_by_default_and_says_how_to_turn_it_off():
    code = HEAD + textwrap.dedent(RMS.format(out="x * rstd * w"))
    found = [f for f in lint_text(code, "my_project/ops/norm.py", Settings()).findings if f.code == "TRI003"]
    assert len(found) == 1
    assert "re-implements RMSNorm" in found[0].message
    assert "`liger-first = false` in [tool.tritonify]" in found[0].message


def test_liger_first_false_turns_it_off():
    code = HEAD + textwrap.dedent(RMS.format(out="x * rstd * w"))
    off = from_table({"liger-first": False})
    assert [f for f in lint_text(code, "my_project/ops/norm.py", off).findings if f.code == "TRI003"] == []
    with pytest.raises(SettingsError, match="liger-first: expected true or false"):
        from_table({"liger-first": "no"})


def test_a_package_registering_aten_implementations_is_a_provider(tmp_path):
    pkg = tmp_path / "gems"
    (pkg / "ops").mkdir(parents=True)
    (pkg / "__init__.py").write_text('import torch\naten_lib = torch.library.Library("aten", "IMPL")\n')
    (pkg / "ops" / "__init__.py").write_text("")
    path = pkg / "ops" / "rms_norm.py"
    code = HEAD + textwrap.dedent(RMS.format(out="x * rstd * w"))
    path.write_text(code)
    assert lint(code, "TRI003", path=str(path)) == []
    assert lint(code, "TRI003", path=str(tmp_path / "elsewhere.py"))   # the same kernel outside it


def test_a_file_registering_aten_kernels_and_vendored_code_are_quiet():
    code = HEAD + textwrap.dedent(RMS.format(out="x * rstd * w"))
    registered = 'lib = torch.library.Library("aten", "IMPL")\n' + code
    assert lint(registered, "TRI003", path="my_project/ops/norm.py") == []
    assert lint(code, "TRI003", path="my_project/third_party/norm.py") == []


@pytest.mark.parametrize("out", [
    "x * rstd * w + tl.load(r_ptr + row * n + cols, mask=mask)",          # residual added after the norm
    "x * rstd * w * tl.load(g_ptr + row * n + cols, mask=mask)",          # a per-row gate
])
def test_a_norm_fused_with_a_per_row_tensor_is_quiet(out):
    body = RMS.replace("def rms_kernel(x_ptr,", "def rms_kernel(r_ptr, g_ptr, x_ptr,").format(out=out)
    assert tri003(body) == []


# q and k normalised in one launch (two RMSNorms of separate tensors): not one Liger call
QK_NORM = """
    @triton.jit
    def qk_norm(q_ptr, k_ptr, wq_ptr, wk_ptr, oq_ptr, ok_ptr, n, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n
        q = tl.load(q_ptr + row * n + cols, mask=mask, other=0.0)
        k = tl.load(k_ptr + row * n + cols, mask=mask, other=0.0)
        tl.store(oq_ptr + row * n + cols, q * tl.rsqrt(tl.sum(q * q, 0) / n + eps) * tl.load(wq_ptr + cols, mask=mask), mask=mask)
        tl.store(ok_ptr + row * n + cols, k * tl.rsqrt(tl.sum(k * k, 0) / n + eps) * tl.load(wk_ptr + cols, mask=mask), mask=mask)
    """


def test_q_and_k_normalised_in_one_launch_is_quiet():
    assert tri003(QK_NORM) == []


def test_a_norm_of_a_computed_combination_is_quiet():
    body = RMS.replace("x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)",
                       "x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0) + "
                       "tl.load(u_ptr + row * n + cols, mask=mask) * tl.load(s_ptr + cols, mask=mask)") \
        .replace("def rms_kernel(x_ptr,", "def rms_kernel(u_ptr, s_ptr, x_ptr,").format(out="x * rstd * w")
    assert tri003(body) == []


def test_rounding_kept_on_purpose_is_quiet():
    body = RMS.format(out="x * rstd * w")
    commented = body.replace("    rstd = tl.rsqrt(", "    # 1 / sqrt on purpose: it rounds differently from rsqrt\n    rstd = tl.rsqrt(")
    assert tri003(commented) == []
    assert tri003(RMS.format(out="(x * rstd).to(tl.bfloat16).to(tl.float32) * w")) == []


def test_rounding_pinned_by_the_launch_or_the_division_is_quiet():
    body = RMS.format(out="x * rstd * w")
    launch = "\n\ndef rms(x, w, y, n):\n    rms_kernel[(x.shape[0],)](x, w, y, n, 1e-6, BLOCK=1024{kw})\n"
    assert tri003(body + launch.format(kw=""))                        # the plain launch: reported
    assert tri003(body + launch.format(kw=", enable_fp_fusion=False")) == []   # FMA contraction off on purpose
    assert tri003(RMS.format(out="tl.div_rn(x, 1.0 / rstd) * w")) == []      # IEEE division pinned


def test_a_module_that_says_it_keeps_a_reference_numerics_is_quiet():
    doc = '"""Numerics of the reference implementation\'s CUDA norm kernels, in fp32."""\n'
    code = doc + HEAD + textwrap.dedent(RMS.format(out="x * rstd * w"))
    assert lint(code, "TRI003", path="my_project/ops/norm.py") == []
    negated = '"""Unlike the bit-exact variant, this kernel does not reproduce the reduction order."""\n'
    assert lint(negated + HEAD + textwrap.dedent(RMS.format(out="x * rstd * w")), "TRI003", path="my_project/ops/norm.py")


def test_rows_to_a_count_loaded_per_group_are_quiet():
    body = """
    @triton.jit
    def silu_mul(x_ptr, y_ptr, counts_ptr, n, BLOCK: tl.constexpr):
        expert = tl.program_id(1)
        cols = tl.arange(0, BLOCK)
        {count}
        for t in tl.range(tl.program_id(0), {bound}, tl.num_programs(0)):
            g = tl.load(x_ptr + (expert * 4096 + t) * 2 * n + cols, mask=cols < n, other=0.0)
            u = tl.load(x_ptr + (expert * 4096 + t) * 2 * n + n + cols, mask=cols < n, other=0.0)
            tl.store(y_ptr + (expert * 4096 + t) * n + cols, g * tl.sigmoid(g) * u, mask=cols < n)
    """
    assert tri003(body.format(count="m = 4096", bound="m"))                       # a dense count: reported
    assert tri003(body.format(count="m = tl.load(counts_ptr + expert)", bound="m")) == []   # MoE-padded rows


def test_a_norm_over_a_group_of_the_row_with_a_weight_per_group_is_quiet():
    body = """
    @triton.jit
    def grouped_rms(x_ptr, w_ptr, y_ptr, stride, eps, GROUP_DIM: tl.constexpr, G: tl.constexpr,
                    W_SHARED: tl.constexpr, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        group = pid % G
        row = pid // G
        cols = tl.arange(0, BLOCK)
        mask = cols < GROUP_DIM
        offs = {x_offs}
        w_offs = cols if W_SHARED else offs
        x = tl.load(x_ptr + row * stride + offs, mask=mask, other=0.0)
        w = tl.load(w_ptr + w_offs, mask=mask, other=0.0)
        rstd = tl.rsqrt(tl.sum(x * x, axis=0) / GROUP_DIM + eps)
        y = x * rstd
        y += y * w
        tl.store(y_ptr + row * stride + offs, y, mask=mask)
    """
    assert tri003(body.format(x_offs="cols"))                          # one segment per row: reported
    assert tri003(body.format(x_offs="group * GROUP_DIM + cols")) == []   # a weight per group of the row


SOFTMAX = """
@triton.jit
def softmax_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, 0))
    p = e / tl.sum(e, 0)
    {tail}
"""


def test_softmax_of_logits_over_a_loaded_temperature_is_quiet():
    plain = SOFTMAX.format(tail="tl.store(y_ptr + row * n + cols, p, mask=mask)")
    assert tri003(plain)
    tempered = plain.replace("def softmax_kernel(x_ptr,", "def softmax_kernel(t_ptr, x_ptr,").replace(
        '    e = tl.exp(x - tl.max(x, 0))', '    x = x / tl.load(t_ptr + row)\n    e = tl.exp(x - tl.max(x, 0))')
    assert "tl.load(t_ptr + row)" in tempered
    assert tri003(tempered) == []


def test_softmax_reported_but_not_routing_nor_weights_on_another_tensor():
    plain = SOFTMAX.format(tail="tl.store(y_ptr + row * n + cols, p, mask=mask)")
    assert len(tri003(plain, path="my_project/ops/softmax.py")) == 1
    routing = SOFTMAX.format(tail="tl.store(y_ptr + row, tl.argmax(p, 0))")
    assert tri003(routing, path="my_project/ops/softmax.py") == []
    merge = SOFTMAX.replace("def softmax_kernel(x_ptr,", "def softmax_kernel(v_ptr, x_ptr,").format(
        tail="tl.store(y_ptr + row, tl.sum(e * tl.load(v_ptr + row * n + cols, mask=mask, other=0.0), 0) / tl.sum(e, 0))")
    assert tri003(merge, path="my_project/ops/softmax.py") == []


def test_a_glu_reading_a_third_tensor_is_quiet():
    body = """
    @triton.jit
    def swiglu(a_ptr, b_ptr, w_ptr, c_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        a = tl.load(a_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + offs, mask=mask, other=0.0)
        tl.store(c_ptr + offs, a * tl.sigmoid(a) * b{extra}, mask=mask)
    """
    assert len(tri003(body.format(extra=""), path="my_project/ops/act.py")) == 1
    assert tri003(body.format(extra=" * tl.load(w_ptr + tl.program_id(0))"), path="my_project/ops/act.py") == []


def test_one_finding_per_op_for_a_kernel_and_its_backward():
    fwd = RMS.format(out="x * rstd * w")
    bwd = fwd.replace("def rms_kernel(", "def rms_bwd_kernel(")
    assert len(tri003(fwd + bwd)) == 1


# ---- round 6 (blind) classes: fused forms Liger does not ship, each beside the plain op -------------
def test_a_norm_weight_per_group_of_rows_is_quiet():
    grouped = RMS.replace("def rms_kernel(x_ptr, w_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):",
                          "def rms_kernel(x_ptr, w_ptr, y_ptr, n, eps, G: tl.constexpr, BLOCK: tl.constexpr):")
    grouped = grouped.replace("w = tl.load(w_ptr + cols,", "w = tl.load(w_ptr + (row % G) * n + cols,")
    assert tri003(grouped.format(out="x * rstd * w")) == []
    assert len(tri003(RMS.format(out="x * rstd * w"))) == 1


CE_SPLIT = """
@triton.jit
def ce_kernel(logits_ptr, labels_ptr, loss_ptr, lse_ptr, N, V, BV: tl.constexpr):
    row = tl.program_id(0)
    blk = tl.program_id({axis})
    cols = blk * BV + tl.arange(0, BV)
    x = tl.load(logits_ptr + row * V + cols, mask=cols < V, other=-float("inf")).to(tl.float32)
    m = tl.max(x, 0)
    lse = tl.log(tl.sum(tl.exp(x - m), 0)) + m
    label = tl.load(labels_ptr + row)
    picked = tl.load(logits_ptr + row * V + label).to(tl.float32)
    tl.store(loss_ptr + blk * N + row, lse - picked)
    tl.store(lse_ptr + blk * N + row, lse)
"""


def test_a_cross_entropy_over_a_split_vocabulary_is_quiet():
    # partial LSEs per vocabulary block (a second grid axis), combined by another kernel
    assert tri003(CE_SPLIT.format(axis=1)) == []
    # one program per row storing its LSE for its own backward: Liger's cross-entropy
    single = CE_SPLIT.format(axis=0).replace("blk = tl.program_id(0)", "blk = 0")
    assert len(tri003(single)) == 1


SOFTMAX_FP32 = """
@triton.jit
def softmax_kernel(x_ptr, p_ptr, D, B: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, B)
    x = tl.load(x_ptr + row * D + cols, mask=cols < D, other=-float("inf"))
    e = tl.exp(x - tl.max(x, 0))
    tl.store(p_ptr + row * D + cols, e / tl.sum(e, 0), mask=cols < D)


def softmax_fwd(x, dtype=torch.float):
    p = torch.empty_like(x, dtype={dtype})
    softmax_kernel[(x.shape[0],)](x, p, x.shape[1], B=1024)
    return p
"""


def test_a_softmax_kept_in_float32_by_its_launcher_is_quiet():
    assert tri003("import torch\n" + SOFTMAX_FP32.format(dtype="dtype")) == []
    assert tri003("import torch\n" + SOFTMAX_FP32.format(dtype="torch.float32")) == []
    assert len(tri003("import torch\n" + SOFTMAX_FP32.format(dtype="x.dtype"))) == 1


MROPE = """
@triton.jit
def mrope(Q, COS, SIN, POS, stride, plane, t_end, h_end, HALF: tl.constexpr):
    row = tl.program_id(0)
    d = tl.arange(0, HALF)
    base = {base} * HALF + d
    c = tl.where(d < t_end, tl.load(COS + base), tl.where(d < h_end, tl.load(COS + plane + base), tl.load(COS + 2 * plane + base)))
    s = tl.where(d < t_end, tl.load(SIN + base), tl.where(d < h_end, tl.load(SIN + plane + base), tl.load(SIN + 2 * plane + base)))
    q1 = tl.load(Q + row * stride + d)
    q2 = tl.load(Q + row * stride + HALF + d)
    tl.store(Q + row * stride + d, q1 * c - q2 * s)
    tl.store(Q + row * stride + HALF + d, q2 * c + q1 * s)
"""


def test_an_mrope_gathering_cos_sin_at_loaded_positions_is_quiet():
    # cos/sin taken from a cache at the token's loaded position: Liger's mrope takes them assembled
    assert tri003(MROPE.format(base="tl.load(POS + row)")) == []
    (f,) = tri003(MROPE.format(base="row"))
    assert "Qwen2-VL multimodal RoPE" in f.message


def test_assess_gives_each_kernel_its_verdict_and_check_reports_exactly_its_findings():
    """`assess` is what `check` reports from and what `benchmarks/realworld/liger_census.py` counts:
    a reported kernel carries its finding, a quiet one the reason the policy gives, and a file out
    of scope one file-level reason."""
    from tritonify.diagnostics.context import PythonContext
    from tritonify.diagnostics.rules.triton import tri003_liger_reimplementation as rule
    from tritonify.diagnostics.source import SourceFile

    code = HEAD + textwrap.dedent(RMS.format(out="x * rstd * w")) + textwrap.dedent(QK_NORM)

    def verdicts(path):
        ctx = PythonContext(SourceFile.from_text(code, path))
        ctx.rule = rule.RULE
        return [(k.name if k else None, f is not None, why) for k, f, why in rule.assess(ctx)]

    assert verdicts("my_project/ops/norm.py") == [
        ("rms_kernel", True, ""), ("qk_norm", False, "several tensors normalised in one launch")]
    assert verdicts("my_project/third_party/norm.py") == [(None, False, "a provider of the ops (vendored third-party code)")]
    assert verdicts("my_project/npu/norm.py") == [(None, False, "an NPU backend's twin of a GPU kernel")]
    found = lint(code, "TRI003", path="my_project/ops/norm.py")
    assert [f.line for f in found] == [code.splitlines().index("def rms_kernel(x_ptr, w_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):") + 1]
