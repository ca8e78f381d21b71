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
    # and the next edit builds on that result
    again = _insert(edited, 2, "# a comment at the top")
    full_again, _ = lint_incremental(SourceFile.from_text(again, "k.py"), settings, previous=nxt)
    assert full_again.exact and full_again.relinted == ()   # the outside changed: a full lint
    assert _key(full_again.result.findings) == _key(_full(again))


def test_half_a_statement_keeps_the_base_and_other_settings_lint_in_full():
    settings = Settings()
    _, previous = lint_incremental(SourceFile.from_text(TEXT, "k.py"), settings)
    broken = _insert(TEXT, 10, "    z = (")
    bad, kept = lint_incremental(SourceFile.from_text(broken, "k.py"), settings, previous=previous)
    assert [f.code for f in bad.result.findings] == ["TRI000"] and kept is previous
    other = Settings(select=("TRI001",))
    res, _ = lint_incremental(SourceFile.from_text(_insert(TEXT, 10, "    z = 1"), "k.py"), other, previous=previous)
    assert res.exact and {f.code for f in res.result.findings} == {"TRI001"}


def test_renaming_a_kernel_lints_in_full():
    settings = Settings()
    _, previous = lint_incremental(SourceFile.from_text(TEXT, "k.py"), settings)
    renamed = TEXT.replace("def gelu_2(", "def gelu_9(")
    res, _ = lint_incremental(SourceFile.from_text(renamed, "k.py"), settings, previous=previous)
    assert res.exact and _key(res.result.findings) == _key(_full(renamed))
