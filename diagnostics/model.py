"""The data every rule produces and every front end (CLI, server) consumes.

Positions: `line` is 1-based, `column` is 0-based and counts Unicode code points (not UTF-8
bytes as `ast` does, not UTF-16 units as LSP does). Front ends convert at their edge.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"
    HINT = "hint"

    @classmethod
    def parse(cls, value: str) -> "Severity":
        value = value.strip().lower()
        aliases = {"information": "info", "warn": "warning", "err": "error"}
        return cls(aliases.get(value, value))


class Applicability(str, enum.Enum):
    """How safe a fix is, as ruff grades them: `--fix` applies only SAFE fixes."""

    SAFE = "safe"        # keeps behaviour (or keeps it within stated numerical error)
    UNSAFE = "unsafe"    # changes behaviour on purpose: offered in the editor, never by --fix


@dataclass(frozen=True)
class Edit:
    """Replace the text between two positions (1-based lines, 0-based code-point columns)."""

    start_line: int
    start_column: int
    end_line: int
    end_column: int
    new_text: str

    @classmethod
    def insert(cls, line: int, column: int, text: str) -> "Edit":
        return cls(line, column, line, column, text)

    def to_dict(self) -> dict:
        """JSON shape: 1-based lines and columns, like the finding that carries it."""
        return {
            "start_line": self.start_line,
            "start_column": self.start_column + 1,
            "end_line": self.end_line,
            "end_column": self.end_column + 1,
            "content": self.new_text,
        }


@dataclass(frozen=True)
class Fix:
    title: str
    edits: tuple[Edit, ...]
    applicability: Applicability = Applicability.SAFE

    def to_dict(self) -> dict:
        return {
            "title": self.title,
            "applicability": self.applicability.value,
            "edits": [e.to_dict() for e in self.edits],
        }


@dataclass
class Finding:
    code: str
    message: str
    line: int
    column: int
    end_line: int
    end_column: int
    severity: Severity = Severity.WARNING
    path: str = "<string>"
    fixes: list[Fix] = field(default_factory=list)
    url: str | None = None

    @property
    def fix(self) -> Fix | None:
        """The preferred fix (the first), or None."""
        return self.fixes[0] if self.fixes else None

    def sort_key(self):
        return (self.path, self.line, self.column, self.code)

    def to_dict(self) -> dict:
        """The JSON shape of `tritonify check --format json` (1-based columns there)."""
        return {
            "path": self.path,
            "line": self.line,
            "column": self.column + 1,
            "end_line": self.end_line,
            "end_column": self.end_column + 1,
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "url": self.url,
            "fix": self.fix.to_dict() if self.fix else None,
            "fixes": [f.to_dict() for f in self.fixes],
        }
