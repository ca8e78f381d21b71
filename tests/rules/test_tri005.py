from tritonify.diagnostics.model import Severity

from tests.lintutil import lint, lint_fixture, marked_lines


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI005.py", "TRI005")
    assert [f.line for f in findings] == marked_lines("TRI005.py", "TRI005")


def test_severity_follows_what_triton_39_does():
    """K below 16 is a compile error for fp16/bf16 (K < 8 for every dtype); a small M/N compiles today."""
    by_line = {f.line: f for f in lint_fixture("TRI005.py", "TRI005")}
    small_n, k8, k4, gemv = marked_lines("TRI005.py", "TRI005")
    assert by_line[small_n].severity is Severity.INFO
    assert by_line[k8].severity is Severity.WARNING and "K=8" in by_line[k8].message
    assert by_line[k4].severity is Severity.ERROR and "autotune config 2" in by_line[k4].message
    assert "aborts autotuning" in by_line[k4].message
    assert "tl.sum(a * b[None, :], 1)" in by_line[gemv].message


TEMPLATE = """
import triton
import triton.language as tl

@triton.jit
def k(a_ptr, b_ptr, c_ptr, BM: tl.constexpr = {m}, BN: tl.constexpr = {n}, BK: tl.constexpr = {k}):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    c = tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], c)
"""


def test_shapes_traced_from_arange_grids():
    assert lint(TEMPLATE.format(m=64, n=64, k=16), "TRI005") == []
    (f,) = lint(TEMPLATE.format(m=64, n=64, k=8), "TRI005")
    assert "K=8" in f.message
    (f,) = lint(TEMPLATE.format(m=4, n=64, k=32), "TRI005")
    assert "M=4" in f.message and f.severity is Severity.INFO
    (f,) = lint(TEMPLATE.format(m=64, n=64, k=2), "TRI005")
    assert f.severity is Severity.ERROR


def test_quiet_when_sizes_come_from_the_launch():
    code = TEMPLATE.format(m=64, n=64, k=8).replace("BK: tl.constexpr = 8", "BK: tl.constexpr")
    assert lint(code, "TRI005") == []
    launched = TEMPLATE.format(m=64, n=64, k=8) + "\ndef run(a, b, c):\n    k[(1,)](a, b, c, BK=32)\n"
    assert lint(launched, "TRI005") == []


def test_transpose_and_module_constants():
    code = """
    import triton
    import triton.language as tl

    RANK = tl.constexpr(4)

    @triton.jit
    def k(a_ptr, b_ptr, BM: tl.constexpr = 64):
        rm = tl.arange(0, BM)
        rr = tl.arange(0, RANK)
        a = tl.load(a_ptr + rm[:, None] * RANK + rr[None, :])
        b = tl.load(b_ptr + rm[:, None] * RANK + rr[None, :])
        s = tl.dot(a, tl.trans(b))
        tl.store(a_ptr + rm, tl.sum(s, 1))
    """
    (f,) = lint(code, "TRI005")
    assert "K=4" in f.message and f.severity is Severity.ERROR


def test_tensor_descriptor_block_shapes():
    """Triton 3.9 replaced block pointers with tensor descriptors; their block_shape is the tile."""
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr = 64, BN: tl.constexpr = 64, BK: tl.constexpr = 8):
        a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
        b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            acc = tl.dot(a_desc.load([0, k0]), b_desc.load([k0, 0]), acc)
        tl.store(c_ptr + tl.arange(0, BM)[:, None] * N + tl.arange(0, BN)[None, :], acc)
    """
    (f,) = lint(code, "TRI005")
    assert "K=8" in f.message
    assert lint(code.replace("BK: tl.constexpr = 8", "BK: tl.constexpr = 32"), "TRI005") == []
