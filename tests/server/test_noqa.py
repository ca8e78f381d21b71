"""diagnostics/noqa.py: the edit behind "Disable CODE for this line"."""
from tritonify.diagnostics.fixes import apply_edits
from tritonify.diagnostics.noqa import noqa_edit
from tritonify.diagnostics.source import SourceFile


def _apply(text, line, code):
    edit = noqa_edit(text, line, code)
    return None if edit is None else apply_edits(text, [edit])


def test_adds_a_comment():
    assert _apply("x = tanh(y)\n", 1, "TRI001") == "x = tanh(y)  # noqa: TRI001\n"


def test_trailing_spaces_are_replaced():
    assert _apply("x = tanh(y)   \n", 1, "tri001") == "x = tanh(y)  # noqa: TRI001\n"


def test_extends_an_existing_list():
    assert _apply("x = 1  # noqa: TRI002\n", 1, "TRI001") == "x = 1  # noqa: TRI002, TRI001\n"


def test_keeps_another_comment():
    out = _apply("x = 1  # why\n", 1, "TRI001")
    assert out == "x = 1  # noqa: TRI001 # why\n"
    assert SourceFile.from_text(out).is_suppressed("TRI001", 1)


def test_hash_inside_a_string_is_not_a_comment():
    out = _apply("s = '# not a comment'\n", 1, "TRI001")
    assert out == "s = '# not a comment'  # noqa: TRI001\n"


def test_nothing_to_do_when_already_silenced():
    assert noqa_edit("x = 1  # noqa\n", 1, "TRI001") is None
    assert noqa_edit("x = 1  # noqa: TRI001\n", 1, "TRI001") is None
    assert noqa_edit("x = 1  # noqa: TRI\n", 1, "TRI001") is None   # a prefix covers it


def test_missing_line_or_code():
    assert noqa_edit("x = 1\n", 5, "TRI001") is None
    assert noqa_edit("x = 1\n", 0, "TRI001") is None
    assert noqa_edit("x = 1\n", 1, " ") is None


def test_the_result_really_suppresses():
    text = "a = 1\nb = tanh(c)\n"
    out = _apply(text, 2, "TRI001")
    src = SourceFile.from_text(out)
    assert src.is_suppressed("TRI001", 2) and not src.is_suppressed("TRI001", 1)
