import ast

from tritonify.diagnostics.model import Applicability, Severity

from tests.lintutil import fixed, lint, lint_fixture, marked_lines


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI004.py", "TRI004")
    assert [f.line for f in findings] == marked_lines("TRI004.py", "TRI004")
    assert all(f.severity is Severity.ERROR for f in findings)


def test_message_names_the_value_and_where_it_comes_from():
    by_line = {f.line: f.message for f in lint_fixture("TRI004.py", "TRI004")}
    lines = marked_lines("TRI004.py", "TRI004")
    assert "spans 48 elements (BLOCK=48)" in by_line[lines[1]]
    assert "round the block up to 64" in by_line[lines[1]]
    assert "over Triton's limit" in by_line[lines[3]]
    assert "autotune config 2 (BLOCK=384)" in by_line[lines[4]]
    assert "next_power_of_2(n_cols)" in by_line[lines[5]]


LITERAL = """
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, n):
    offs = tl.arange(0, 48)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
"""


def test_literal_fix_rounds_up_and_is_unsafe():
    (f,) = lint(LITERAL, "TRI004")
    assert f.fixes[0].applicability is Applicability.UNSAFE
    out = fixed(LITERAL, f)
    assert "tl.arange(0, 64)" in out
    ast.parse(out)
    assert lint(out, "TRI004") == []


def test_literal_fix_keeps_the_start():
    (f,) = lint(LITERAL.replace("tl.arange(0, 48)", "tl.arange(8, 20)"), "TRI004")
    out = fixed(LITERAL.replace("tl.arange(0, 48)", "tl.arange(8, 20)"), f)
    assert "tl.arange(8, 24)" in out  # 12 elements -> 16


def test_no_fix_when_the_bound_is_not_a_literal():
    code = LITERAL.replace("def k(x_ptr, n):", "def k(x_ptr, n, B: tl.constexpr = 48):").replace("tl.arange(0, 48)", "tl.arange(0, B)")
    (f,) = lint(code, "TRI004")
    assert f.fixes == []


LAUNCH = """
import torch
import triton
import triton.language as tl

@triton.jit
def row_kernel(x_ptr, n_cols, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + cols, mask=cols < n_cols, other=0.0)
    tl.store(x_ptr + cols, x, mask=cols < n_cols)

def launch(x):
    M, N = x.shape
    row_kernel[(M,)](x, N, BLOCK=N)
"""


def test_launch_site_fix_wraps_in_next_power_of_2():
    (f,) = lint(LAUNCH, "TRI004")
    assert f.line == 14
    assert f.fixes[0].applicability is Applicability.UNSAFE
    out = fixed(LAUNCH, f)
    assert "BLOCK=triton.next_power_of_2(N)" in out
    assert lint(out, "TRI004") == []


def test_launch_site_through_call_form_alias_and_size_method():
    code = """
    import triton
    import triton.language as tl

    def _row(x_ptr, n_cols, BLOCK: tl.constexpr):
        cols = tl.arange(0, BLOCK)
        tl.store(x_ptr + cols, tl.load(x_ptr + cols, mask=cols < n_cols), mask=cols < n_cols)

    row = triton.jit(_row)

    def launch(x):
        width = x.size(-1)
        row[(x.shape[0],)](x, width, BLOCK=width)
    """
    (f,) = lint(code, "TRI004")
    assert "`width` (a tensor dimension)" in f.message


def test_launch_values_from_unknown_or_guarded_origins_stay_quiet():
    quiet = [
        LAUNCH.replace("BLOCK=N)", "BLOCK=1 << (N - 1).bit_length())"),
        LAUNCH.replace("BLOCK=N)", "BLOCK=max(triton.next_power_of_2(N), 16))"),
        LAUNCH.replace("def launch(x):", "def launch(x, N):").replace("    M, N = x.shape\n", ""),
        LAUNCH.replace("    M, N = x.shape\n", "    M, N = x.shape\n    if N > 4096:\n        raise ValueError\n"),
        LAUNCH.replace("BLOCK=N)", "BLOCK=256)"),
    ]
    for code in quiet:
        assert lint(code, "TRI004") == [], code


def test_autotune_comprehension_and_pruned_configs():
    code = """
    import triton
    import triton.language as tl

    @triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (64, 96, 128)], key=["n"])
    @triton.jit
    def k(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
    """
    (f,) = lint(code, "TRI004")
    assert "autotune config 2 (BLOCK=96)" in f.message
    pruned = code.replace('key=["n"]', 'key=["n"], prune_configs_by={"early_config_prune": lambda c, a, **k: c}')
    assert lint(pruned, "TRI004") == []


def test_default_overridden_at_launch_is_not_trusted():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr = 48):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs))

    def launch(x):
        k[(1,)](x, BLOCK=64)
    """
    assert lint(code, "TRI004") == []


def test_non_kernel_code_is_ignored():
    code = """
    import numpy as np
    def f():
        return np.arange(0, 48)
    """
    assert lint(code, "TRI004") == []


def test_launch_fix_imports_triton_when_the_file_only_imports_jit():
    code = """
    import triton.language as tl
    from triton import jit

    @jit
    def row_kernel(x_ptr, n_cols, BLOCK: tl.constexpr):
        cols = tl.arange(0, BLOCK)
        tl.store(x_ptr + cols, tl.load(x_ptr + cols, mask=cols < n_cols), mask=cols < n_cols)

    def launch(x):
        row_kernel[(1,)](x, x.shape[0], BLOCK=x.shape[0])
    """
    (f,) = lint(code, "TRI004")
    out = fixed(code, f)
    assert "import triton\n" in out
    assert "BLOCK=triton.next_power_of_2(x.shape[0])" in out
    ast.parse(out)


# ---- real-world classes (round 1 of the corpus study) -----------------------------------------
_GUARDED = """
import torch
import triton
import triton.language as tl


def _check_head_dim(d):
    if d & (d - 1):
        raise ValueError(f"head_dim must be a power of two, got {d}")


@triton.jit
def norm_kernel(x_ptr, n_cols, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    offs = tl.program_id(0) * n_cols + cols
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


def norm(x):
    rows, d = x.shape
    _check_head_dim(d)
    norm_kernel[(rows,)](x, d, BLOCK=d)
"""


def test_a_dimension_handed_to_a_checking_function_before_the_launch_is_quiet():
    assert lint(_GUARDED, "TRI004") == []
    assert len(lint(_GUARDED.replace("    _check_head_dim(d)\n", ""), "TRI004")) == 1


def test_the_dimension_of_a_buffer_this_file_allocated_is_no_evidence():
    code = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def select_kernel(val_ptr, out_ptr, n_split, NSPLIT: tl.constexpr):
        row = tl.program_id(0)
        s = tl.arange(0, NSPLIT)
        v = tl.load(val_ptr + row * n_split + s, mask=s < n_split, other=float("-inf"))
        tl.store(out_ptr + row, tl.max(v, axis=0))


    def partials(x, block):
        nsplit = triton.next_power_of_2(triton.cdiv(x.shape[1], block))
        return torch.empty((x.shape[0], nsplit), device=x.device)


    def select(x):
        part = partials(x, 1024)
        out = torch.empty((x.shape[0],), device=x.device)
        select_kernel[(x.shape[0],)](part, out, part.shape[1], NSPLIT=part.shape[1])
        return out
    """
    assert lint(code, "TRI004") == []
    caller = code.replace("NSPLIT=part.shape[1]", "NSPLIT=x.shape[1]")
    assert len(lint(caller, "TRI004")) == 1


def test_an_exact_tile_the_kernel_never_masks_is_quiet():
    # `HEAD_DIM=q.shape[-1]` into a kernel that never masks that tile: written for power-of-two
    # head sizes on purpose (round 1: most launch findings were of this kind)
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def rope(q_ptr, n_rows, HEAD_DIM: tl.constexpr):
        row = tl.program_id(0)
        d = tl.arange(0, HEAD_DIM)
        q = tl.load(q_ptr + row * HEAD_DIM + d)
        tl.store(q_ptr + row * HEAD_DIM + d, q * 2)

    def launch(q):
        rope[(q.shape[0],)](q, q.shape[0], HEAD_DIM=q.shape[-1])
    """
    assert lint(code, "TRI004") == []
    masked = code.replace("q = tl.load(q_ptr + row * HEAD_DIM + d)", "q = tl.load(q_ptr + row * HEAD_DIM + d, mask=d < n_rows)")
    assert len(lint(masked, "TRI004")) == 1


def test_a_host_variable_named_like_a_block_is_the_librarys_own_tile():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def wy(a_ptr, T, BT: tl.constexpr):
        t = tl.program_id(0) * BT + tl.arange(0, BT)
        tl.store(a_ptr + t, tl.load(a_ptr + t, mask=t < T), mask=t < T)

    def launch(A, T):
        BT = A.shape[-1]
        wy[(triton.cdiv(T, BT),)](A, T, BT=BT)
    """
    assert lint(code, "TRI004") == []
    assert len(lint(code.replace("BT = A.shape[-1]", "width = A.shape[-1]").replace("BT=BT)", "BT=width)"), "TRI004")) == 1


# Round 3 of the real-world study (benchmarks/realworld/labels/round3_*.csv).
from tests.lintutil import FIXTURES  # noqa: E402


def test_contract_fixture_flags_only_padded_tiles():
    # an axis only picked by `==`, a head tile next to a dtype comparison, a ring buffer wrapped with
    # `& (SLOTS - 1)`, loaded values compared with each other and a guard one function up are
    # powers of two by contract; a padded tile (bounded by a parameter or a loaded length) is not
    findings = lint_fixture("TRI004_contract.py", "TRI004")
    assert [f.line for f in findings] == marked_lines("TRI004_contract.py", "TRI004")


FORK_PATHS = (
    "flag_gems/runtime/backend/_cambricon/fused/cross_entropy_loss.py",
    "flag_gems/runtime/backend/_kunlunxin/ops/dropout.py",
    "flag_gems/runtime/backend/_tsingmicro/fused/cross_entropy_loss.py",
    "flag_gems/runtime/backend/_ascend/ops/softmax.py",
    "flag_gems/runtime/backend/_metax/ops/softmax.py",
)


def test_vendor_forks_are_not_held_to_upstream_limits():
    # the forks behind flag-gems' vendor backends accept ranges that are not powers of two; AMD's
    # and NVIDIA's (upstream) Triton do not
    text = (FIXTURES / "TRI004.py").read_text()
    lines = marked_lines("TRI004.py", "TRI004")
    assert [f.line for f in lint(text, "TRI004", path="vllm/attention/ops/amd/decode.py")] == lines
    for path in FORK_PATHS:
        assert lint(text, "TRI004", path=path) == [], path


def test_a_fork_branch_inside_an_upstream_file_is_left_alone():
    code = """
    import triton
    import triton.language as tl
    from flag_gems.runtime import device

    if device.vendor_name == "cambricon":
        @triton.jit
        def k(x_ptr):
            offs = tl.arange(0, 48)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs))
    else:
        @triton.jit
        def k(x_ptr):
            offs = tl.arange(0, 48)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs))
    """
    assert [f.line for f in lint(code, "TRI004")] == [14]   # the else branch only
