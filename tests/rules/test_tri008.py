from tritonify.diagnostics.model import Severity

from tests.lintutil import lint, lint_fixture, marked_lines


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI008.py", "TRI008")
    assert [f.line for f in findings] == marked_lines("TRI008.py", "TRI008")
    assert all(not f.fixes for f in findings)
    assert {f.severity for f in findings} == {Severity.WARNING}  # only atomics in loops are reported


def test_messages_fit_the_pattern():
    by_line = {f.line: f.message for f in lint_fixture("TRI008.py", "TRI008")}
    loop_inv, hot_bins, _, token_grad = marked_lines("TRI008.py", "TRI008")
    assert "one atomic per program after it" in by_line[loop_inv]
    assert "hot addresses" in by_line[hot_bins]
    assert "other programs update too" in by_line[token_grad] and "float sum order" in by_line[token_grad]


LOOPED = """
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        tl.atomic_add(out_ptr + pid, tl.sum(tl.load(x_ptr + offs), axis=0))
"""


def test_hoisting_the_atomic_out_of_the_loop_silences_it():
    assert len(lint(LOOPED, "TRI008")) == 1
    hoisted = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        acc = 0.0
        for start in range(0, n, BLOCK):
            offs = start + tl.arange(0, BLOCK)
            acc += tl.sum(tl.load(x_ptr + offs), axis=0)
        tl.atomic_add(out_ptr + pid, acc)
    """
    assert lint(hoisted, "TRI008") == []


def test_every_atomic_op_is_recognised_under_an_alias():
    for op in ("atomic_add", "atomic_max", "atomic_min"):
        code = f"""
        import triton
        import triton.language as T

        @triton.jit
        def k(p, v, n):
            for i in range(n):
                T.{op}(p, v)
        """
        (f,) = lint(code, "TRI008")
        assert op in f.message


def test_pid_offset_address_and_guarded_program_are_quiet():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, out_ptr, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        s = tl.sum(tl.load(x_ptr + pid * BLOCK + tl.arange(0, BLOCK)), axis=0)
        tl.atomic_add(out_ptr + pid % 8, s)
        tl.atomic_add(out_ptr, s, mask=pid == 0)
    """
    assert lint(code, "TRI008") == []


def test_one_atomic_per_program_is_not_reported_even_behind_a_data_guard():
    """Round 1 and 2: every once-per-program atomic (a split reduction's one add, a global amax,
    a counter) was labelled NOISE: the cost is paid once per program."""
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, count_ptr, sum_ptr, BLOCK: tl.constexpr):
        x = tl.load(x_ptr + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK))
        tl.atomic_add(sum_ptr, tl.sum(x, axis=0))
        if tl.max(x, axis=0) > 0:
            tl.atomic_add(count_ptr, 1)
    """
    assert lint(code, "TRI008") == []


def test_used_results_cta_scope_and_flags_are_quiet_in_loops():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(cnt_ptr, lock_ptr, out_ptr, n, BLOCK: tl.constexpr):
        for i in range(n):
            slot = tl.atomic_add(cnt_ptr, 1)
            tl.store(out_ptr + slot, i)
            tl.atomic_add(cnt_ptr + i, 1, scope="cta")
            tl.atomic_xchg(lock_ptr + i, 1)
            tl.atomic_cas(lock_ptr + i, 1, 0)
            tl.atomic_or(lock_ptr + i // 32, 1 << (i % 32))
    """
    assert lint(code, "TRI008") == []
    # the same accumulation without the cta scope is reported
    assert len(lint(code.replace(', scope="cta"', ""), "TRI008")) == 1


def test_kernel_without_program_id_is_not_called_every_program():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def single_program(x_ptr, out_ptr, BLOCK: tl.constexpr):
        tl.atomic_add(out_ptr, tl.sum(tl.load(x_ptr + tl.arange(0, BLOCK)), axis=0))
    """
    assert lint(code, "TRI008") == []


def test_noqa_and_plain_python():
    assert lint(LOOPED.replace("axis=0))", "axis=0))  # noqa: TRI008"), "TRI008") == []
    assert lint("import threading\nfor i in range(3):\n    atomic_add(p, 1)\n", "TRI008") == []


def test_moving_address_shared_with_other_programs_is_flagged():
    """Attention backward's dq: the start row depends on the pid, yet other key blocks add to the
    same rows. Using an atomic at all says the addresses are shared."""
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def bwd(dq_ptr, ds_ptr, k_ptr, seqlen, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, D: tl.constexpr):
        start_n = tl.program_id(0)
        begin_m = (start_n * BLOCK_N // BLOCK_M) * BLOCK_M
        offs_d = tl.arange(0, D)
        dq_ptrs = dq_ptr + (begin_m + tl.arange(0, BLOCK_M))[:, None] * D + offs_d[None, :]
        for start_m in range(begin_m, seqlen, BLOCK_M):
            dq = tl.dot(tl.load(ds_ptr + start_m), tl.load(k_ptr + start_n))
            tl.atomic_add(dq_ptrs, dq)
            dq_ptrs += BLOCK_M * D
    """
    (f,) = lint(code, "TRI008")
    assert "other programs update too" in f.message


def test_integer_counts_are_not_described_as_float_sums():
    by_line = {f.line: f.message for f in lint_fixture("TRI008.py", "TRI008")}
    hot_bins = marked_lines("TRI008.py", "TRI008")[1]
    assert "float" not in by_line[hot_bins] and "tl.histogram" in by_line[hot_bins]


def test_grid_stride_histogram_is_flagged_but_persistent_tile_output_is_not():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def hist(x_ptr, hist_ptr, n, BLOCK: tl.constexpr):
        for start in range(tl.program_id(0) * BLOCK, n, tl.num_programs(0) * BLOCK):
            offs = start + tl.arange(0, BLOCK)
            bins = tl.load(x_ptr + offs, mask=offs < n, other=0)
            tl.atomic_add(hist_ptr + bins, 1, mask=offs < n)

    @triton.jit
    def tiles(a_ptr, c_ptr, num_tiles, BLOCK: tl.constexpr):
        for tile in range(tl.program_id(0), num_tiles, tl.num_programs(0)):
            offs = tile * BLOCK + tl.arange(0, BLOCK)
            tl.atomic_add(c_ptr + offs, tl.load(a_ptr + offs))
    """
    (f,) = lint(code, "TRI008")
    assert f.line == 10


# ---- real-world classes (round 1 of the corpus study) -----------------------------------------
def test_one_amax_or_sum_per_program_is_quiet():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def amax(x_ptr, amax_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        tl.atomic_max(amax_ptr, tl.max(tl.abs(x), axis=0))
    """
    assert lint(code, "TRI008") == []
    assert lint(code.replace("tl.atomic_max(amax_ptr, tl.max(tl.abs(x), axis=0))",
                             "tl.atomic_add(amax_ptr, tl.sum(x, axis=0))"), "TRI008") == []


def test_other_targets_are_quiet():
    code = """
    import triton
    import triton.language as tl
    import torch_npu

    @triton.jit
    def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        for start in range(0, n, BLOCK):
            tl.atomic_add(out_ptr, tl.sum(tl.load(x_ptr + start + tl.arange(0, BLOCK)), axis=0))
    """
    assert lint(code, "TRI008") == []
    assert len(lint(code.replace("import torch_npu\n", ""), "TRI008")) == 1


def test_scalar_counts_into_this_programs_own_row_are_quiet():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def count(topk_ptr, cnt_ptr, numel, num_experts, per_program: tl.constexpr):
        pid = tl.program_id(0)
        row = (pid + 1) * num_experts
        for i in range(per_program):
            expert = tl.load(topk_ptr + pid * per_program + i)
            tl.atomic_add(cnt_ptr + row + expert, 1)
    """
    assert lint(code, "TRI008") == []
    shared = code.replace("cnt_ptr + row + expert", "cnt_ptr + expert")
    assert len(lint(shared, "TRI008")) == 1


def test_histogram_summed_over_an_inner_loop_then_added_once_per_bin_block_is_quiet():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def hist(x_ptr, out_ptr, n, R, TILE_R: tl.constexpr, TILE_N: tl.constexpr):
        pid = tl.program_id(0)
        for r0 in range(0, R, TILE_R):
            bins = r0 + tl.arange(0, TILE_R)
            acc = tl.zeros((TILE_R, TILE_N), dtype=tl.int32)
            for n0 in range(0, n, TILE_N):
                offs = n0 + tl.arange(0, TILE_N)
                key = tl.load(x_ptr + pid * n + offs, mask=offs < n, other=-1)
                acc += (bins[:, None] == key[None, :]).to(tl.int32)
            counts = tl.sum(acc, axis=1)
            tl.atomic_add(out_ptr + bins, counts)
    """
    assert lint(code, "TRI008") == []
    # the same histogram with the atomic inside the inner loop is reported
    inner = code.replace("                acc += (bins[:, None] == key[None, :]).to(tl.int32)",
                         "                tl.atomic_add(out_ptr + bins, tl.sum((bins[:, None] == key[None, :]).to(tl.int32), axis=1))")
    assert len(lint(inner, "TRI008")) == 2
