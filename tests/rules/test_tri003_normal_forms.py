"""TRI003's normal forms and judgement on real-kernel shapes (issue 16): each addition has a
kernel it must now recognise and a near miss it must leave alone. The kernels are written here in
the style of the projects they come from (flag-gems, fla, sglang), not copied."""
from __future__ import annotations

import textwrap

import pytest

from tests.lintutil import lint

HEAD = """
import triton
import triton.language as tl
"""


def tri003(body: str, path: str = "my_project/ops/kernels.py"):
    return lint(HEAD + textwrap.dedent(body), "TRI003", path=path)


def recognised(body: str):
    """What the recogniser reads in the one kernel of `body` (op, and how it differs from Liger's)."""
    from tritonify.diagnostics.context import PythonContext
    from tritonify.diagnostics.liger.recognise import recognise
    from tritonify.diagnostics.liger.symbolic import build_graph
    from tritonify.diagnostics.source import SourceFile

    ctx = PythonContext(SourceFile.from_text(HEAD + textwrap.dedent(body), "my_project/ops/kernels.py"))
    (kernel,) = [k for k in ctx.kernels if not k.is_helper]
    return recognise(build_graph(kernel, ctx.imports, {k.name: k.node for k in ctx.kernels}))


def names_op(findings, title: str) -> bool:
    return len(findings) == 1 and f"re-implements {title} " in findings[0].message


# ---- math functions imported from the package's own helper module --------------------------
SOFTMAX_WITH_IMPORTED_EXP = """
from mypkg.ops.utils.op import exp

@triton.jit
def softmax_fwd_kernel(x, p, D: tl.constexpr, BD: tl.constexpr):
    i_n = tl.program_id(0).to(tl.int64)
    o_d = tl.arange(0, BD)
    m_d = o_d < D
    b_x = tl.load(x + i_n * D + o_d, mask=m_d, other=-float('inf'))
    b_m = tl.max(b_x, 0)
    b_x = exp(b_x - b_m)
    {last}
"""


def test_imported_exp_is_read_as_exp():
    code = SOFTMAX_WITH_IMPORTED_EXP.format(last="tl.store(p + i_n * D + o_d, b_x / tl.sum(b_x, 0), mask=m_d)")
    assert names_op(tri003(code), "softmax")


def test_imported_exp_without_the_normalisation_is_not_softmax():
    code = SOFTMAX_WITH_IMPORTED_EXP.format(last="tl.store(p + i_n * D + o_d, b_x, mask=m_d)")
    assert tri003(code) == []


def test_module_alias_of_a_shim_function():
    code = """
    from mypkg.utils import tl_extra_shim
    tanh = tl_extra_shim.tanh

    @triton.jit
    def geglu_kernel(a_ptr, b_ptr, out_ptr, N, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < N
        a = tl.load(a_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        gelu = 0.5 * a * (1 + tanh(0.79788456 * a * (1 + 0.044715 * a * a)))
        tl.store(out_ptr + offs, gelu * b, mask=mask)
    """
    assert names_op(tri003(code), "GeGLU")


# ---- pow, factored polynomial ---------------------------------------------------------------
GEGLU_POW = """
from mypkg.utils import tl_extra_shim
tanh = tl_extra_shim.tanh
pow = tl_extra_shim.pow

@triton.jit
def geglu_kernel(in_ptr, out_ptr, M, H, BLOCK_H: tl.constexpr):
    row = tl.program_id(0)
    offs_h = tl.arange(0, BLOCK_H)
    mask = offs_h < H
    x_a = tl.load(in_ptr + row * 2 * H + offs_h, mask=mask, other=0.0).to(tl.float32)
    x_b = tl.load(in_ptr + row * 2 * H + H + offs_h, mask=mask, other=0.0).to(tl.float32)
    act = {act}
    tl.store(out_ptr + row * H + offs_h, act * x_b, mask=mask)
"""


def test_pow_and_factored_cubic_are_tanh_gelu():
    code = GEGLU_POW.format(act="0.5 * x_a * (1 + tanh(0.79788456 * x_a * (1 + 0.044715 * pow(x_a, 2))))")
    assert names_op(tri003(code), "GeGLU")


def test_tanh_without_the_cubic_is_not_gelu():
    code = GEGLU_POW.format(act="0.5 * x_a * (1 + tanh(0.79788456 * x_a * (1 + 0.044715 * pow(x_a, 4))))")
    assert tri003(code) == []


# ---- constant folding and the exact-erf judgement ---------------------------------------------
GEGLU_ERF = """
@triton.jit
def gelu_and_mul_kernel(x_ptr, out_ptr, d, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < d
    x1 = tl.load(x_ptr + row * 2 * d + offs, mask=mask, other=0.0).to(tl.float32)
    x3 = tl.load(x_ptr + row * 2 * d + d + offs, mask=mask, other=0.0).to(tl.float32)
    {scale}
    gelu = 0.5 * (1.0 + tl.erf(x1 * s)) * x1
    tl.store(out_ptr + row * d + offs, x3 * gelu, mask=mask)
"""


def test_exact_gelu_through_a_constant_call_is_geglu_but_not_a_drop_in():
    """Read as GeGLU with the exact GELU; Liger ships the tanh form, so by the policy (a variant is
    a finding only where Liger ships it) the rule is quiet."""
    body = GEGLU_ERF.format(scale="s = tl.math.rsqrt(2.0)")
    found = recognised(body)
    assert found.op == "geglu" and "exact erf GELU" in found.differs and "not a drop-in" in found.differs
    assert tri003(body) == []


def test_erf_of_a_per_element_scale_is_not_gelu():
    assert tri003(GEGLU_ERF.format(scale="s = tl.load(x_ptr + offs)")) == []


# ---- elementwise functor kernels (pointwise_dynamic) -------------------------------------------
def test_functor_kernel_returning_silu_times_up():
    code = """
    from mypkg.utils import pointwise_dynamic

    @pointwise_dynamic(promotion_methods=[(0, 1, "DEFAULT")])
    @triton.jit
    def silu_and_mul_kernel(x, y):
        x_fp32 = x.to(tl.float32)
        return tl.fdiv(x_fp32, 1.0 + tl.exp(-x_fp32)) * y
    """
    assert names_op(tri003(code), "SwiGLU")


def test_functor_kernel_of_other_math_is_quiet():
    code = """
    @triton.jit
    def addcmul_kernel(x, y, z, value):
        return x + value * y * z
    """
    assert tri003(code) == []


# ---- RMSNorm needs a mean; where(mask, x, 0) squared ----------------------------------------
ROW_NORM = """
@triton.jit
def row_norm_kernel(x_ptr, w_ptr, y_ptr, D, eps, BD: tl.constexpr):
    i_t = tl.program_id(0)
    o_d = tl.arange(0, BD)
    m_d = o_d < D
    b_x = tl.load(x_ptr + i_t * D + o_d, mask=m_d, other=0.0).to(tl.float32)
    b_xbar = tl.where(m_d, b_x, 0.0)
    b_var = {var}
    b_rstd = 1 / tl.sqrt(b_var + eps)
    b_w = tl.load(w_ptr + o_d, mask=m_d)
    tl.store(y_ptr + i_t * D + o_d, b_x * b_rstd * b_w, mask=m_d)
"""


@pytest.mark.parametrize("var", ["tl.sum(b_xbar * b_xbar, axis=0) / D", "tl.sum(b_xbar * b_xbar, axis=0) * (1.0 / 4096)",
                                 "tl.sum(b_xbar * b_xbar / D, axis=0)"])
def test_masked_mean_of_squares_is_rms_norm(var):
    assert names_op(tri003(ROW_NORM.format(var=var)), "RMSNorm")


def test_l2_normalisation_is_not_rms_norm():
    assert tri003(ROW_NORM.format(var="tl.sum(b_xbar * b_xbar, axis=0)")) == []


# ---- gated norms and gated scans are not SwiGLU ------------------------------------------------
GATED_NORM = """
@triton.jit
def norm_gate_kernel(x_ptr, g_ptr, w_ptr, y_ptr, D, eps, HAS_GATE: tl.constexpr, BD: tl.constexpr):
    i_t = tl.program_id(0)
    o_d = tl.arange(0, BD)
    m_d = o_d < D
    b_x = tl.load(x_ptr + i_t * D + o_d, mask=m_d, other=0.0).to(tl.float32)
    b_mean = tl.sum(b_x, axis=0) / D
    b_xbar = tl.where(m_d, b_x - b_mean, 0.0)
    b_rstd = 1 / tl.sqrt(tl.sum(b_xbar * b_xbar, axis=0) / D + eps)
    b_w = tl.load(w_ptr + o_d, mask=m_d).to(tl.float32)
    b_y = (b_x - b_mean) * b_rstd * b_w
    {gate}
    tl.store(y_ptr + i_t * D + o_d, b_y, mask=m_d)
"""


def test_plain_layer_norm_still_fires():
    assert names_op(tri003(GATED_NORM.format(gate="")), "LayerNorm")


@pytest.mark.parametrize("gate", [
    "b_g = tl.load(g_ptr + i_t * D + o_d, mask=m_d).to(tl.float32)\n    b_y = b_y * b_g * tl.sigmoid(b_g)",
    "if HAS_GATE:\n        b_g = tl.load(g_ptr + i_t * D + o_d, mask=m_d).to(tl.float32)\n        b_y = b_y * b_g * tl.sigmoid(b_g)",
])
def test_gated_norm_is_neither_swiglu_nor_layer_norm(gate):
    assert tri003(GATED_NORM.format(gate=gate)) == []


def test_gated_scan_output_is_not_swiglu():
    code = """
    @triton.jit
    def scan_update_kernel(state_ptr, c_ptr, z_ptr, out_ptr, D, BD: tl.constexpr, BN: tl.constexpr):
        pid = tl.program_id(0)
        o_d = tl.arange(0, BD)
        o_n = tl.arange(0, BN)
        state = tl.load(state_ptr + pid * BD * BN + o_d[:, None] * BN + o_n[None, :])
        c = tl.load(c_ptr + pid * BN + o_n)
        out = tl.sum(state * c[None, :], axis=1)
        z = tl.load(z_ptr + pid * BD + o_d).to(tl.float32)
        tl.store(out_ptr + pid * BD + o_d, out * z * tl.sigmoid(z))
    """
    assert tri003(code) == []


def test_silu_of_a_transformed_parameter_is_not_swiglu():
    code = """
    @triton.jit
    def gate_bwd_kernel(g_ptr, dy_ptr, a_log_ptr, dg_ptr, T, BT: tl.constexpr):
        o_t = tl.program_id(0) * BT + tl.arange(0, BT)
        m_t = o_t < T
        b_g = tl.load(g_ptr + o_t, mask=m_t, other=0.0).to(tl.float32)
        b_dy = tl.load(dy_ptr + o_t, mask=m_t, other=0.0).to(tl.float32)
        b_a = tl.exp(tl.load(a_log_ptr).to(tl.float32))
        b_inner = b_a * b_g
        tl.store(dg_ptr + o_t, b_dy * b_inner * tl.sigmoid(b_inner), mask=m_t)
    """
    assert tri003(code) == []


def test_swiglu_with_a_scalar_gate_multiplier_still_fires():
    code = """
    @triton.jit
    def swiglu_kernel(a_ptr, b_ptr, c_ptr, n, mult, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        a = tl.load(a_ptr + offs, mask=offs < n).to(tl.float32) * mult
        b = tl.load(b_ptr + offs, mask=offs < n)
        tl.store(c_ptr + offs, a * tl.sigmoid(a) * b, mask=offs < n)
    """
    assert names_op(tri003(code), "SwiGLU")


# ---- GroupNorm weight behind a constexpr None branch --------------------------------------------
GROUP_NORM = """
@triton.jit
def group_norm_kernel(X, Y, W, B, group_size, C, HW, num_groups, eps,
                      BLOCK_GROUP_SIZE: tl.constexpr, BLOCK_HW_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    group = pid % num_groups
    num_elements = group_size * HW
    group_offset = tl.arange(0, BLOCK_GROUP_SIZE)
    hw_offset = tl.arange(0, BLOCK_HW_SIZE)
    wb_offset = {w_index}
    xy_offset = pid * num_elements + group_offset[:, None] * HW + hw_offset[None, :]
    xy_mask = (wb_offset[:, None] < C) & (hw_offset[None, :] < HW)
    X_val = tl.load(X + xy_offset, mask=xy_mask, other=0.0).to(tl.float32)
    mean = tl.sum(X_val) / num_elements
    x = tl.where(xy_mask, X_val - mean, 0.0)
    rstd = tl.rsqrt(tl.sum(x * x) / num_elements + eps)
    if W is None:
        weight = 1
    else:
        weight = tl.load(W + wb_offset, mask=wb_offset < C, other=0.0)[:, None]
    tl.store(Y + xy_offset, x * rstd * weight, mask=xy_mask)
"""


def test_group_norm_with_optional_weight():
    assert names_op(tri003(GROUP_NORM.format(w_index="group * group_size + group_offset")), "GroupNorm")


def test_one_scale_per_row_is_layer_norm_not_group_norm():
    assert names_op(tri003(GROUP_NORM.format(w_index="pid + group_offset * 0")), "LayerNorm")


# ---- complex dot product is not a rotation; sampling is not a softmax ---------------------------
def test_summed_complex_products_are_not_rope():
    code = """
    @triton.jit
    def vdot_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        mask = offs < n
        ar = tl.load(a_ptr + 2 * offs, mask=mask)
        ai = tl.load(a_ptr + 2 * offs + 1, mask=mask)
        br = tl.load(b_ptr + 2 * offs, mask=mask)
        bi = tl.load(b_ptr + 2 * offs + 1, mask=mask)
        tl.store(out_ptr, tl.sum(ar * br - ai * bi))
        tl.store(out_ptr + 1, tl.sum(ar * bi + ai * br))
    """
    assert tri003(code) == []


def test_elementwise_complex_rotation_is_still_rope():
    code = """
    @triton.jit
    def rope_pairs_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        xr = tl.load(x_ptr + 2 * offs, mask=mask)
        xi = tl.load(x_ptr + 2 * offs + 1, mask=mask)
        c = tl.load(cos_ptr + offs, mask=mask)
        s = tl.load(sin_ptr + offs, mask=mask)
        tl.store(out_ptr + 2 * offs, xr * c - xi * s, mask=mask)
        tl.store(out_ptr + 2 * offs + 1, xi * c + xr * s, mask=mask)
    """
    found = recognised(code)
    assert found.op == "rope" and "interleaved pairs" in found.differs   # read as RoPE, on pairs
    assert tri003(code) == []   # which Liger's half-layout RoPE does not serve


SAMPLE = """
@triton.jit
def sample_kernel(logits_ptr, probs_ptr, seed, V, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(logits_ptr + row * V + cols, mask=cols < V, other=-float('inf'))
    e = tl.exp2((x - tl.max(x, axis=0)) * 1.4426950408889634)
    p = e / tl.sum(e, axis=0)
    {extra}
    tl.store(probs_ptr + row * V + cols, p, mask=cols < V)
"""


def test_base2_softmax_is_softmax():
    assert names_op(tri003(SAMPLE.format(extra="")), "softmax")


def test_softmax_that_draws_random_numbers_is_sampling():
    extra = "u = tl.rand(seed, row)\n    tl.store(probs_ptr + row * V + V, tl.sum((tl.cumsum(p, axis=0) < u).to(tl.int32), axis=0))"
    assert tri003(SAMPLE.format(extra=extra)) == []


# ---- Welford statistics --------------------------------------------------------------------------
WELFORD = """
@triton.jit
def layer_norm_loop_kernel(in_ptr, out_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, N, eps, TILE_N: tl.constexpr):
    pid = tl.program_id(0)
    m = tl.zeros((TILE_N,), dtype=tl.float32)
    s = tl.zeros((TILE_N,), dtype=tl.float32)
    cnt = tl.zeros((TILE_N,), dtype=tl.int32)
    for step in range(0, tl.cdiv(N, TILE_N)):
        n_offsets = step * TILE_N + tl.arange(0, TILE_N)
        mask = n_offsets < N
        x = tl.load(in_ptr + pid * N + n_offsets, mask=mask).to(tl.float32)
        new_m = tl.where(mask, m + (x - m) / (step + 1), m)
        new_s = tl.where(mask, s + (x - new_m) * (x - m), s)
        cnt += mask.to(tl.int32)
        m = new_m
        s = new_s
    final_m = tl.sum(m * cnt) / N
    var = tl.sum(s + cnt * (m - final_m) * (m - final_m)) / N
    rstd = tl.math.rsqrt(var + eps)
    tl.store(mean_ptr + pid, final_m)
    tl.store(rstd_ptr + pid, rstd)
    {normalise}
"""


def test_welford_statistics_with_the_normalised_output_are_layer_norm():
    normalise = """for step in range(0, tl.cdiv(N, TILE_N)):
        n_offsets = step * TILE_N + tl.arange(0, TILE_N)
        mask = n_offsets < N
        x = tl.load(in_ptr + pid * N + n_offsets, mask=mask).to(tl.float32)
        w = tl.load(w_ptr + n_offsets, mask=mask)
        b = tl.load(b_ptr + n_offsets, mask=mask)
        tl.store(out_ptr + pid * N + n_offsets, (x - final_m) * rstd * w + b, mask=mask)"""
    assert names_op(tri003(WELFORD.format(normalise=normalise)), "LayerNorm")


def test_welford_statistics_alone_are_not_a_norm():
    assert tri003(WELFORD.format(normalise="")) == []


# ---- RoPE spellings: fma with a negated operand, a partner loaded at the rotated index --------
def test_rotation_written_with_fma_of_a_negated_operand():
    code = """
    @triton.jit
    def rotary_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, half, BLOCK: tl.constexpr):
        tok = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        mask = offs < half
        c = tl.load(cos_ptr + tok * half + offs, mask=mask).to(tl.float32)
        s = tl.load(sin_ptr + tok * half + offs, mask=mask).to(tl.float32)
        x1 = tl.load(x_ptr + tok * 2 * half + offs, mask=mask).to(tl.float32)
        x2 = tl.load(x_ptr + tok * 2 * half + half + offs, mask=mask).to(tl.float32)
        tl.store(out_ptr + tok * 2 * half + offs, tl.fma(-x2, s, x1 * c), mask=mask)
        tl.store(out_ptr + tok * 2 * half + half + offs, tl.fma(x1, s, x2 * c), mask=mask)
    """
    assert names_op(tri003(code), "rotary position embedding (RoPE)")


PARTNER_ROPE = """
@triton.jit
def rope_rotate_half_kernel(q_ptr, cos_ptr, sin_ptr, out_ptr, N, S: tl.constexpr, D: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < N
    col = offsets % D
    rotated = offsets + tl.where(col < D // 2, D // 2, -D // 2)
    freq = ((offsets // D) % S) * D + col
    c = tl.load(cos_ptr + freq, mask, other=0)
    s = tl.load(sin_ptr + freq, mask, other=0)
    x = tl.load(q_ptr + offsets, mask, other=0).to(tl.float32)
    r = tl.load(q_ptr + rotated, mask, other=0).to(tl.float32)
    {sign}
    tl.store(out_ptr + offsets, x * c + r * s, mask)
"""


def test_rotate_half_with_the_partner_loaded_and_a_sign_flip():
    assert names_op(tri003(PARTNER_ROPE.format(sign="r = tl.where(col < D // 2, -r, r)")), "rotary position embedding (RoPE)")


def test_partner_sum_without_a_sign_is_not_a_rotation():
    assert tri003(PARTNER_ROPE.format(sign="")) == []


def test_complex_multiply_functor_is_not_rope():
    code = """
    @triton.jit
    def mul_complex_kernel(ar, ai, br, bi):
        real = ar * br - ai * bi
        imag = ar * bi + ai * br
        return real, imag
    """
    assert tri003(code) == []


def test_rope_that_also_reduces_an_amax_is_a_quantisation_prologue():
    code = """
    @triton.jit
    def rope_amax_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, amax_ptr, half, BLOCK: tl.constexpr):
        tok = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        c = tl.load(cos_ptr + tok * half + offs)
        s = tl.load(sin_ptr + tok * half + offs)
        x1 = tl.load(x_ptr + tok * 2 * half + offs)
        x2 = tl.load(x_ptr + tok * 2 * half + half + offs)
        o1 = x1 * c - x2 * s
        o2 = x2 * c + x1 * s
        tl.store(out_ptr + tok * 2 * half + offs, o1)
        tl.store(out_ptr + tok * 2 * half + half + offs, o2)
        tl.store(amax_ptr + tok, tl.maximum(tl.max(tl.abs(o1)), tl.max(tl.abs(o2))))
    """
    assert tri003(code) == []


def test_softmax_feeding_an_inverse_cdf_is_sampling():
    extra = "u = tl.load(probs_ptr + row)\n    tl.store(probs_ptr + row * V + V, tl.sum((tl.cumsum(p, axis=0) < u).to(tl.int32), axis=0))"
    assert tri003(SAMPLE.format(extra=extra)) == []


def test_silu_gate_beside_a_row_reduction_is_a_norm_backward():
    code = """
    @triton.jit
    def gated_norm_bwd_kernel(x_ptr, g_ptr, dy_ptr, rstd_ptr, w_ptr, y_ptr, dx_ptr, D, BD: tl.constexpr):
        row = tl.program_id(0)
        o_d = tl.arange(0, BD)
        m_d = o_d < D
        x = tl.load(x_ptr + row * D + o_d, mask=m_d, other=0.0).to(tl.float32)
        g = tl.load(g_ptr + row * D + o_d, mask=m_d, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + row * D + o_d, mask=m_d, other=0.0).to(tl.float32)
        rstd = tl.load(rstd_ptr + row)
        w = tl.load(w_ptr + o_d, mask=m_d).to(tl.float32)
        xhat = x * rstd
        tl.store(y_ptr + row * D + o_d, xhat * w * g * tl.sigmoid(g), mask=m_d)
        wdy = w * dy * g * tl.sigmoid(g)
        c1 = tl.sum(xhat * wdy, axis=0) / D
        tl.store(dx_ptr + row * D + o_d, (wdy - xhat * c1) * rstd, mask=m_d)
    """
    assert tri003(code) == []


# ---- constexpr specialisation: each branch is its own op -----------------------------------------
ACT_GLU = """
@triton.jit
def act_and_mul_kernel(x_ptr, out_ptr, d, ACT: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < d
    a = tl.load(x_ptr + row * 2 * d + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(x_ptr + row * 2 * d + d + offs, mask=mask, other=0.0).to(tl.float32)
    if ACT == "silu":
        y = a * tl.sigmoid(a)
    elif ACT == "gelu_tanh":
        y = 0.5 * a * (1 + tl.math.tanh(0.7978845608 * (a + 0.044715 * a * a * a)))
    else:
        y = {other}
    tl.store(out_ptr + row * d + offs, y * b, mask=mask)
"""


def test_each_activation_branch_is_named_with_its_op():
    findings = tri003(ACT_GLU.format(other="a"))
    assert len(findings) == 1
    msg = findings[0].message
    assert "specialised by the constexpr `ACT`" in msg
    assert "re-implements SwiGLU when `ACT == 'silu'`" in msg and "liger_swiglu(a, b)" in msg
    assert "re-implements GeGLU when `ACT == 'gelu_tanh'`" in msg and "liger_geglu(a, b)" in msg


def test_rms_or_layer_norm_chosen_by_a_flag():
    code = """
    @triton.jit
    def norm_fwd_kernel(x_ptr, y_ptr, w_ptr, D, eps, IS_RMS_NORM: tl.constexpr, HAS_WEIGHT: tl.constexpr, BD: tl.constexpr):
        row = tl.program_id(0)
        o_d = tl.arange(0, BD)
        m_d = o_d < D
        b_x = tl.load(x_ptr + row * D + o_d, mask=m_d, other=0.0).to(tl.float32)
        if not IS_RMS_NORM:
            b_mean = tl.sum(b_x, axis=0) / D
            b_xbar = tl.where(m_d, b_x - b_mean, 0.0)
        else:
            b_xbar = tl.where(m_d, b_x, 0.0)
        b_rstd = 1 / tl.sqrt(tl.sum(b_xbar * b_xbar, axis=0) / D + eps)
        b_x_hat = (b_x - b_mean) * b_rstd if not IS_RMS_NORM else b_x * b_rstd
        b_w = tl.load(w_ptr + o_d, mask=m_d)
        b_y = b_x_hat * b_w if HAS_WEIGHT else b_x_hat
        tl.store(y_ptr + row * D + o_d, b_y, mask=m_d)
    """
    findings = tri003(code)
    assert len(findings) == 1
    msg = findings[0].message
    assert "re-implements RMSNorm when `IS_RMS_NORM` is true" in msg
    assert "re-implements LayerNorm when `IS_RMS_NORM` is false" in msg
    assert "HAS_WEIGHT" not in msg   # a flag that does not change the op is not a branch worth naming


def test_a_flag_that_keeps_the_op_gives_the_plain_message():
    findings = tri003(ROW_NORM.replace("D, eps, BD", "D, eps, HAS_W: tl.constexpr, BD").replace(
        "b_x * b_rstd * b_w", "b_x * b_rstd * b_w if HAS_W else b_x * b_rstd").format(var="tl.sum(b_xbar * b_xbar, axis=0) / D"))
    assert names_op(findings, "RMSNorm") and "specialised" not in findings[0].message


def test_gated_norm_activation_branches_stay_quiet():
    code = GATED_NORM.replace("HAS_GATE: tl.constexpr", "ACTIVATION: tl.constexpr").format(gate="""b_g = tl.load(g_ptr + i_t * D + o_d, mask=m_d).to(tl.float32)
    if ACTIVATION == "swish":
        b_y = b_y * b_g * tl.sigmoid(b_g)
    elif ACTIVATION == "sigmoid":
        b_y = b_y * tl.sigmoid(b_g)""")
    assert tri003(code) == []


# ---- cross-entropy written as -x[target] plus the logsumexp -------------------------------------
CE_SPLIT = """
from mypkg.ops.utils.op import exp, log

@triton.jit
def ce_fwd_kernel(logits, target, loss, lse, ignore_index, label_smoothing: tl.constexpr, V, BV: tl.constexpr):
    i_n = tl.program_id(0).to(tl.int64)
    o_v = tl.arange(0, BV)
    m_v = o_v < V
    b_logits = tl.load(logits + i_n * V + o_v, mask=m_v, other=-float('inf')).to(tl.float32)
    b_max = tl.max(b_logits, 0)
    b_lse = log(tl.sum(exp(b_logits - b_max), 0)) + b_max
    b_target = tl.load(target + i_n).to(tl.int64)
    b_loss = 0.0
    if b_target != ignore_index:
        b_loss = -tl.load(logits + i_n * V + b_target).to(tl.float32)
        if label_smoothing > 0:
            b_loss = (1 - label_smoothing) * b_loss
        b_loss += {lse_term}
    tl.store(loss + i_n, b_loss)
    tl.store(lse + i_n, b_lse)
"""


def test_negated_target_logit_plus_logsumexp_is_cross_entropy():
    assert names_op(tri003(CE_SPLIT.format(lse_term="b_lse")), "cross-entropy")


def test_negated_target_logit_without_the_logsumexp_is_not():
    assert tri003(CE_SPLIT.format(lse_term="b_max")) == []


# ---- modulated RMSNorm (AdaLN) against Gemma's (1 + w) ------------------------------------------
MOD_NORM = """
@triton.jit
def rmsnorm_scale_shift_kernel(x_ptr, w_ptr, scale_ptr, shift_ptr, y_ptr, DIM, seq_len, EPS, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < DIM
    x = tl.load(x_ptr + row * DIM + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = tl.math.rsqrt(tl.sum(x * x, axis=0) / DIM + EPS)
    w = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
    {mod}
    tl.store(y_ptr + row * DIM + cols, y, mask=mask)
"""


def test_rms_norm_times_one_plus_a_per_row_scale_is_modulated_rms_norm():
    mod = """batch = row // seq_len
    scale = tl.load(scale_ptr + batch * DIM + cols, mask=mask).to(tl.float32)
    shift = tl.load(shift_ptr + batch * DIM + cols, mask=mask).to(tl.float32)
    y = x * rstd * w * (1.0 + scale) + shift"""
    findings = tri003(MOD_NORM.format(mod=mod))
    assert names_op(findings, "modulated RMSNorm (AdaLN)")
    assert "liger_modulated_rms_norm(X, W, scale, shift=None, eps=1e-6)" in findings[0].message


def test_gemma_one_plus_weight_stays_rms_norm():
    findings = tri003(MOD_NORM.format(mod="y = x * rstd * (1.0 + w)"))
    assert names_op(findings, "RMSNorm")


# ---- instance norm is GroupNorm with a group per channel ----------------------------------------
def test_instance_norm_is_group_norm():
    code = """
    @triton.jit
    def instance_norm_kernel(in_ptr, out_ptr, weight_ptr, bias_ptr, M, N, C, eps, BLOCK_N: tl.constexpr):
        pid = tl.program_id(0)
        c = pid % C
        n_offsets = tl.arange(0, BLOCK_N)
        mask = n_offsets < N
        x = tl.load(in_ptr + pid * N + n_offsets, mask=mask, other=0.0).to(tl.float32)
        m = tl.sum(x) / N
        d = tl.where(mask, x - m, 0.0)
        rstd = tl.math.rsqrt(tl.sum(d * d) / N + eps)
        w = tl.load(weight_ptr + c)
        b = tl.load(bias_ptr + c)
        tl.store(out_ptr + pid * N + n_offsets, (x - m) * rstd * w + b, mask=mask)
    """
    assert names_op(tri003(code), "GroupNorm")


# ---- helpers defined in another module of the workspace, inlined through the index ----------------
def test_helper_from_another_module_is_inlined(tmp_path):
    from tritonify.diagnostics.engine import lint_text
    from tritonify.diagnostics.settings import Settings

    pkg = tmp_path / "mypkg"
    (pkg / "ops").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "ops" / "__init__.py").write_text("")
    (pkg / "ops" / "act.py").write_text(textwrap.dedent("""
        import triton
        import triton.language as tl

        @triton.jit
        def swish(x):
            return x * tl.sigmoid(x)

        @triton.jit
        def squash(x):
            return x * 0.5 + 1.0
    """))
    kernel = textwrap.dedent("""
        import triton
        import triton.language as tl
        from mypkg.ops.act import {helper}

        @triton.jit
        def glu_kernel(g_ptr, u_ptr, o_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            g = tl.load(g_ptr + offs, mask=offs < n).to(tl.float32)
            u = tl.load(u_ptr + offs, mask=offs < n).to(tl.float32)
            tl.store(o_ptr + offs, {helper}(g) * u, mask=offs < n)
    """)
    path = pkg / "kern.py"
    for helper, expected in (("swish", 1), ("squash", 0)):
        path.write_text(kernel.format(helper=helper))
        findings = [f for f in lint_text(path.read_text(), str(path), Settings(select=("TRI003",))).findings
                    if f.code == "TRI003"]
        assert len(findings) == expected, (helper, findings)
        if expected:
            assert "re-implements SwiGLU " in findings[0].message


# ---- a one-instruction PTX approximation is the function it computes -----------------------------
ASM_NORM = """
@triton.jit
def _rsqrt(x):
    return tl.inline_asm_elementwise("{asm}", "=f,f", [x], tl.float32, True, 1)

@triton.jit
def add_rms_norm_kernel(x_ptr, res_ptr, w_ptr, out_ptr, res_out_ptr, H: tl.constexpr, eps):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, H)
    w = tl.load(w_ptr + offs).to(tl.float32)
    s = tl.load(x_ptr + row * H + offs).to(tl.float32)
    s += tl.load(res_ptr + row * H + offs).to(tl.float32)
    tl.store(res_out_ptr + row * H + offs, s.to(tl.bfloat16))
    rs = _rsqrt(tl.sum(s * s, axis=0) / H + eps)
    tl.store(out_ptr + row * H + offs, (s * rs * w).to(tl.bfloat16))
"""


def test_ptx_rsqrt_approximation_is_rsqrt():
    assert names_op(tri003(ASM_NORM.format(asm="rsqrt.approx.ftz.f32 $0, $1;")), "residual add + RMSNorm")


def test_other_inline_asm_is_opaque():
    assert tri003(ASM_NORM.format(asm="mov.b32 $0, $1;")) == []


# ---- gathers and sampling math are not the op itself --------------------------------------------
EMBED_NORM = """
@triton.jit
def embed_rmsnorm_kernel(ids_ptr, table_ptr, w_ptr, out_ptr, n_cols, eps, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    row = {row}
    x = tl.load(table_ptr + row * n_cols + offs, mask=mask, other=0.0).to(tl.float32)
    rstd = tl.math.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + pid * n_cols + offs, x * rstd * w, mask=mask)
"""


def test_norm_of_rows_looked_up_through_ids_is_a_fused_embedding():
    assert tri003(EMBED_NORM.format(row="tl.load(ids_ptr + pid).to(tl.int64)")) == []


def test_the_same_norm_of_its_own_row_fires():
    assert names_op(tri003(EMBED_NORM.format(row="pid")), "RMSNorm")


LOGPROB = """
@triton.jit
def token_logprob_kernel(logits_ptr, token_ptr, out_ptr, V, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(logits_ptr + row * V + cols, mask=cols < V, other=-float('inf')).to(tl.float32)
    m = tl.max(x, axis=0)
    lse = m + tl.log(tl.sum(tl.exp(x - m), axis=0))
    tok = tl.load(token_ptr + row)
    x_t = tl.load(logits_ptr + row * V + tok).to(tl.float32)
    {out}
"""


def test_loss_at_the_target_is_cross_entropy():
    assert names_op(tri003(LOGPROB.format(out="tl.store(out_ptr + row, lse - x_t)")), "cross-entropy")


def test_probability_at_the_sampled_token_is_acceptance_math():
    # exp(x_t - lse) compared in rejection sampling: a probability, not a loss
    out = "u = tl.load(out_ptr + row)\n    tl.store(out_ptr + row, (tl.exp(x_t - lse) > u).to(tl.float32))"
    assert tri003(LOGPROB.format(out=out)) == []


# ---- drop-in or not: what differs is said, and no helper is offered ------------------------------
def test_gemma_rms_norm_names_the_offset_and_the_gemma_module():
    (f,) = tri003(MOD_NORM.format(mod="y = x * rstd * (1.0 + w)"))
    assert "offset=1.0, casting_mode='gemma'" in f.message and "LigerRMSNormForGemma(hidden_size" in f.message
    assert f.fixes == []


def test_plain_rms_norm_is_a_drop_in_with_a_helper():
    (f,) = tri003(MOD_NORM.format(mod="y = x * rstd * w"))
    assert ", but " not in f.message and f.fixes


ROPE_PAIRS = """
@triton.jit
def rope_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, half, BLOCK: tl.constexpr):
    tok = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    c = tl.load(cos_ptr + tok * half + offs)
    s = tl.load(sin_ptr + tok * half + offs)
    x1 = tl.load(x_ptr + tok * 2 * half + {i1})
    x2 = tl.load(x_ptr + tok * 2 * half + {i2})
    tl.store(out_ptr + tok * 2 * half + {i1}, x1 * c - x2 * s)
    tl.store(out_ptr + tok * 2 * half + {i2}, x2 * c + x1 * s)
"""


def test_interleaved_pairs_are_rope_but_not_liger_layout():
    body = ROPE_PAIRS.format(i1="2 * offs", i2="2 * offs + 1")
    found = recognised(body)
    assert found.op == "rope" and "interleaved pairs" in found.differs
    assert tri003(body) == []   # Liger's RoPE rotates halves: not a finding


def test_rotate_half_layout_is_the_drop_in():
    (f,) = tri003(ROPE_PAIRS.format(i1="offs", i2="half + offs"))
    assert "interleaved" not in f.message and f.fixes


KL = """
@triton.jit
def kl_kernel(p_ptr, q_ptr, out_ptr, V, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < V
    {body}
    tl.store(out_ptr + row * V + cols, p * (tl.log(p) - log_q), mask=mask)
"""


def test_kl_on_logits_is_only_partly_liger():
    # student and teacher logits, log-softmax of both in the kernel, KL(teacher || student)
    code = """
    @triton.jit
    def kl_logits_kernel(logits, target_logits, loss, V, BV: tl.constexpr):
        i_n = tl.program_id(0).to(tl.int64)
        o_x = tl.arange(0, BV)
        b_sl = tl.load(logits + i_n * V + o_x, mask=o_x < V, other=float('-inf'))
        b_tl = tl.load(target_logits + i_n * V + o_x, mask=o_x < V, other=float('-inf'))
        sm = tl.max(b_sl)
        tm = tl.max(b_tl)
        sd = tl.sum(tl.exp(b_sl - sm))
        td = tl.sum(tl.exp(b_tl - tm))
        b_sp_log = b_sl - sm - tl.log(sd)
        b_tp_log = b_tl - tm - tl.log(td)
        b_kl = tl.where(o_x < V, tl.exp(b_tp_log) * (b_tp_log - b_sp_log), 0)
        tl.store(loss + i_n, tl.sum(b_kl))
    """
    found = recognised(code)
    assert found.op == "kl_div" and "takes logits" in found.differs
    assert tri003(code) == []   # Liger's KL takes log-probabilities: not a drop-in


def test_kl_on_probabilities_is_the_drop_in():
    body = """p = tl.load(p_ptr + row * V + cols, mask=mask, other=1.0)
    log_q = tl.load(q_ptr + row * V + cols, mask=mask, other=0.0)"""
    (f,) = tri003(KL.format(body=body))
    assert "re-implements KL divergence " in f.message and "takes logits" not in f.message and f.fixes


QK_NORM_ROPE = """
@triton.jit
def qk_norm_rope_kernel(q_ptr, k_ptr, out_ptr, qw_ptr, kw_ptr, cos_ptr, sin_ptr, q_heads, head_dim: tl.constexpr,
                        eps, BLOCK: tl.constexpr):
    tok = tl.program_id(0)
    head = tl.program_id(1)
    cols = tl.arange(0, BLOCK)
    mask = cols < head_dim
    is_q = head < q_heads
    in_ptr = tl.where(is_q, q_ptr, k_ptr)
    w_ptr = tl.where(is_q, qw_ptr, kw_ptr)
    base = in_ptr + tok * head_dim * 8 + head * head_dim
    x = tl.load(base + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / head_dim + eps)
    normed = x * rstd * (1.0 + w)
    {rope}
"""


def test_qk_gemma_norm_with_the_weight_chosen_per_head_is_gemma_not_modulated():
    findings = tri003(QK_NORM_ROPE.format(rope="tl.store(out_ptr + tok * head_dim * 8 + head * head_dim + cols, normed, mask=mask)"))
    assert names_op(findings, "RMSNorm") and "Gemma's form" in findings[0].message


def test_norm_fused_with_a_partner_rope_is_fused():
    rope = """half: tl.constexpr = head_dim // 2
    partner = tl.where(cols < half, cols + half, cols - half)
    sign = tl.where(cols < half, -1.0, 1.0)
    xp = tl.load(base + partner, mask=mask, other=0.0).to(tl.float32)
    wp = tl.load(w_ptr + partner, mask=mask, other=0.0).to(tl.float32)
    partner_normed = xp * rstd * (1.0 + wp)
    c = tl.load(cos_ptr + tok * head_dim + cols % half)
    s = tl.load(sin_ptr + tok * head_dim + cols % half)
    tl.store(out_ptr + tok * head_dim * 8 + head * head_dim + cols, normed * c + sign * partner_normed * s, mask=mask)"""
    assert tri003(QK_NORM_ROPE.format(rope=rope)) == []
