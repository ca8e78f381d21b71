"""Incremental edits of an open document (server/documents.py): the same text as splicing each
edit into the whole string, whatever the line breaks, encodings and out-of-range positions;
and one didChange of many edits costs what the edits change (counted, not timed), not a
re-split of the document per edit (a replace-all of 393 occurrences in a 3,000-line file
blocked the server 2.1 s)."""
from __future__ import annotations

import random
import sys

import pytest
from lsprotocol import types
from pygls.workspace import PositionCodec

from tritonify.server.documents import LspTextDocument
from tritonify.server.positions import UTF8, UTF16, UTF32, LineIndex

PIECES = ["a", "bc", "def ", "\n", "\r\n", "\r", "é", "😀", "\t", "x = 1\n", "", "\n\n", "\r\r\n"]


def _document(text: str, encoding) -> LspTextDocument:
    return LspTextDocument("file:///t.py", source=text, version=1, sync_kind=types.TextDocumentSyncKind.Incremental,
                           position_codec=PositionCodec(encoding=encoding))


def _reference(text: str, change, encoding) -> str:
    """The edit spliced into the whole string (the documents' former way: correct, per-edit O(n))."""
    index = LineIndex(text, encoding)
    start, end = index.offset(change.range.start), index.offset(change.range.end)
    return text[:start] + change.text + text[max(start, end):]


def _change(rng: random.Random, lines: int) -> types.TextDocumentContentChangePartial:
    def position():
        return types.Position(line=rng.randint(0, lines + 1), character=rng.randint(0, 8))

    a, b = position(), position()
    if rng.random() < 0.8 and (b.line, b.character) < (a.line, a.character):
        a, b = b, a
    text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 3)))
    return types.TextDocumentContentChangePartial(range=types.Range(start=a, end=b), text=text)


@pytest.mark.parametrize("encoding", [UTF16, UTF8, UTF32])
def test_many_edits_in_one_change_give_the_text_of_splicing_each(encoding):
    rng = random.Random(31)
    for _ in range(300):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 12)))
        doc = _document(text, encoding)
        expected = text
        for _ in range(rng.randint(1, 6)):
            change = _change(rng, expected.count("\n") + expected.count("\r"))
            expected = _reference(expected, change, encoding)
            doc.apply_change(change)
            if rng.random() < 0.3:   # reading it between edits joins the lines; the next edit splits again
                assert doc.source == expected
        assert doc.source == expected, (text, expected)
        assert "".join(doc.lines) == expected


def test_a_full_change_after_edits_replaces_the_text():
    doc = _document("a\nb\n", UTF16)
    doc.apply_change(types.TextDocumentContentChangePartial(
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=1)), text="z"))
    doc.apply_change(types.TextDocumentContentChangeWholeDocument(text="new\n"))
    assert doc.source == "new\n"


def _replace_all(lines: int) -> tuple[str, list]:
    """A file of `lines` lines with `lines // 8` occurrences of `acc`, and the edits of a replace-all
    (last first, as VS Code sends them)."""
    rows = [f"    acc = acc + x{i}\n" if i % 8 == 0 else f"    y{i} = tl.load(p + {i})\n" for i in range(lines)]
    edits = [types.TextDocumentContentChangePartial(
        range=types.Range(start=types.Position(line=i, character=4), end=types.Position(line=i, character=7)),
        text="total") for i in reversed(range(0, lines, 8))]
    return "".join(rows), edits


def _calls(lines: int) -> int:
    text, edits = _replace_all(lines)
    doc = _document(text, UTF16)
    count = [0]

    def profile(frame, event, arg):
        if event in ("call", "c_call"):
            count[0] += 1

    sys.setprofile(profile)
    try:
        for change in edits:
            doc.apply_change(change)
        result = doc.source
    finally:
        sys.setprofile(None)
    assert result.count("total") == len(edits) and "acc =" not in result
    return count[0]


def test_one_change_of_many_edits_does_work_linear_in_the_edits():
    small, big = _calls(3000), _calls(6000)   # 375 and 750 edits
    assert big / small <= 2.3, (small, big)
    assert small / 375 < 60   # a few dozen calls per edit, not a pass over the document's lines
