"""LSP text edits applied to text: the one algorithm the server's documents and the lint worker's
copy of them share, so that both hold the same text after the same edits.

Positions are LSP's: lines end at `\\r\\n`, `\\r` or `\\n` (not at form feed, U+2028 or the other
characters `str.splitlines` breaks at), columns count the negotiated encoding, a position past a
line's end or the document's end is clamped, and an end before the start is the start. A text is
held as a list of lines, each with its break (the last without), so that many edits in one
didChange (a replace-all) cost what they change, not what the document holds.

An edit here is `(start_line, start_character, end_line, end_character, new_text)`; `start_line`
None replaces the whole text.
"""
from __future__ import annotations

import re
from typing import Iterable, Optional, Tuple

from tritonify.server.positions import UTF32, _units

KEEPENDS = re.compile(r"(?<=\n)|(?<=\r)(?!\n)")

Edit = Tuple[Optional[int], int, int, int, str]


def split_keepends(text: str) -> list[str]:
    """`text` as lines with their LSP line breaks (the last item: the text after the last break)."""
    return KEEPENDS.split(text)


def line_offset(lines: list[str], line: int, character: int, encoding) -> tuple[int, int]:
    """(line, code-point offset into that line's text) of an LSP position in `lines`, clamped:
    past a line's end is its end, past the last line is the end of the text."""
    if line >= len(lines):
        return len(lines) - 1, len(lines[-1])
    line = max(line, 0)
    text = lines[line].rstrip("\r\n") if line < len(lines) - 1 else lines[line]
    target = max(character, 0)
    if encoding == UTF32 or text.isascii():
        return line, min(target, len(text))
    units = 0
    for i, ch in enumerate(text):
        if units >= target:
            return line, i
        units += _units(ch, encoding)
    return line, len(text)


def splice(lines: list[str], start: tuple[int, int], end: tuple[int, int], new_text: str, encoding) -> None:
    """Replace the range `start`-`end` (LSP (line, character) positions) of `lines` by `new_text`,
    in place, touching only the lines it spans."""
    start_line, start_at = line_offset(lines, start[0], start[1], encoding)
    end_line, end_at = line_offset(lines, end[0], end[1], encoding)
    if (end_line, end_at) < (start_line, start_at):
        end_line, end_at = start_line, start_at
    piece = lines[start_line][:start_at] + new_text + lines[end_line][end_at:]
    first, last = start_line, end_line + 1
    # a `\r` and a `\n` that meet at the splice are one line break
    if piece.startswith("\n") and first > 0 and lines[first - 1].endswith("\r"):
        first -= 1
        piece = lines[first] + piece
    if piece.endswith("\r") and last < len(lines) and lines[last].startswith("\n"):
        piece += lines[last]
        last += 1
    new = KEEPENDS.split(piece)
    if last < len(lines) and new[-1] == "":
        new.pop()   # the piece ended with its break: the next line follows it
    lines[first:last] = new


def apply_edits(text: str, edits: Iterable[Edit], encoding) -> str:
    """`text` after `edits`, applied in order (each in the coordinates the ones before it left)."""
    lines: list[str] | None = None
    for start_line, start_character, end_line, end_character, new_text in edits:
        if start_line is None:
            text, lines = new_text, None
            continue
        if lines is None:
            lines = split_keepends(text)
        splice(lines, (start_line, start_character), (end_line, end_character), new_text, encoding)
    return "".join(lines) if lines is not None else text
