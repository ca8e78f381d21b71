"""A source file as rules see it: text, lines, the parsed tree and position helpers.

Never imports or executes the file. Bytes that are not UTF-8 are decoded with replacement
characters and reported once, so one bad byte does not hide every other finding.
"""
from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass, field
from functools import cached_property

NOQA_RE = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*))?", re.IGNORECASE)
CODING_RE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


def decode_source(data: bytes) -> tuple[str, str | None]:
    """Bytes to text. Returns (text, problem) where problem says why bytes were replaced."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    encoding = "utf-8"
    for line in data.splitlines()[:2]:
        m = CODING_RE.match(line)
        if m:
            encoding = m.group(1).decode("ascii", "replace")
            break
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
    _line_starts: list[int] = field(default_factory=list, repr=False)

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
        return self.text.splitlines()

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
        parts = [self.line_text(line)[col:]]
        parts.extend(self.line_text(n) for n in range(line + 1, end_line))
        parts.append(self.line_text(end_line)[:end_col])
        return "\n".join(parts)

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
