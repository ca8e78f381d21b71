from tritonify.diagnostics.model import Applicability, Severity
from tritonify.diagnostics.registry import get_rule

from tests.lintutil import fixed, lint, lint_fixture, marked_lines

MATMUL = """
import triton
import triton.language as tl

@triton.autotune(
    configs=[triton.Config({"BM": 64, "BK": 32}), triton.Config({"BM": 128, "BK": 64})],
    key=["M", "k"],
)
@triton.jit
def mm(a_ptr, c_ptr, M, K, BM: tl.constexpr, BK: tl.constexpr):
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    acc = tl.zeros([BM], tl.float32)
    for k in range(0, K, BK):
        acc += tl.sum(tl.load(a_ptr + offs_m[:, None] * K + k + tl.arange(0, BK)[None, :]), axis=1)
    tl.store(c_ptr + offs_m, acc, mask=offs_m < M)
"""


def test_fixture_flags_exactly_the_marked_lines_as_errors():
    findings = lint_fixture("TRI053.py", "TRI053")
    assert [f.line for f in findings] == marked_lines("TRI053.py", "TRI053")
    assert all(f.severity is Severity.ERROR for f in findings)
    stale, typo, reset = findings
    assert "`num_elements` is not a parameter of `_fp8_rowwise_3d_transpose_cast_rhs_kernel`" in stale.message
    assert "ValueError" in stale.message and stale.fixes == []   # no parameter is close to it
    assert "did you mean `n_elements`" in typo.message
    assert reset.message.startswith("autotune `reset_to_zero` entry `out` is not a parameter of `accumulate`")
    assert "KeyError" in reset.message


def test_in_the_default_set():
    assert get_rule("TRI053").rule.default
    assert [f.code for f in lint_fixture("TRI053.py") if f.code == "TRI053"]
    from tritonify.diagnostics.engine import lint_text
    from tritonify.diagnostics.settings import Settings
    from tests.lintutil import FIXTURES
    path = FIXTURES / "TRI053.py"
    codes = [f.code for f in lint_text(path.read_text(), str(path), Settings()).findings]
    assert codes.count("TRI053") == 3


def test_typo_fix_renames_the_entry_and_is_unsafe():
    (f,) = lint(MATMUL, "TRI053")
    assert f.fixes[0].applicability is Applicability.UNSAFE
    out = fixed(MATMUL, f, 0)
    assert 'key=["M", "K"]' in out
    assert lint(out, "TRI053") == []


def test_every_entry_a_parameter_is_quiet_and_tri011_no_longer_reports_it():
    assert lint(MATMUL.replace('"k"', '"K"'), "TRI053") == []
    assert [f for f in lint(MATMUL, "TRI011") if "is not a parameter" in f.message] == []


def test_an_unreadable_key_is_not_judged():
    code = MATMUL.replace('key=["M", "k"]', "key=KEY").replace("import triton\n", "import triton\nfrom elsewhere import KEY\n", 1)
    assert lint(code, "TRI053") == []


def test_restore_value_from_a_module_level_list():
    code = """
    import triton
    import triton.language as tl

    RESTORE = ["dst", "acc_ptr"]

    @triton.autotune(configs=[triton.Config({"B": 64}), triton.Config({"B": 128})], key=["n"], restore_value=RESTORE)
    @triton.jit
    def k(src, acc_ptr, n, B: tl.constexpr):
        offs = tl.program_id(0) * B + tl.arange(0, B)
        tl.atomic_add(acc_ptr + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)
    """
    (f,) = lint(code, "TRI053")
    assert "`restore_value` entry `dst` is not a parameter of `k`" in f.message
