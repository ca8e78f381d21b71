"""One line model everywhere, Python's: a line ends at \\r\\n, \\r or \\n, never at the other
characters `str.splitlines` breaks at (form feed, U+2028, U+0085, ...)."""
from __future__ import annotations

import ast
import re

import pytest
from hypothesis import given, strategies as st

from tritonify.diagnostics.fixes import apply_edits
from tritonify.diagnostics.model import Edit
from tritonify.diagnostics.noqa import noqa_edit
from tritonify.diagnostics.source import SourceFile, line_starts, newline_of, split_lines

ODD = ["\f", "\v", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


@pytest.mark.parametrize("odd", ODD)
def test_lines_are_the_lines_ast_counts(odd):
    text = f"a = 1  # x{odd}y\nb = 2\n"
    tree = ast.parse(text)
    src = SourceFile.from_text(text)
    assert len(src.lines) == 2 == tree.body[-1].lineno
    assert src.line_text(2) == "b = 2"
    assert src.segment(tree.body[1].value) == "2"


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_positions_and_segments_on_every_ending(newline):
    text = newline.join(["x = (1,", "     2)", "y = 3", ""])
    src = SourceFile.from_text(text)
    assert src.tree is not None and split_lines(text) == ["x = (1,", "     2)", "y = 3"]
    assert line_starts(text)[2] == text.index("y")
    assert src.segment(src.tree.body[0].value) == f"(1,{newline}     2)"   # the exact source text
    assert newline_of(text) == newline


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_edits_keep_the_file_endings(newline):
    text = newline.join(["import a", "x = f(1)", ""])
    out = apply_edits(text, [Edit.insert(2, 0, "import b\n"), Edit(2, 4, 2, 8, "g(\n1)")])
    assert out == newline.join(["import a", "import b", "x = g(", "1)", ""])


def test_noqa_edit_on_lone_cr_lines():
    text = "a = 1\rb = tanh(x)\rc = 3\r"
    edit = noqa_edit(text, 2, "TRI001")
    assert apply_edits(text, [edit]) == "a = 1\rb = tanh(x)  # noqa: TRI001\rc = 3\r"


def test_the_server_writes_edits_with_the_document_endings():
    pytest.importorskip("lsprotocol")
    from tritonify.server.positions import LineIndex

    edit = LineIndex("a\r\nb\r\n").text_edit(Edit.insert(2, 0, "x\ny\n"))
    assert edit.new_text == "x\r\ny\r\n" and edit.range.start.line == 1
    assert LineIndex("a\nb\n").text_edit(Edit.insert(2, 0, "x\n")).new_text == "x\n"


def test_template_insertion_counts_lines_as_ast_does():
    """U+2028 in a comment above the insertion point must not move the template."""
    from tests.lintutil import apply_template

    class Template:
        name = "t"

        @staticmethod
        def source():
            return "import math\n\n\ndef helper():\n    return math.pi\n"

    user = "x = 1\n\n\ndef model(v):\n    return v\n"
    odd = user.replace("x = 1", "x = 1  # a\u2028b")
    out = apply_template(odd, Template, 3)
    assert out == apply_template(user, Template, 3).replace("x = 1", "x = 1  # a\u2028b")
    ast.parse(out)


@given(st.lists(st.sampled_from(["a", " ", "\n", "\r", "\r\n", *ODD]), max_size=12))
def test_split_lines_is_a_split_at_python_line_breaks(parts):
    text = "".join(parts)
    expected = re.split(r"\r\n|\r|\n", text)
    if len(expected) > 1 and expected[-1] == "":
        expected.pop()
    assert split_lines(text) == (expected if text else [])
