import ast
import textwrap

import pytest
from tests.lintutil import apply_fixes
from tritonify.diagnostics.model import Applicability, Severity

from tests.lintutil import FIXTURES, fixed, lint, lint_fixture, marked_lines


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI006.py", "TRI006")
    assert [f.line for f in findings] == marked_lines("TRI006.py", "TRI006")
    assert all(f.severity is Severity.WARNING for f in findings)


SNIPPET = """
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, y_ptr, stride_x, stride_y, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_x + cols, mask=cols < n_cols, other=0.0)
    tl.store(y_ptr + row * stride_y + cols, x, mask=cols < n_cols)
"""


def test_fix_casts_the_program_id_once_and_is_safe():
    first, second = lint(SNIPPET, "TRI006")
    assert first.fixes[0].applicability is Applicability.SAFE
    assert first.fixes[0].edits == second.fixes[0].edits  # both products share one cast
    out = fixed(SNIPPET, first)
    assert "row = tl.program_id(0).to(tl.int64)" in out
    ast.parse(out)
    assert lint(out, "TRI006") == []


def test_fix_all_applies_one_edit_for_shared_program_id():
    import textwrap

    text = textwrap.dedent(SNIPPET)
    out, _ = apply_fixes(text, lint(SNIPPET, "TRI006"))
    assert out.count(".to(tl.int64)") == 1
    assert lint(out, "TRI006") == []


def test_fixed_fixture_is_quiet():
    text = (FIXTURES / "TRI006.py").read_text()
    findings = lint_fixture("TRI006.py", "TRI006")
    out, _ = apply_fixes(text, findings)
    ast.parse(out)
    assert lint(out, "TRI006") == []


def test_cast_before_use_suppresses():
    code = SNIPPET.replace("    cols = tl.arange(0, BLOCK)\n", "    row64 = row.to(tl.int64)\n    cols = tl.arange(0, BLOCK)\n")
    assert lint(code, "TRI006") == []
    cast_stride = SNIPPET.replace("def k(x_ptr, y_ptr, stride_x, stride_y,", "def k(x_ptr, y_ptr, stride_x: tl.int64, stride_y: tl.int64,")
    assert lint(cast_stride, "TRI006") == []


def test_constexpr_and_float_operands_are_not_offsets():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, eps, STRIDE: tl.constexpr, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        x = tl.load(x_ptr + pid * STRIDE + tl.arange(0, BLOCK))
        tl.store(x_ptr + pid * STRIDE + tl.arange(0, BLOCK), x * (pid * eps))
    """
    assert lint(code, "TRI006") == []


def test_autotuned_names_are_constexpr():
    code = """
    import triton
    import triton.language as tl

    @triton.autotune(configs=[triton.Config({"ROWS": 4})], key=[])
    @triton.jit
    def k(x_ptr, ROWS):
        pid = tl.program_id(0)
        tl.store(x_ptr + pid * ROWS, 1.0)
    """
    assert lint(code, "TRI006") == []


def test_block_pointer_base_and_atomics_count_as_addresses():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, out_ptr, n, stride, out_stride, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        p = tl.make_block_ptr(x_ptr + pid * stride, (n,), (1,), (0,), (BLOCK,), (0,))
        tl.atomic_add(out_ptr + pid * out_stride, tl.sum(tl.load(p, boundary_check=(0,))))
    """
    assert len(lint(code, "TRI006")) == 2


def test_program_id_that_feeds_descriptor_offsets_is_cast_only_in_the_product():
    """Block-pointer and tensor-descriptor offsets must be int32 ("Expected a 32-bit integer"), so
    casting the program id at its assignment would break `desc.load([pid * BLOCK, 0])`."""
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(desc, out_ptr, stride, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        tile = desc.load([pid * BLOCK, 0])
        tl.store(out_ptr + pid * stride + tl.arange(0, BLOCK), tl.sum(tile, 1))
    """
    (f,) = lint(code, "TRI006")
    out = fixed(code, f)
    assert "pid = tl.program_id(0)\n" in out
    assert "tl.store(out_ptr + pid.to(tl.int64) * stride" in out
    assert "desc.load([pid * BLOCK, 0])" in out
    assert lint(out, "TRI006") == []


PERSISTENT = """
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, y_ptr, stride, n_rows, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    for row in tl.range(pid, n_rows, tl.num_programs(0)):
        x = tl.load(x_ptr + row * stride + cols)
        tl.store(y_ptr + row * stride + cols, x)
"""


def test_loop_variable_of_a_persistent_kernel_is_followed_and_cast_in_the_product():
    # `row * stride` twice (load and store): one finding, whose fix casts both copies
    (first,) = lint(PERSISTENT, "TRI006")
    assert "loop variable `row`" in first.message and "tl.cast(row, tl.int64) * stride" in first.message
    assert first.fixes[0].applicability is Applicability.SAFE
    out = fixed(PERSISTENT, first)
    assert "x_ptr + tl.cast(row, tl.int64) * stride + cols" in out
    assert "y_ptr + tl.cast(row, tl.int64) * stride + cols" in out
    assert "for row in tl.range(pid, n_rows, tl.num_programs(0)):" in out  # the loop itself is untouched
    ast.parse(out)
    assert lint(out, "TRI006") == []


@pytest.mark.parametrize("iterable", ["range(pid, n_rows, 4)", "tl.range(n_rows)", "range(n_rows)"])
def test_range_forms_that_grow_with_the_input_are_followed(iterable):
    assert len(lint(PERSISTENT.replace("tl.range(pid, n_rows, tl.num_programs(0))", iterable), "TRI006")) == 1


@pytest.mark.parametrize(
    "change",
    [
        ("tl.range(pid, n_rows, tl.num_programs(0))", "tl.static_range(4)"),  # a small constant range
        ("tl.range(pid, n_rows, tl.num_programs(0))", "range(0, BLOCK)"),  # constexpr bounds
        ("tl.range(pid, n_rows, tl.num_programs(0))", "range(n_heads)"),  # a count of small things
        ("tl.range(pid, n_rows,", "tl.range(pid.to(tl.int64), n_rows,"),  # int64 bounds: an int64 variable
        ("tl.num_programs(0))", "tl.num_programs(0).to(tl.int64))"),  # an int64 step promotes it too
        ("stride, n_rows,", "stride: tl.int64, n_rows,"),  # int64 stride
        ("n_rows, n_heads", "n_rows: tl.int64, n_heads"),  # int64 bound
        ("        x = tl.load(", "        row = tl.cast(row, tl.int64)\n        x = tl.load("),  # rebound as int64
        ("        x = tl.load(", "        r64 = row.to(tl.int64)\n        x = tl.load("),  # the author casts first
    ],
)
def test_loops_that_stay_small_or_are_cast_are_quiet(change):
    base = PERSISTENT.replace("n_rows, BLOCK", "n_rows, n_heads, BLOCK")
    code = base.replace(*change)
    assert code != base
    assert lint(code, "TRI006") == []


def test_loop_variable_that_never_multiplies_a_stride_is_quiet():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        for off in range(0, n_cols, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            tl.store(y_ptr + row * n_cols + cols, tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols), mask=cols < n_cols)
    """
    assert lint(code, "TRI006") == []


GATHER = """
import triton
import triton.language as tl

@triton.jit
def k(index_ptr, table_ptr, out_ptr, stride_row, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    idx = tl.load(index_ptr + offs, mask=offs < n, other=0)
    tl.store(out_ptr + offs, tl.load(table_ptr + idx * stride_row))
"""


def test_loaded_index_times_a_stride_is_flagged_and_the_cast_is_a_safe_fix():
    (f,) = lint(GATHER, "TRI006")
    assert "loaded from an int32 index tensor" in f.message
    assert f.fixes[0].applicability is Applicability.SAFE
    out = fixed(GATHER, f)
    assert "table_ptr + idx.to(tl.int64) * stride_row" in out
    assert lint(out, "TRI006") == []


def test_gathered_tile_and_inline_load_are_cast_where_they_stand():
    tile = GATHER.replace("idx * stride_row", "idx[:, None] * stride_row + offs[None, :]")
    (f,) = lint(tile, "TRI006")
    assert "idx.to(tl.int64)[:, None] * stride_row" in fixed(tile, f)
    inline = GATHER.replace("idx * stride_row", "tl.load(index_ptr) * stride_row")
    (f,) = lint(inline, "TRI006")
    out = fixed(inline, f)
    assert "tl.load(index_ptr).to(tl.int64) * stride_row" in out
    assert lint(out, "TRI006") == []


@pytest.mark.parametrize(
    "change",
    [
        ("other=0)", "other=0).to(tl.int64)"),  # cast at the load
        ("other=0)", "other=0)\n    idx = idx.to(tl.int64)"),  # rebound as int64
        ("table_ptr + idx * stride_row", "table_ptr + tl.cast(idx, tl.int64) * stride_row"),  # cast in the product
        ("stride_row, n,", "stride_row: tl.int64, n,"),  # int64 stride
        ("stride_row", "hidden"),  # not a stride: PyTorch's default int64 ids are as likely
        ("table_ptr + idx * stride_row", "table_ptr + idx"),  # no product
    ],
)
def test_loaded_index_that_is_cast_or_not_scaled_by_a_stride_is_quiet(change):
    code = GATHER.replace(*change)
    assert code != GATHER
    assert lint(code, "TRI006") == []


def test_product_inside_block_pointer_or_descriptor_offsets_is_left_alone():
    """Those offsets must be int32 ("Expected a 32-bit integer"): a cast there would not compile."""
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, desc, y_ptr, stride, n_rows, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        tile = desc.load([pid * stride, 0])
        for row in range(pid, n_rows, tl.num_programs(0)):
            p = tl.make_block_ptr(x_ptr, (n_rows * stride,), (1,), (row * stride,), (BLOCK,), (0,))
            tl.store(y_ptr + tl.arange(0, BLOCK), tl.load(p, boundary_check=(0,)) + tl.sum(tile))
    """
    assert lint(code, "TRI006") == []
    as_address = code.replace("tl.make_block_ptr(x_ptr, (n_rows * stride,), (1,), (row * stride,), (BLOCK,), (0,))",
                              "tl.make_block_ptr(x_ptr + row * stride, (n_rows * stride,), (1,), (0,), (BLOCK,), (0,))")
    assert [f.message.split("`")[1] for f in lint(as_address, "TRI006")] == ["row * stride"]  # the base is an address


# ---- real-world false-positive classes (round 1 of the corpus study) ---------------------------
def test_a_head_or_channel_index_times_its_stride_is_quiet():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(q_ptr, o_ptr, stride_qt, stride_qh, stride_ot, o_head_stride, BLOCK: tl.constexpr):
        tok = tl.program_id(0)
        pid_h = tl.program_id(1)
        d = tl.arange(0, BLOCK)
        q = tl.load(q_ptr + pid_h * stride_qh + tok * stride_qt + d)
        tl.store(o_ptr + pid_h * o_head_stride + tok * stride_ot + d, q)
    """
    found = [f.message.split("`")[1] for f in lint(code, "TRI006")]
    assert found == ["tok * stride_qt", "tok * stride_ot"]


def test_the_same_product_on_the_next_lines_is_reported_once():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(a_ptr, b_ptr, c_ptr, n_steps, s_t, BLOCK: tl.constexpr):
        cs = tl.arange(0, BLOCK)
        for t in range(n_steps):
            tl.store(a_ptr + t * s_t + cs, 1.0)
            tl.store(b_ptr + t * s_t + cs, 2.0)
            tl.store(c_ptr + t * s_t + cs, 3.0)
    """
    assert len(lint(code, "TRI006")) == 1


def test_the_rule_is_opt_in():
    from tritonify.diagnostics.registry import all_rules

    (rule,) = [r.rule for r in all_rules() if r.rule.code == "TRI006"]
    assert rule.default is False
