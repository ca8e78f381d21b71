"""diagnostics/incremental.py: re-linting only the kernels an edit touched gives the findings a
full lint gives, and falls back to a full lint when it cannot follow the edit."""
from __future__ import annotations

from tritonify.diagnostics.engine import lint_source
from tritonify.diagnostics.incremental import layout_of, lint_incremental
from tritonify.diagnostics.settings import Settings
from tritonify.diagnostics.source import SourceFile

HEAD = "import torch\nimport triton\nimport triton.language as tl\nfrom triton.language.extra import libdevice\n\n\n"
KERNEL = '''@triton.jit
def gelu_{i}(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    for _ in range(4):
        x = 0.5 * x * (1 + libdevice.tanh(0.79788456 * (x + 0.044715 * x * x * x)))
        tl.store(y_ptr + offs, x, mask=mask)


def launch_{i}(x):
    y = torch.empty_like(x)
    gelu_{i}[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
    return y


'''
TEXT = HEAD + "".join(KERNEL.format(i=i) for i in range(4))


def _key(findings):
    return sorted((f.code, f.line, f.column, f.end_line, f.end_column, f.message,
                   [[(e.start_line, e.start_column, e.end_line, e.end_column, e.new_text) for e in fix.edits]
                    for fix in f.fixes]) for f in findings)


def _full(text):
    return lint_source(SourceFile.from_text(text, "k.py"), Settings()).findings


def _insert(text, after_line, new_line):
    lines = text.splitlines(keepends=True)
    return "".join(lines[:after_line] + [new_line + "\n"] + lines[after_line:])


def test_an_edit_inside_one_kernel_relints_that_kernel_and_matches_a_full_lint():
    settings = Settings()
    first, previous = lint_incremental(SourceFile.from_text(TEXT, "k.py"), settings)
    assert first.exact and first.relinted == ()
    assert sum(f.code == "TRI001" for f in first.result.findings) == 4   # one tanh per kernel
    # a line typed into the second kernel: every kernel below it moves down by one line
    layout = layout_of(SourceFile.from_text(TEXT, "k.py"))
    second = layout.segments[1]
    edited = _insert(TEXT, second.last - 1, "        z = x * 2.0")
    inc, _ = lint_incremental(SourceFile.from_text(edited, "k.py"), settings, previous=previous)
    assert inc.relinted == ("gelu_1",) and not inc.exact
    assert _key(inc.result.findings) == _key(_full(edited))


def test_a_new_finding_in_the_edited_kernel_appears_and_others_move_with_their_lines():
    settings = Settings()
    _, previous = lint_incremental(SourceFile.from_text(TEXT, "k.py"), settings)
    first = layout_of(SourceFile.from_text(TEXT, "k.py")).segments[0]
    edited = _insert(TEXT, first.last - 1, "        w = libdevice.tanh(x)\n        tl.store(y_ptr + offs, w, mask=mask)")
    inc, nxt = lint_incremental(SourceFile.from_text(edited, "k.py"), settings, previous=previous)
    assert inc.relinted == ("gelu_0",)
    assert sum(f.code == "TRI001" for f in inc.result.findings) == 5
    assert _key(inc.result.findings) == _key(_full(edited))
    # and the next edit builds on that result: a comment changes no statement, nothing is linted
    # again, every finding moves down a line, and the result stays inexact (its base was)
    again = _insert(edited, 2, "# a comment at the top")
    moved, _ = lint_incremental(SourceFile.from_text(again, "k.py"), settings, previous=nxt)
    assert moved.relinted == () and moved.statements == 0 and not moved.exact
    assert _key(moved.result.findings) == _key(_full(again))


def test_half_a_statement_keeps_the_base_and_other_settings_lint_in_full():
    settings = Settings()
    _, previous = lint_incremental(SourceFile.from_text(TEXT, "k.py"), settings)
    broken = _insert(TEXT, 10, "    z = (")
    bad, kept = lint_incremental(SourceFile.from_text(broken, "k.py"), settings, previous=previous)
    assert [f.code for f in bad.result.findings] == ["TRI000"] and kept is previous
    assert bad.full_because == "it does not parse"
    other = Settings(select=("TRI001",))
    res, _ = lint_incremental(SourceFile.from_text(_insert(TEXT, 10, "    z = 1"), "k.py"), other, previous=previous)
    assert res.exact and {f.code for f in res.result.findings} == {"TRI001"} and res.full_because == "other settings"


def test_renaming_a_kernel_lints_in_full():
    settings = Settings()
    _, previous = lint_incremental(SourceFile.from_text(TEXT, "k.py"), settings)
    renamed = TEXT.replace("def gelu_2(", "def gelu_9(")
    res, _ = lint_incremental(SourceFile.from_text(renamed, "k.py"), settings, previous=previous)
    assert res.exact and _key(res.result.findings) == _key(_full(renamed))
    assert res.full_because == "a kernel added, removed or renamed"


# ---- edits outside the kernels -------------------------------------------------------------------

CONST_TEXT = """import triton
import triton.language as tl

BLOCK_A = 64
BLOCK_B = BLOCK_A * 2


@triton.jit
def uses_a(x_ptr, n):
    offs = tl.arange(0, BLOCK_A)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs))


@triton.jit
def uses_b(x_ptr, n):
    offs = tl.arange(0, BLOCK_B)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs))


@triton.jit
def uses_none(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs))


def launch(x):
    uses_none[(1,)](x, x.numel(), BLOCK=64)
"""


def _arange_lines(findings):
    return sorted(f.line for f in findings if f.code == "TRI004")


def test_a_module_constant_a_kernel_reads_relints_that_kernel_and_no_stale_finding_stays():
    settings = Settings(select=("ALL",))
    first, previous = lint_incremental(SourceFile.from_text(CONST_TEXT, "k.py"), settings)
    assert _arange_lines(first.result.findings) == []            # 64 and 128 are powers of two
    # BLOCK_A becomes 48: uses_a reads it, and uses_b through BLOCK_B = BLOCK_A * 2
    edited = CONST_TEXT.replace("BLOCK_A = 64", "BLOCK_A = 48")
    inc, nxt = lint_incremental(SourceFile.from_text(edited, "k.py"), settings, previous=previous)
    assert inc.relinted == ("uses_a", "uses_b") and not inc.exact
    assert _key(inc.result.findings) == _key(lint_source(SourceFile.from_text(edited, "k.py"), settings).findings)
    assert len(_arange_lines(inc.result.findings)) == 2         # the new value shows at once
    # and back: the findings go away again (nothing stale is carried over)
    back, _ = lint_incremental(SourceFile.from_text(CONST_TEXT, "k.py"), settings, previous=nxt)
    assert back.relinted == ("uses_a", "uses_b") and _arange_lines(back.result.findings) == []


def test_typing_a_new_statement_outside_the_kernels_relints_no_kernel():
    settings = Settings(select=("ALL",))
    _, previous = lint_incremental(SourceFile.from_text(TEXT, "k.py"), settings)
    typed = ""
    for key in "tmp_edit = libdevice":   # a new last line, typed key by key
        typed += key
        edited = TEXT + typed + "\n"
        inc, previous = lint_incremental(SourceFile.from_text(edited, "k.py"), settings, previous=previous)
        assert inc.relinted == ()
        assert _key(inc.result.findings) == _key(lint_source(SourceFile.from_text(edited, "k.py"), settings).findings)


def test_an_edited_launch_relints_the_kernel_it_launches_and_an_edited_import_lints_in_full():
    settings = Settings(select=("ALL",))
    _, previous = lint_incremental(SourceFile.from_text(TEXT, "k.py"), settings)
    edited = TEXT.replace("gelu_2[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)",
                          "gelu_2[(triton.cdiv(x.numel(), 1000),)](x, y, x.numel(), BLOCK=1000)")
    inc, previous = lint_incremental(SourceFile.from_text(edited, "k.py"), settings, previous=previous)
    assert inc.relinted == ("gelu_2",) and inc.statements == 1
    assert _key(inc.result.findings) == _key(lint_source(SourceFile.from_text(edited, "k.py"), settings).findings)
    imported = edited.replace("from triton.language.extra import libdevice", "from triton.language.extra.cuda import libdevice")
    full, _ = lint_incremental(SourceFile.from_text(imported, "k.py"), settings, previous=previous)
    assert full.exact and full.relinted == () and full.full_because == "an import edited"
    assert inc.full_because == ""


def test_a_carried_finding_that_names_another_line_names_it_where_it_moved():
    text = """import triton
import triton.language as tl


@triton.jit
def row_min_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + tl.program_id(0) * n_cols + cols, mask=cols < n_cols)
    tl.store(out_ptr + tl.program_id(0), tl.min(x, axis=0))
"""
    settings = Settings(select=("ALL",))
    first, previous = lint_incremental(SourceFile.from_text(text, "k.py"), settings)
    assert any("(line 9)" in f.message for f in first.result.findings if f.code == "TRI014")
    edited = text.replace("import triton.language as tl\n", "import triton.language as tl\n\nSCALE = 2\n")
    moved, _ = lint_incremental(SourceFile.from_text(edited, "k.py"), settings, previous=previous)
    assert moved.relinted == () and any("(line 11)" in f.message for f in moved.result.findings if f.code == "TRI014")
    assert _key(moved.result.findings) == _key(lint_source(SourceFile.from_text(edited, "k.py"), settings).findings)


# ---- an edit in a launcher of several kernels ----------------------------------------------------

LAUNCHER_TEXT = """import torch
import triton
import triton.language as tl


@triton.jit
def scale_a(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)


@triton.jit
def scale_b(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 3.0, mask=offs < n)


@triton.jit
def scale_c(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 4.0, mask=offs < n)


def launch_all(x):
    n = x.numel()
    block_a = 128
    scale_a[(triton.cdiv(n, block_a),)](x, n, BLOCK=block_a)
    scale_b[(triton.cdiv(n, 256),)](x, n, BLOCK=256)
    scale_c[(triton.cdiv(n, 512),)](x, n, BLOCK=512)
    return x
"""


def _not_power_of_two(findings):
    """(line, message) of each TRI004 finding: a block size passed from the launcher that is not a power of two."""
    return sorted((f.line, f.message) for f in findings if f.code == "TRI004")


def test_an_edited_launch_in_a_launcher_of_three_kernels_relints_that_kernel_only():
    settings = Settings(select=("ALL",))
    _, previous = lint_incremental(SourceFile.from_text(LAUNCHER_TEXT, "k.py"), settings)
    assert _not_power_of_two(previous.findings) == []
    b_line = LAUNCHER_TEXT.splitlines().index("    scale_b[(triton.cdiv(n, 256),)](x, n, BLOCK=256)") + 1
    # scale_b's launch now passes 200: only scale_b is linted again, and its launch's finding shows
    edited = LAUNCHER_TEXT.replace("(x, n, BLOCK=256)", "(x, n, BLOCK=200)")
    inc, previous = lint_incremental(SourceFile.from_text(edited, "k.py"), settings, previous=previous)
    assert inc.relinted == ("scale_b",) and inc.statements == 1
    assert [line for line, _ in _not_power_of_two(inc.result.findings)] == [b_line]
    assert "`scale_b`" in _not_power_of_two(inc.result.findings)[0][1]
    assert _key(inc.result.findings) == _key(lint_source(SourceFile.from_text(edited, "k.py"), settings).findings)
    # a line typed above the launches rebinds no name they read: no kernel is linted again, and
    # scale_b's launch keeps its finding, moved down with its line
    typed = _insert(edited, b_line - 3, "    tmp_edit = 1")
    moved, previous = lint_incremental(SourceFile.from_text(typed, "k.py"), settings, previous=previous)
    assert moved.relinted == () and moved.statements == 1
    assert [line for line, _ in _not_power_of_two(moved.result.findings)] == [b_line + 1]
    assert _key(moved.result.findings) == _key(lint_source(SourceFile.from_text(typed, "k.py"), settings).findings)
    # a local that only scale_a's launch reads (now a tensor dimension): scale_a alone; back to 256
    # for scale_b: its finding goes (nothing stale is carried over for it), the others are kept
    rebound = typed.replace("block_a = 128", "block_a = x.shape[-1]")
    inc_a, previous = lint_incremental(SourceFile.from_text(rebound, "k.py"), settings, previous=previous)
    assert inc_a.relinted == ("scale_a",)
    assert [line for line, _ in _not_power_of_two(inc_a.result.findings)] == [b_line, b_line + 1]
    assert _key(inc_a.result.findings) == _key(lint_source(SourceFile.from_text(rebound, "k.py"), settings).findings)
    back = rebound.replace("(x, n, BLOCK=200)", "(x, n, BLOCK=256)")
    inc_b, _ = lint_incremental(SourceFile.from_text(back, "k.py"), settings, previous=previous)
    assert inc_b.relinted == ("scale_b",)
    assert [line for line, _ in _not_power_of_two(inc_b.result.findings)] == [b_line]
    assert _key(inc_b.result.findings) == _key(lint_source(SourceFile.from_text(back, "k.py"), settings).findings)


def test_a_guard_or_a_name_every_launch_reads_relints_every_kernel_it_could_change():
    settings = Settings(select=("ALL",))
    _, previous = lint_incremental(SourceFile.from_text(LAUNCHER_TEXT, "k.py"), settings)
    # `n` is read by every launch: rebinding it may change each of them
    edited = LAUNCHER_TEXT.replace("    n = x.numel()\n", "    n = x.shape[0]\n")
    inc, _ = lint_incremental(SourceFile.from_text(edited, "k.py"), settings, previous=previous)
    assert inc.relinted == ("scale_a", "scale_b", "scale_c")
    # an assert on a name only scale_a's launch reads (a guard that can decide its findings)
    guarded = LAUNCHER_TEXT.replace("    block_a = 128\n", "    block_a = 128\n    assert block_a > 0\n")
    inc, _ = lint_incremental(SourceFile.from_text(guarded, "k.py"), settings, previous=previous)
    assert inc.relinted == ("scale_a",)
    assert _key(inc.result.findings) == _key(lint_source(SourceFile.from_text(guarded, "k.py"), settings).findings)


def test_typing_a_new_import_key_by_key_is_followed_until_it_binds_a_name_the_code_reads():
    """`import ma` on the way to `import math` binds a name nothing reads: only that statement is
    linted again; an import that binds a name a kernel reads (`tl`) lints the file in full. The
    findings are a full lint's at every key."""
    settings = Settings(select=("ALL",))
    _, previous = lint_incremental(SourceFile.from_text(TEXT, "k.py"), settings)
    typed, followed = "", 0
    for key in "import math":
        typed += key
        text = _insert(TEXT, 4, typed)
        inc, nxt = lint_incremental(SourceFile.from_text(text, "k.py"), settings, previous=previous)
        assert _key(inc.result.findings) == _key(lint_source(SourceFile.from_text(text, "k.py"), settings).findings)
        if typed.startswith("import ") and typed != "import ":
            assert inc.full_because == "" and inc.relinted == () and inc.statements == 1
            followed += 1
        previous = nxt
    assert followed == 4   # import m, ma, mat, math
    shadowing = _insert(TEXT, 4, "import numpy as tl")
    full, _ = lint_incremental(SourceFile.from_text(shadowing, "k.py"), settings, previous=previous)
    assert full.full_because == "an import edited"
    star = _insert(TEXT, 4, "from math import *")
    full, _ = lint_incremental(SourceFile.from_text(star, "k.py"), settings, previous=previous)
    assert full.full_because == "an import edited"
