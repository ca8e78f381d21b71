"""TRI060 moe-padding-tiles: tiles past the real count of the sorted (token, expert) list, and loops over
an expert's rows bounded by the capacity while the loaded count masks them."""
from tritonify.diagnostics.registry import get_rule

from tests.lintutil import lint, lint_fixture, marked_lines


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI060.py", "TRI060")
    assert [f.line for f in findings] == marked_lines("TRI060.py", "TRI060")


def test_it_is_opt_in():
    assert get_rule("TRI060").rule.default is False


GROUPED = """
import triton
import triton.language as tl


@triton.jit
def fused_moe_kernel(a_ptr, c_ptr, sorted_token_ids_ptr, expert_ids_ptr, num_tokens_post_padded_ptr, N, EM,
                     num_valid_tokens, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                     GROUP_SIZE_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(EM, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    GUARD
    offs_token = tl.load(sorted_token_ids_ptr + pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M))
    token_mask = offs_token < num_valid_tokens
    off_experts = tl.load(expert_ids_ptr + pid_m)
    if off_experts == -1:
        return
    tl.store(c_ptr + offs_token, tl.load(a_ptr + offs_token, mask=token_mask), mask=token_mask)
"""


def test_the_grouped_gemm_without_the_padded_exit_is_reported_at_the_expert_id_load():
    (f,) = lint(GROUPED.replace("GUARD", "pass"), "TRI060")
    assert f.line == 21   # off_experts = tl.load(expert_ids_ptr + pid_m)
    assert "num_tokens_post_padded_ptr" in f.message and "return early" in f.message
    # `off_experts == -1` (a filtered expert) bounds no program: still reported
    assert "expert_ids_ptr" in f.message


def test_each_real_form_of_the_exit_silences_it():
    exits = [
        "if pid_m * BLOCK_SIZE_M >= tl.load(num_tokens_post_padded_ptr):\n        return",
        "num_tokens_post_padded = tl.load(num_tokens_post_padded_ptr)\n"
        "    if pid_m * BLOCK_SIZE_M >= num_tokens_post_padded:\n        return",
        # SGLang's split-K form: the tile count from the padded total bounds the program id
        "real_m = tl.cdiv(tl.load(num_tokens_post_padded_ptr), BLOCK_SIZE_M)\n"
        "    if pid >= real_m * num_pid_n:\n        return",
        # flag-gems' per-entry kernels: the program id is bounded by the real entry count
        "if pid >= num_valid_tokens:\n        return",
    ]
    for guard in exits:
        assert not lint(GROUPED.replace("GUARD", guard), "TRI060"), guard


def test_a_bound_on_another_axis_does_not_silence_it():
    code = GROUPED.replace("GUARD", "lora_id = tl.program_id(axis=1)\n    if lora_id >= 4:\n        return")
    assert len(lint(code, "TRI060")) == 1


def test_a_kernel_without_a_padded_total_is_not_judged():
    code = GROUPED.replace("GUARD", "pass").replace("num_tokens_post_padded_ptr, ", "")
    assert not lint(code, "TRI060")


MASKED = """
import triton
import triton.language as tl


@triton.jit
def expert_rows(x_ptr, y_ptr, masked_m_ptr, capacity, n_cols, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    e = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    cnt = tl.load(masked_m_ptr + e)
    for m in range(0, BOUND, BLOCK_M):
        rows = m + tl.arange(0, BLOCK_M)
        live = (rows[:, None] < cnt) & (cols[None, :] < n_cols)
        x = tl.load(x_ptr + (e * capacity + rows[:, None]) * n_cols + cols[None, :], mask=live, other=0.0)
        tl.store(y_ptr + (e * capacity + rows[:, None]) * n_cols + cols[None, :], x * 2.0, mask=live)
"""


def test_a_capacity_loop_masked_by_the_experts_count_is_reported_at_its_bound():
    (f,) = lint(MASKED.replace("BOUND", "capacity"), "TRI060")
    assert (f.line, f.column) == (11, 22)
    assert "`cnt`" in f.message and "`capacity`" in f.message


def test_the_loop_bounded_by_the_count_or_by_a_lane_vector_is_quiet():
    assert not lint(MASKED.replace("BOUND", "cnt"), "TRI060")
    # a count per lane (a vector) is not a per-program count: nothing to bound a loop with
    lanes = MASKED.replace("cnt = tl.load(masked_m_ptr + e)", "cnt = tl.load(masked_m_ptr + e * BLOCK_M + tl.arange(0, BLOCK_M))[:, None]")
    assert not lint(lanes.replace("BOUND", "capacity"), "TRI060")


def test_a_count_that_is_not_an_experts_is_not_judged():
    """Outside MoE (a sequence length, a row length) the same loop may be what the author wants (the
    corpus's sparse-attention and sampling kernels): the count must be named as an expert's."""
    code = MASKED.replace("masked_m_ptr", "lengths_ptr").replace("BOUND", "capacity")
    assert len(lint(code, "TRI060")) == 1, "the kernel's name says experts"
    assert not lint(code.replace("def expert_rows", "def scale_rows"), "TRI060")


def test_a_loop_skipped_through_a_named_condition_or_with_a_static_trip_count_is_quiet():
    skipped = MASKED.replace("BOUND", "capacity").replace(
        "        rows = m + tl.arange(0, BLOCK_M)\n",
        "        should_compute = m < cnt\n        if should_compute:\n            pass\n        rows = m + tl.arange(0, BLOCK_M)\n")
    assert not lint(skipped, "TRI060"), "SGLang's sparse-MLA decode form: the block is skipped"
    static = MASKED.replace("BOUND", "N_TILES * BLOCK_M").replace(
        "    cnt = tl.load(masked_m_ptr + e)\n",
        "    cnt = tl.load(masked_m_ptr + e)\n    N_TILES: tl.constexpr = CAP // BLOCK_M\n").replace(
        "BLOCK_N: tl.constexpr):", "BLOCK_N: tl.constexpr, CAP: tl.constexpr):")
    assert not lint(static, "TRI060"), "a trip count computed from constexprs is fixed at compile time"
    assert len(lint(static.replace("N_TILES * BLOCK_M", "capacity"), "TRI060")) == 1
