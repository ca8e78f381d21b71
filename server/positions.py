"""The one place where positions change shape.

The engine speaks 1-based lines and 0-based code-point columns; LSP speaks 0-based lines and
columns counted in the negotiated position encoding (UTF-16 units unless the client asked for
UTF-8 or UTF-32). LSP lines end at `\\r\\n`, `\\r` or `\\n` only (not at the other characters
`str.splitlines` knows, such as form feed or U+2028).

Every conversion clamps to the document, so a stale or hostile position never raises.
"""
from __future__ import annotations

from functools import cached_property

from lsprotocol import types

from tritonify.diagnostics.model import Edit
from tritonify.diagnostics.source import LINE_BREAK, newline_of

_LINE_BREAK = LINE_BREAK  # the engine's line model (ast's), shared

UTF8 = types.PositionEncodingKind.Utf8
UTF16 = types.PositionEncodingKind.Utf16
UTF32 = types.PositionEncodingKind.Utf32


def split_lines(text: str) -> list[str]:
    """The document's lines as LSP counts them, without their line breaks."""
    return _LINE_BREAK.split(text)


def _units(text: str, encoding) -> int:
    if encoding == UTF32:
        return len(text)
    if encoding == UTF8:
        return len(text.encode("utf-8", errors="surrogatepass"))
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", errors="surrogatepass")) // 2


class LineIndex:
    """Position conversions for one version of one document."""

    def __init__(self, text: str, encoding=UTF16):
        self.text = text
        self.encoding = encoding if encoding in (UTF8, UTF16, UTF32) else UTF16

    @cached_property
    def lines(self) -> list[str]:
        return split_lines(self.text)

    # ---- engine -> LSP ------------------------------------------------------------------
    def position(self, line: int, column: int) -> types.Position:
        """1-based line, 0-based code-point column -> LSP Position (clamped)."""
        lines = self.lines
        index = min(max(line - 1, 0), len(lines) - 1)
        text = lines[index]
        column = min(max(column, 0), len(text))
        if line - 1 >= len(lines):  # past the end: the end of the last line
            column = len(text)
        return types.Position(line=index, character=_units(text[:column], self.encoding))

    def range(self, line: int, column: int, end_line: int, end_column: int) -> types.Range:
        start = self.position(line, column)
        end = self.position(end_line, end_column)
        if (end.line, end.character) < (start.line, start.character):
            end = start
        return types.Range(start=start, end=end)

    def text_edit(self, edit: Edit) -> types.TextEdit:
        """The edit for this document, its line breaks written as the document writes its own."""
        new_text = edit.new_text
        newline = newline_of(self.text)
        if newline != "\n" or "\r" in new_text:
            new_text = _LINE_BREAK.sub(newline, new_text)
        return types.TextEdit(range=self.range(edit.start_line, edit.start_column, edit.end_line, edit.end_column),
                              new_text=new_text)

    def whole_document(self) -> types.Range:
        last = len(self.lines) - 1
        return types.Range(start=types.Position(line=0, character=0),
                           end=types.Position(line=last, character=_units(self.lines[last], self.encoding)))

    # ---- LSP -> engine ------------------------------------------------------------------
    def code_point(self, position: types.Position) -> tuple[int, int]:
        """LSP Position -> (1-based line, 0-based code-point column), clamped to the text."""
        lines = self.lines
        index = min(max(position.line, 0), len(lines) - 1)
        text = lines[index]
        target = max(position.character, 0)
        if self.encoding == UTF32 or text.isascii():
            return index + 1, min(target, len(text))
        units = 0
        for i, ch in enumerate(text):
            if units >= target:
                return index + 1, i
            units += _units(ch, self.encoding)
        return index + 1, len(text)

    @cached_property
    def line_starts(self) -> list[int]:
        return [0, *(m.end() for m in _LINE_BREAK.finditer(self.text))]

    def offset(self, position: types.Position) -> int:
        """LSP Position -> offset into the text (code points), clamped to the text."""
        line, column = self.code_point(position)
        if position.line >= len(self.lines):
            return len(self.text)
        return self.line_starts[line - 1] + column

    def line_text(self, line: int) -> str:
        """Text of a 1-based line ('' outside the document)."""
        if 1 <= line <= len(self.lines):
            return self.lines[line - 1]
        return ""


def overlaps(a: types.Range, b: types.Range) -> bool:
    """Whether two ranges touch (an empty range at a boundary counts)."""
    a0, a1 = (a.start.line, a.start.character), (a.end.line, a.end.character)
    b0, b1 = (b.start.line, b.start.character), (b.end.line, b.end.character)
    return a0 <= b1 and b0 <= a1
