"""Map positions in CUDA source text back to the file the user edits.

A CUDA rule sees one CUDA text: the whole `.cu` file, or the value of a Python string literal
that holds CUDA source (`load_inline(cuda_sources=...)`, `cupy.RawKernel(code, ...)`). Findings
must point at the host file: for a `.cu` file that is the same text; for an embedded string,
line k of the string is (start line of the string's contents + k - 1) of the `.py` file, and the
column must skip the quotes, the prefix (`r`, `u`) and escape sequences. `StringLiteralMap`
records, for every character of the string's value, where in the host file it was written, so
that triple-quoted strings (contents on the quote line or the next), raw strings, escapes and
implicit concatenation (`"a" "b"`) all map exactly. f-strings and bytes are not mapped.

Positions are (1-based line, 0-based column in code points), like `Finding`.
"""
from __future__ import annotations

import ast
import io
import tokenize
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass

from tritonify.diagnostics.source import line_starts

Position = tuple[int, int]

_SIMPLE_ESCAPES = {
    "\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


class FileMap:
    """Identity map for a CUDA file: character index -> (line, column) of the same text."""

    def __init__(self, text: str):
        self._line_starts = line_starts(text)  # "\r\n", "\r" and "\n" end a line

    def start(self, index: int) -> Position:
        line = bisect_right(self._line_starts, index)
        return line, index - self._line_starts[line - 1]

    def end(self, index: int) -> Position:
        """Position just after the character at `index - 1` (an exclusive end)."""
        return self.start(index)


@dataclass
class StringLiteralMap:
    """Where each character of a Python string literal's value was written in the host file."""

    value: str
    starts: list[Position]
    ends: list[Position]

    def start(self, index: int) -> Position:
        if not self.starts:
            return (1, 0)
        if index >= len(self.starts):
            return self.ends[-1]
        return self.starts[max(0, index)]

    def end(self, index: int) -> Position:
        if not self.ends:
            return (1, 0)
        if index <= 0:
            return self.starts[0]
        return self.ends[min(index, len(self.ends)) - 1]


def _advance(pos: Position, text: str) -> Position:
    line, col = pos
    for ch in text:
        if ch == "\n":
            line, col = line + 1, 0
        else:
            col += 1
    return line, col


def _decode_body(body: str, start: Position, raw: bool, chars: list[str], starts: list[Position], ends: list[Position]) -> bool:
    """Decode one literal's body the way Python does, recording each value character's span.

    Returns False on anything unexpected (the caller then gives up on the string)."""
    i, pos, n = 0, start, len(body)
    while i < n:
        ch = body[i]
        if ch == "\r":  # newlines inside a literal read as "\n" whatever the file uses
            width = 2 if body.startswith("\r\n", i) else 1
            chars.append("\n")
            starts.append(pos)
            pos = (pos[0] + 1, 0)
            ends.append(pos)
            i += width
            continue
        if ch != "\\" or raw:
            chars.append(ch)
            starts.append(pos)
            pos = _advance(pos, ch)
            ends.append(pos)
            i += 1
            continue
        if i + 1 >= n:
            return False
        nxt = body[i + 1]
        if nxt in "\r\n":  # line continuation: produces nothing
            i += 3 if body.startswith("\r\n", i + 1) else 2
            pos = (pos[0] + 1, 0)
            continue
        width, value = 2, None
        if nxt in _SIMPLE_ESCAPES:
            value = _SIMPLE_ESCAPES[nxt]
        elif nxt in "01234567":
            digits = 1
            while digits < 3 and i + 1 + digits < n and body[i + 1 + digits] in "01234567":
                digits += 1
            value, width = chr(int(body[i + 1:i + 1 + digits], 8)), 1 + digits
        elif nxt in _HEX_ESCAPES:
            count = _HEX_ESCAPES[nxt]
            try:
                value = chr(int(body[i + 2:i + 2 + count], 16))
            except ValueError:
                return False
            width = 2 + count
        elif nxt == "N" and i + 2 < n and body[i + 2] == "{":
            close = body.find("}", i + 3)
            if close < 0:
                return False
            try:
                value = unicodedata.lookup(body[i + 3:close])
            except KeyError:
                return False
            width = close + 1 - i
        if value is None:  # not an escape: Python keeps the backslash
            chars.append("\\")
            starts.append(pos)
            pos = (pos[0], pos[1] + 1)
            ends.append(pos)
            i += 1
            continue
        chars.append(value)
        starts.append(pos)
        pos = (pos[0], pos[1] + width)
        ends.append(pos)
        i += width
    return True


def _char_col(line_text: str, byte_col: int) -> int:
    if line_text.isascii():
        return byte_col
    return len(line_text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def physical_lines(text: str) -> list[str]:
    """The module's lines as Python counts them (\\n, \\r\\n and \\r end a line; form feeds do not)."""
    return io.StringIO(text, newline="").readlines()


def map_string_literal(lines: list[str], node: ast.Constant) -> StringLiteralMap | None:
    """Map a `str` constant of a parsed module back to its host positions.

    `lines` comes from `physical_lines(text)`. None for bytes, f-strings or anything not
    understood (the string is then skipped rather than reported at a wrong place)."""
    if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
        return None
    line, end_line = node.lineno, node.end_lineno or node.lineno
    if not (1 <= line <= end_line <= len(lines)) or node.end_col_offset is None:
        return None
    first = lines[line - 1].rstrip("\r\n")
    col = _char_col(first, node.col_offset)
    end_col = _char_col(lines[end_line - 1].rstrip("\r\n"), node.end_col_offset)
    if line == end_line:
        segment = first[col:end_col]
    else:
        middle = [lines[k].rstrip("\r\n") for k in range(line, end_line - 1)]
        segment = "\n".join([first[col:], *middle, lines[end_line - 1].rstrip("\r\n")[:end_col]])
    chars: list[str] = []
    starts: list[Position] = []
    ends: list[Position] = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO("(" + segment + ")").readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    for tok in tokens:
        if tok.type == getattr(tokenize, "FSTRING_START", -1):
            return None
        if tok.type != tokenize.STRING:
            continue
        text = tok.string
        prefix_len = len(text) - len(text.lstrip("rRbBuUfF"))
        prefix = text[:prefix_len].lower()
        if "b" in prefix or "f" in prefix:
            return None
        quote = text[prefix_len:prefix_len + 3] if text[prefix_len:prefix_len + 3] in ('"""', "'''") else text[prefix_len]
        body = text[prefix_len + len(quote):len(text) - len(quote)]
        row, tcol = tok.start
        host_line = line + row - 1
        host_col = (col + tcol - 1) if row == 1 else tcol
        if not _decode_body(body, (host_line, host_col + prefix_len + len(quote)), "r" in prefix, chars, starts, ends):
            return None
    if "".join(chars) != node.value:
        return None
    return StringLiteralMap(node.value, starts, ends)
