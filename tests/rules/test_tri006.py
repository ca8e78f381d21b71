import ast

from tritonify.diagnostics.fixes import apply_fixes
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
    def k(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        p = tl.make_block_ptr(x_ptr + pid * stride, (n,), (1,), (0,), (BLOCK,), (0,))
        tl.atomic_add(out_ptr + pid * stride, tl.sum(tl.load(p, boundary_check=(0,))))
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
