import textwrap

from tritonify.diagnostics.engine import lint_text
from tritonify.diagnostics.model import Applicability, Severity
from tritonify.diagnostics.settings import Settings

from tests.lintutil import fixed, lint, lint_fixture, marked_lines

MATMUL = """
import triton
import triton.language as tl

@triton.autotune(
    configs=[triton.Config({"BM": 64, "BK": 32}), triton.Config({"BM": 128, "BK": 64})],
    key=[],
)
@triton.jit
def mm(a_ptr, c_ptr, M, K, BM: tl.constexpr, BK: tl.constexpr):
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    acc = tl.zeros([BM], tl.float32)
    for k in range(0, K, BK):
        acc += tl.sum(tl.load(a_ptr + offs_m[:, None] * K + k + tl.arange(0, BK)[None, :]), axis=1)
    tl.store(c_ptr + offs_m, acc, mask=offs_m < M)
"""


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI048.py", "TRI048")
    assert [f.line for f in findings] == marked_lines("TRI048.py", "TRI048")
    assert all(f.severity is Severity.WARNING for f in findings)


def test_opt_in_and_quiet_in_vendored_code():
    default_set = lint_text(textwrap.dedent(MATMUL), "kernel.py", Settings()).findings
    assert [f.code for f in default_set if f.code == "TRI048"] == []   # not in the default set (round 5: 0/4)
    assert [f.code for f in lint(MATMUL, "TRI048")] == ["TRI048"]
    assert lint(MATMUL, "TRI048", path="pkg/third_party/deep_gemm/gemm.py") == []


def test_fix_fills_the_key_with_the_tiled_sizes():
    (f,) = lint(MATMUL, "TRI048")
    assert "key=[]" in f.message and ("K, M" in f.message or "M, K" in f.message)
    assert f.fixes[0].applicability is Applicability.UNSAFE
    out = fixed(MATMUL, f, 0)
    assert 'key=["M", "K"]' in out or 'key=["K", "M"]' in out
    assert lint(out, "TRI048") == [] and lint(out, "TRI011") == []


def test_key_built_at_run_time_is_not_read():
    code = MATMUL.replace("key=[],", "key=KEYS,").replace("import triton\n", "import triton\nKEYS = make_keys()\n", 1)
    assert lint(code, "TRI048") == []
