"""server/positions.py: engine positions (1-based lines, code points) <-> LSP positions."""
from lsprotocol import types

from tritonify.diagnostics.model import Edit
from tritonify.server.positions import UTF8, UTF16, UTF32, LineIndex, overlaps, split_lines

TEXT = "x = '😋é'  # y\r\nz = 1\rw\n"


def test_lines_break_only_where_lsp_breaks():
    assert split_lines("a\x0cb\u2028c\r\nd\re\nf") == ["a\x0cb\u2028c", "d", "e", "f"]


def test_code_points_to_each_encoding():
    # the closing quote is code point 7: after x, space, =, space, ', 😋, é
    assert LineIndex(TEXT, UTF16).position(1, 7) == types.Position(line=0, character=8)   # 😋 is 2 UTF-16 units
    assert LineIndex(TEXT, UTF8).position(1, 7) == types.Position(line=0, character=11)   # 4 + 2 bytes
    assert LineIndex(TEXT, UTF32).position(1, 7) == types.Position(line=0, character=7)


def test_round_trip_in_each_encoding():
    for enc in (UTF8, UTF16, UTF32):
        index = LineIndex(TEXT, enc)
        for column in range(len(index.lines[0]) + 1):
            assert index.code_point(index.position(1, column)) == (1, column)


def test_lone_cr_and_crlf_are_line_breaks():
    index = LineIndex(TEXT)
    assert index.position(2, 3) == types.Position(line=1, character=3)
    assert index.position(3, 1) == types.Position(line=2, character=1)


def test_out_of_range_positions_are_clamped():
    index = LineIndex("ab\ncd")
    assert index.position(99, 5) == types.Position(line=1, character=2)
    assert index.position(1, 99) == types.Position(line=0, character=2)
    assert index.position(0, -3) == types.Position(line=0, character=0)
    assert index.code_point(types.Position(line=50, character=50)) == (2, 2)
    assert index.range(2, 1, 1, 0).end == index.range(2, 1, 1, 0).start  # never inverted


def test_text_edit_and_whole_document():
    index = LineIndex("a = tanh(x)\n")
    edit = index.text_edit(Edit(1, 4, 1, 11, "y"))
    assert edit.range.start.character == 4 and edit.range.end.character == 11 and edit.new_text == "y"
    whole = index.whole_document()
    assert (whole.end.line, whole.end.character) == (1, 0)


def test_overlaps_counts_touching_ranges():
    r = lambda a, b, c, d: types.Range(start=types.Position(line=a, character=b), end=types.Position(line=c, character=d))
    assert overlaps(r(1, 0, 1, 5), r(1, 5, 1, 5))
    assert not overlaps(r(1, 0, 1, 5), r(1, 6, 1, 9))
    assert not overlaps(r(1, 0, 1, 5), r(2, 0, 2, 1))


def test_offsets_follow_lsp_lines_and_clamp():
    index = LineIndex("ab\r\ncd\ré😋x\n", UTF16)
    assert index.offset(types.Position(line=1, character=1)) == 5
    assert index.offset(types.Position(line=2, character=3)) == 9      # after 😋 (2 UTF-16 units)
    assert index.offset(types.Position(line=2, character=99)) == 10
    assert index.offset(types.Position(line=9, character=0)) == len(index.text)
