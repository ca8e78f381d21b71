"""A source file as rules see it: text, lines, the parsed tree and position helpers.

Never imports or executes the file. Bytes that are not UTF-8 are decoded with replacement
characters and reported once, so one bad byte does not hide every other finding.
"""
from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass
from functools import cached_property

NOQA_RE = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*))?", re.IGNORECASE)
CODING_RE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")

# The one line model, Python's own: a line ends at "\r\n", "\r" or "\n" and nowhere else
# (`str.splitlines` also breaks at form feed, U+2028 and others, which `ast` reads as text).
LINE_BREAK = re.compile(r"\r\n|\r|\n")
_OTHER_BREAKS = "\v\f\x1c\x1d\x1e\x85\u2028\u2029"  # where else str.splitlines breaks


def split_lines(text: str) -> list[str]:
    """The lines of `text` without their breaks, as `ast` counts them (no empty last line
    after a final break, like `str.splitlines`)."""
    lines = text.splitlines()
    # str.splitlines agrees unless it also broke at \f, \v, U+2028 and the like: count the breaks
    breaks = text.count("\n") + text.count("\r") - text.count("\r\n")
    if len(lines) == breaks + (0 if text.endswith(("\n", "\r")) or not text else 1) and text[-1:] not in _OTHER_BREAKS:
        return lines
    lines = LINE_BREAK.split(text)
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines if text else []


def line_starts(text: str) -> list[int]:
    """Offset where each 1-based line starts (index line - 1); after a final break, the
    text's length starts the (empty) line past the end."""
    return [0, *(m.end() for m in LINE_BREAK.finditer(text))]


def newline_of(text: str) -> str:
    """The line break the file uses (its first one; "\n" for a file without any)."""
    m = LINE_BREAK.search(text)
    return m.group() if m else "\n"


BOM = b"\xef\xbb\xbf"


def source_encoding(data: bytes) -> tuple[str, bool]:
    """(encoding, has_bom) of a Python file's bytes: UTF-8 unless a coding declaration on one of
    the first two lines says otherwise; a UTF-8 byte-order mark is not part of the text."""
    bom = data.startswith(BOM)
    if bom:
        data = data[3:]
    for line in data.splitlines()[:2]:  # bytes.splitlines breaks only at \r\n, \r, \n
        m = CODING_RE.match(line)
        if m:
            return m.group(1).decode("ascii", "replace"), bom
    return "utf-8", bom


def decode_source(data: bytes) -> tuple[str, str | None]:
    """Bytes to text. Returns (text, problem) where problem says why bytes were replaced."""
    encoding, bom = source_encoding(data)
    if bom:
        data = data[3:]
    try:
        return data.decode(encoding), None
    except (UnicodeDecodeError, LookupError) as exc:
        text = data.decode("utf-8", errors="replace")
        return text, f"file is not valid {encoding} ({exc.reason if hasattr(exc, 'reason') else exc}); undecodable bytes were replaced"


@dataclass
class SourceFile:
    text: str
    path: str = "<string>"
    tree: ast.Module | None = None
    syntax_error: SyntaxError | None = None
    decode_problem: str | None = None

    @classmethod
    def from_text(cls, text: str, path: str = "<string>") -> "SourceFile":
        src = cls(text=text, path=path)
        src._parse()
        return src

    @classmethod
    def from_bytes(cls, data: bytes, path: str = "<string>") -> "SourceFile":
        text, problem = decode_source(data)
        src = cls(text=text, path=path, decode_problem=problem)
        src._parse()
        return src

    def _parse(self) -> None:
        # NUL bytes make ast.parse raise ValueError ("source code string cannot contain null bytes").
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # SyntaxWarning for invalid escapes in user code
                self.tree = ast.parse(self.text, filename=self.path, type_comments=False)
        except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
            err = exc if isinstance(exc, SyntaxError) else SyntaxError(str(exc) or type(exc).__name__)
            nul = self.text.find("\0")
            if nul >= 0 and "null" in str(exc).lower():
                line = self.text.count("\n", 0, nul) + 1
                col = nul - (self.text.rfind("\n", 0, nul) + 1)
                err.lineno, err.offset = line, col + 1
                err.msg = "source contains a NUL byte"
            elif not isinstance(exc, SyntaxError):
                err.lineno, err.offset = 1, 1
            self.syntax_error = err

    # ---- lines and positions -------------------------------------------------------------
    @cached_property
    def lines(self) -> list[str]:
        return split_lines(self.text)

    @cached_property
    def line_starts(self) -> list[int]:
        return line_starts(self.text)

    def offset(self, line: int, column: int) -> int:
        """Offset into the text of a 1-based line and code-point column (clamped to the line;
        a line past the end is the end of the text)."""
        starts = self.line_starts
        if line < 1:
            return 0
        if line > len(starts):
            return len(self.text)
        return starts[line - 1] + min(max(column, 0), len(self.line_text(line)))

    def line_text(self, line: int) -> str:
        """Text of a 1-based line ('' past the end)."""
        if 1 <= line <= len(self.lines):
            return self.lines[line - 1]
        return ""

    def char_col(self, line: int, byte_col: int) -> int:
        """Convert an `ast` UTF-8 byte offset on a 1-based line to a code-point column."""
        text = self.line_text(line)
        if text.isascii():
            return byte_col
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))

    def node_range(self, node: ast.AST) -> tuple[int, int, int, int]:
        """(line, column, end_line, end_column) of a node in code points."""
        line = getattr(node, "lineno", 1)
        col = self.char_col(line, getattr(node, "col_offset", 0))
        end_line = getattr(node, "end_lineno", None) or line
        end_byte = getattr(node, "end_col_offset", None)
        end_col = self.char_col(end_line, end_byte) if end_byte is not None else col
        return line, col, end_line, end_col

    def segment(self, node: ast.AST) -> str:
        """The exact source text of a node (O(lines spanned), unlike ast.get_source_segment,
        which splits the whole file on every call)."""
        if getattr(node, "end_lineno", None) is None:
            return ""
        line, col, end_line, end_col = self.node_range(node)
        if line == end_line:
            return self.line_text(line)[col:end_col]
        return self.text[self.offset(line, col):self.offset(end_line, end_col)]

    def indent_of(self, line: int) -> str:
        text = self.line_text(line)
        return text[: len(text) - len(text.lstrip())]

    # ---- suppression -------------------------------------------------------------------------
    @cached_property
    def noqa(self) -> dict[int, set[str] | None]:
        """1-based line -> codes suppressed there (None means a bare `# noqa`: everything)."""
        result: dict[int, set[str] | None] = {}
        if "noqa" not in self.text.lower():
            return result
        for i, line in enumerate(self.lines, start=1):
            if "#" not in line:
                continue
            m = NOQA_RE.search(line)
            if not m:
                continue
            codes = m.group("codes")
            result[i] = None if not codes else {c.strip().upper() for c in codes.split(",")}
        return result

    def is_suppressed(self, code: str, line: int, end_line: int | None = None) -> bool:
        """A `# noqa` on the first line of a finding (or on its last line) suppresses it."""
        for ln in {line, end_line or line}:
            if ln in self.noqa:
                codes = self.noqa[ln]
                if codes is None or code.upper() in codes or any(code.upper().startswith(c) for c in codes):
                    return True
        return False
