import ast

from tritonify.diagnostics.model import Applicability, Severity

from tests.lintutil import fixed, lint, lint_fixture, marked_lines


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI012.py", "TRI012")
    assert [f.line for f in findings] == marked_lines("TRI012.py", "TRI012")
    assert all(f.severity is Severity.ERROR for f in findings)


SPLIT_K = """
import triton
import triton.language as tl

@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 64}, num_warps=4),
        triton.Config({"BLOCK": 128}, num_warps=8),
    ],
    key=["M"],
)
@triton.jit
def split_k(a_ptr, c_ptr, M, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    c_ptrs = c_ptr + offs
    tl.atomic_add(c_ptrs, tl.load(a_ptr + offs), mask=offs < M)
"""


def test_unknown_caller_gets_restore_value_as_the_safe_fix():
    (f,) = lint(SPLIT_K, "TRI012")
    assert "`c_ptr`" in f.message
    restore, reset = f.fixes
    assert restore.applicability is Applicability.SAFE and "restore_value" in restore.title
    assert reset.applicability is Applicability.UNSAFE and "zero-filled" in reset.title
    out = fixed(SPLIT_K, f, 0)
    assert 'key=["M"], restore_value=["c_ptr"],\n)' in out
    ast.parse(out)
    assert lint(out, "TRI012") == []
    out = fixed(SPLIT_K, f, 1)
    assert 'reset_to_zero=["c_ptr"]' in out
    assert lint(out, "TRI012") == []


def test_caller_passing_zeros_makes_reset_to_zero_the_safe_fix():
    code = SPLIT_K + """
def launch(a):
    c = torch.zeros(a.shape[0], device=a.device)
    split_k[(4,)](a, c, a.shape[0])
    return c
"""
    (f,) = lint(code, "TRI012")
    assert f.fixes[0].applicability is Applicability.SAFE
    assert "reset_to_zero" in f.fixes[0].title
    assert lint(fixed(code, f, 0), "TRI012") == []


def test_caller_passing_an_existing_buffer_keeps_restore_value_first():
    code = SPLIT_K + """
def launch(a, grad):
    split_k[(4,)](a, grad, a.shape[0])
"""
    (f,) = lint(code, "TRI012")
    assert "restore_value" in f.fixes[0].title


def test_one_line_decorator_and_positional_configs():
    code = """
    import triton
    import triton.language as tl

    @triton.autotune([triton.Config({"B": 1}), triton.Config({"B": 2})], ["n"])
    @triton.jit
    def k(x_ptr, out_ptr, n, B: tl.constexpr):
        tl.atomic_add(out_ptr + tl.program_id(0), tl.load(x_ptr))
    """
    (f,) = lint(code, "TRI012")
    out = fixed(code, f, 0)
    assert '["n"], restore_value=["out_ptr"])' in out
    ast.parse(out)


def test_unresolvable_pointer_gets_no_fix():
    code = """
    import triton
    import triton.language as tl

    @triton.autotune(configs=[triton.Config({"B": 1}), triton.Config({"B": 2})], key=["n"])
    @triton.jit
    def k(a_ptr, b_ptr, n, B: tl.constexpr):
        p = a_ptr if n > 0 else b_ptr
        tl.atomic_add(p, 1.0)
    """
    (f,) = lint(code, "TRI012")
    assert f.fixes == []
    assert "restore_value=[...]" in f.message


def test_lock_release_and_atomic_reads_do_not_count():
    code = """
    import triton
    import triton.language as tl

    @triton.autotune(configs=[triton.Config({"B": 1}), triton.Config({"B": 2})], key=["n"])
    @triton.jit
    def k(lock_ptr, flag_ptr, n, B: tl.constexpr):
        while tl.atomic_cas(lock_ptr, 0, 1) == 1:
            pass
        seen = tl.atomic_add(flag_ptr, 0)
        tl.atomic_xchg(lock_ptr, 0)
    """
    assert lint(code, "TRI012") == []


def test_atomic_in_a_helper_is_traced_to_the_kernel_argument():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def _accumulate(ptrs, values, mask, SPLIT_K: tl.constexpr):
        if SPLIT_K == 1:
            tl.store(ptrs, values, mask=mask)
        else:
            tl.atomic_add(ptrs, values, mask=mask)

    @triton.autotune(configs=[triton.Config({"B": 16}), triton.Config({"B": 32})], key=["M"])
    @triton.jit
    def mm(a_ptr, c_ptr, M, SPLIT_K: tl.constexpr, B: tl.constexpr):
        offs = tl.program_id(0) * B + tl.arange(0, B)
        c_ptrs = c_ptr + offs
        _accumulate(c_ptrs, tl.load(a_ptr + offs), offs < M, SPLIT_K)
    """
    (f,) = lint(code, "TRI012")
    assert f.line == 17 and "`c_ptr`" in f.message
    assert 'restore_value=["c_ptr"]' in fixed(code, f, 0)


def test_configs_whose_pre_hook_zeroes_the_output_are_quiet_even_when_built_by_a_pruner():
    # real-world class (round 1): split-K GEMMs whose pruner yields
    # `triton.Config(..., pre_hook=init_to_zero("c_ptr") if split_k > 1 else None)`
    code = """
    import torch
    import triton
    import triton.language as tl

    def init_to_zero(name):
        return lambda nargs: nargs[name].zero_()

    def prune(configs, nargs, **kw):
        for c in configs:
            split_k = c.kwargs["SPLIT_K"]
            yield triton.Config(c.kwargs, num_warps=c.num_warps,
                                pre_hook=init_to_zero("c_ptr") if split_k > 1 else None)

    @triton.autotune(
        configs=[triton.Config({"SPLIT_K": 1}), triton.Config({"SPLIT_K": 4})],
        key=["K"],
        prune_configs_by={"early_config_prune": prune},
    )
    @triton.jit
    def gemv(a_ptr, c_ptr, K, SPLIT_K: tl.constexpr):
        pid = tl.program_id(0)
        acc = tl.load(a_ptr + pid)
        tl.atomic_add(c_ptr + pid, acc)
    """
    assert lint(code, "TRI012") == []
    without = code.replace('pre_hook=init_to_zero("c_ptr") if split_k > 1 else None', "pre_hook=None")
    assert len(lint(without, "TRI012")) == 1


ARRIVAL_COUNTER = """
import triton
import triton.language as tl

@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 64, "SPLIT": 2}, num_warps=4),
        triton.Config({"BLOCK": 128, "SPLIT": 4}, num_warps=8),
    ],
    key=["M"],
)
@triton.jit
def split_sum(a_ptr, part_ptr, out_ptr, arrivals_ptr, M, BLOCK: tl.constexpr, SPLIT: tl.constexpr):
    tile = tl.program_id(0)
    offs = tile * BLOCK + tl.arange(0, BLOCK)
    tl.store(part_ptr + tl.program_id(1) * M + offs, tl.load(a_ptr + offs, mask=offs < M), mask=offs < M)
    arrived = tl.atomic_add(arrivals_ptr + tile, 1, sem="acq_rel")
    if arrived == SPLIT - 1:
        total = tl.zeros([BLOCK], dtype=tl.float32)
        for s in range(SPLIT):
            total += tl.load(part_ptr + s * M + offs, mask=offs < M)
        tl.store(out_ptr + offs, total, mask=offs < M)
    RESET
"""


def test_an_arrival_counter_the_last_program_resets_is_not_accumulated():
    # the conv2d template's split-K counter: each launch leaves it as it found it, so the autotuner's
    # repeated runs are harmless (found as a false error on kernels/templates/conv2d.py)
    for reset in ('tl.atomic_add(arrivals_ptr + tile, tl.where(arrived == SPLIT - 1, -SPLIT, 0), sem="relaxed")',
                  "if arrived == SPLIT - 1:\n        tl.atomic_xchg(arrivals_ptr + tile, 0)",
                  "if arrived == SPLIT - 1:\n        tl.store(arrivals_ptr + tile, 0)"):
        assert lint(ARRIVAL_COUNTER.replace("RESET", reset), "TRI012") == [], reset


def test_a_counter_nobody_resets_still_accumulates():
    for reset in ("pass", "tl.atomic_add(arrivals_ptr + tile + 1, -1)", "tl.atomic_xchg(arrivals_ptr + tile, 1)"):
        (f,) = lint(ARRIVAL_COUNTER.replace("RESET", reset), "TRI012")
        assert "`arrivals_ptr`" in f.message, reset
