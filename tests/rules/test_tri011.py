import ast

from tritonify.diagnostics.model import Applicability, Severity

from tests.lintutil import fixed, lint, lint_fixture, marked_lines


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI011.py", "TRI011")
    assert [f.line for f in findings] == marked_lines("TRI011.py", "TRI011")


def test_warning_for_a_missing_size_and_nothing_for_a_non_parameter():
    # a key entry that names no parameter is TRI053's (tests/rules/test_tri053.py)
    by_line = {f.line: f for f in lint_fixture("TRI011.py", "TRI011")}
    missing_k, missing_cols = marked_lines("TRI011.py", "TRI011")
    assert set(by_line) == {missing_k, missing_cols}
    for line in (missing_k, missing_cols):
        assert by_line[line].severity is Severity.WARNING
    assert "`K`" in by_line[missing_k].message and "tl.cdiv(K, BLOCK_K)" in by_line[missing_k].message
    assert "`n_cols`" in by_line[missing_cols].message


MATMUL = """
import triton
import triton.language as tl

@triton.autotune(
    configs=[triton.Config({"BM": 64, "BK": 32}), triton.Config({"BM": 128, "BK": 64})],
    key=["M"],
)
@triton.jit
def mm(a_ptr, c_ptr, M, K, BM: tl.constexpr, BK: tl.constexpr):
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    acc = tl.zeros([BM], tl.float32)
    for k in range(0, K, BK):
        acc += tl.sum(tl.load(a_ptr + offs_m[:, None] * K + k + tl.arange(0, BK)[None, :]), axis=1)
    tl.store(c_ptr + offs_m, acc, mask=offs_m < M)
"""


def test_add_missing_size_fix_is_unsafe_and_complete():
    (f,) = lint(MATMUL, "TRI011")
    assert f.fixes[0].applicability is Applicability.UNSAFE
    out = fixed(MATMUL, f, 0)
    assert 'key=["M", "K"]' in out
    ast.parse(out)
    assert lint(out, "TRI011") == []


def test_empty_key_is_left_to_tri048():
    code = MATMUL.replace('key=["M"]', "key=[]")
    assert lint(code, "TRI011") == []
    assert [f.code for f in lint(code, "TRI048")] == ["TRI048"]


def test_sizes_reached_through_locals_and_ceil_div():
    code = """
    import triton
    import triton.language as tl

    @triton.autotune(configs=[triton.Config({"B": 64}), triton.Config({"B": 128})], key=["x"])
    @triton.jit
    def k(p, x, n_rows, total, B: tl.constexpr):
        hi = n_rows
        for s in range(0, hi, B):
            tl.store(p + s, x)
        n_blocks = (total + B - 1) // B
        tl.store(p, n_blocks)
    """
    (f,) = lint(code, "TRI011")
    assert "`n_rows`" in f.message and "`total`" in f.message


def test_key_from_module_constant_and_generated_configs():
    code = """
    import triton
    import triton.language as tl

    KEYS = ["n"]

    def configs():
        return [triton.Config({"B": b}, num_warps=w) for b in (64, 128) for w in (4, 8)]

    @triton.autotune(configs=configs(), key=KEYS)
    @triton.jit
    def k(p, n, m, B: tl.constexpr):
        offs = tl.program_id(0) * B + tl.arange(0, B)
        tl.store(p + offs, 0, mask=offs < m)
    """
    (f,) = lint(code, "TRI011")
    assert "`m`" in f.message
    assert f.fixes == []  # the list lives elsewhere: no in-place edit
    bad = code.replace('KEYS = ["n"]', 'KEYS = ["nn", "m"]')
    assert [f.severity for f in lint(bad, "TRI053")] == [Severity.ERROR]   # `nn` names no parameter


def test_unreadable_key_or_configs_stay_quiet():
    code = """
    import triton
    import triton.language as tl
    from somewhere import KEY, CONFIGS

    @triton.autotune(configs=CONFIGS, key=KEY)
    @triton.jit
    def k(p, n, B: tl.constexpr):
        offs = tl.arange(0, B)
        tl.store(p + offs, 0, mask=offs < n)
    """
    assert lint(code, "TRI011") == []


# ---- real-world classes (round 1 of the corpus study) -----------------------------------------
_ROWS = """
import triton
import triton.language as tl

@triton.autotune(
    configs=[triton.Config({"BLOCK_M": 1}), triton.Config({"BLOCK_M": 8})],
    key=["M_CLOSEST", "K"],
)
@triton.jit
def scale_rows(x_ptr, y_ptr, M, K, M_CLOSEST, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_k = tl.arange(0, BLOCK_K)
    mask = (offs_m[:, None] < M) & (offs_k[None, :] < K)
    x = tl.load(x_ptr + offs_m[:, None] * K + offs_k[None, :], mask=mask)
    tl.store(y_ptr + offs_m[:, None] * K + offs_k[None, :], x * 2, mask=mask)
"""


def test_a_bucketed_stand_in_in_the_key_covers_the_size():
    assert lint(_ROWS, "TRI011") == []
    assert len(lint(_ROWS.replace('key=["M_CLOSEST", "K"]', 'key=["K"]'), "TRI011")) == 1


def test_a_pointer_or_a_bound_built_from_keyed_sizes_is_not_a_missing_size():
    code = """
    import triton
    import triton.language as tl

    @triton.autotune(
        configs=[triton.Config({"BLOCK": 512}), triton.Config({"BLOCK": 1024})],
        key=["chunk_size", "D"],
    )
    @triton.jit
    def chunk_max(x_ptr, out_ptr, S, chunk_size, D, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        start = pid * chunk_size
        chunk_elements = tl.minimum(chunk_size, S - start) * D
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for off in range(0, chunk_elements, BLOCK):
            offs = off + tl.arange(0, BLOCK)
            acc = tl.maximum(acc, tl.load(x_ptr + start * D + offs, mask=offs < chunk_elements, other=0.0))
        tl.store(out_ptr + pid, tl.max(acc))
    """
    assert lint(code, "TRI011") == []


def test_a_sequence_length_left_out_of_the_key_is_deliberate():
    # chunked linear-attention kernels key on the model sizes; T changes with every call
    code = """
    import triton
    import triton.language as tl

    @triton.autotune(
        configs=[triton.Config({"BT": 16}), triton.Config({"BT": 64})],
        key=["BD"],
    )
    @triton.jit
    def mix(x_ptr, T, BD: tl.constexpr, BT: tl.constexpr):
        t = tl.program_id(0) * BT + tl.arange(0, BT)
        d = tl.arange(0, BD)
        m = (t[:, None] < T) & (d[None, :] < BD)
        x = tl.load(x_ptr + t[:, None] * BD + d[None, :], mask=m, other=0.0)
        tl.store(x_ptr + t[:, None] * BD + d[None, :], x * 2, mask=m)
    """
    assert lint(code, "TRI011") == []
    rows = code.replace("T, BD", "n_rows, BD").replace("< T)", "< n_rows)")
    assert len(lint(rows, "TRI011")) == 1


def test_sizes_the_key_already_follows_are_not_reported():
    # round 3 of the real-world study (benchmarks/realworld/labels/round3_*.csv): a bucket key
    # (`_M_NPO2`, `M_CLOSEST`), configs varying only num_stages, `do_not_specialize` values, a
    # divisor of the program id, an offset, a total-element key and a launcher value derived from a
    # keyed one; the two marked kernels tile a size nothing in the key stands for
    findings = lint_fixture("TRI011_derived.py", "TRI011")
    assert [f.line for f in findings] == marked_lines("TRI011_derived.py", "TRI011")
    assert "`M`" in findings[0].message and "`n_rows`" in findings[1].message
