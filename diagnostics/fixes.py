"""Apply fixes to text, and build the edits fixes commonly need (imports)."""
from __future__ import annotations

import ast
from typing import Iterable

from tritonify.diagnostics.model import Edit, Finding, Fix
from tritonify.diagnostics.source import SourceFile


def _offset(line_starts: list[int], text: str, line: int, column: int) -> int:
    if line - 1 >= len(line_starts):
        return len(text)
    start = line_starts[line - 1]
    end = line_starts[line] if line < len(line_starts) else len(text)
    return min(start + column, end)


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    return starts


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    if a[0] == a[1] or b[0] == b[1]:  # an insertion collides only strictly inside the other span
        return b[0] < a[0] < b[1] or a[0] < b[0] < a[1] or (a == b)
    return a[0] < b[1] and b[0] < a[1]


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits (overlapping ones are skipped, later ones first)."""
    starts = _line_starts(text)
    spans = []
    for e in edits:
        a = _offset(starts, text, e.start_line, e.start_column)
        b = _offset(starts, text, e.end_line, e.end_column)
        spans.append((a, b, e.new_text))
    spans.sort(key=lambda s: (s[0], s[1]))
    kept, last_end = [], -1
    for a, b, t in spans:
        if a < last_end:
            continue  # overlaps the previous edit
        kept.append((a, b, t))
        last_end = max(b, a)
    for a, b, t in reversed(kept):
        text = text[:a] + t + text[b:]
    return text


def apply_fixes(text: str, findings: Iterable[Finding], *, safe_only: bool = True) -> tuple[str, int]:
    """Apply each finding's preferred fix once. Returns (new text, number of fixes applied).

    Fixes whose edits overlap an earlier fix are left for the next pass (as ruff does)."""
    from tritonify.diagnostics.model import Applicability

    chosen: list[Fix] = []
    for f in findings:
        fix = f.fix
        if fix is None or (safe_only and fix.applicability != Applicability.SAFE):
            continue
        chosen.append(fix)
    applied, edits, taken = 0, [], []
    starts = _line_starts(text)
    for fix in chosen:
        new = [e for e in fix.edits if e not in edits]  # the same import twice is one edit
        spans = [(_offset(starts, text, e.start_line, e.start_column), _offset(starts, text, e.end_line, e.end_column)) for e in new]
        if any(_overlaps(s, t) for s in spans for t in taken):
            continue  # left for the next pass, as ruff does
        edits.extend(new)
        taken.extend(spans)
        applied += 1
    return apply_edits(text, edits), applied


def import_edit(source: SourceFile, module: str, name: str | None = None, asname: str | None = None) -> Edit | None:
    """An edit that adds `from module import name` (or `import module`) unless the file already
    has it. Placed after the last top-level import (or after the docstring)."""
    tree = source.tree
    if tree is None:
        return None
    insert_after = 0
    for i, stmt in enumerate(tree.body):
        if isinstance(stmt, ast.ImportFrom) and stmt.module == module and name:
            for alias in stmt.names:
                if alias.name == name and (alias.asname or None) == asname:
                    return None
        if isinstance(stmt, ast.Import) and not name:
            for alias in stmt.names:
                if alias.name == module and (alias.asname or None) == asname:
                    return None
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            insert_after = stmt.end_lineno or stmt.lineno
        elif i == 0 and isinstance(stmt, ast.Expr) and isinstance(getattr(stmt, "value", None), ast.Constant) and isinstance(stmt.value.value, str):
            insert_after = stmt.end_lineno or stmt.lineno
        elif isinstance(stmt, ast.Expr) or not isinstance(stmt, (ast.Import, ast.ImportFrom)):
            if insert_after or i > 0:
                break
    alias = f" as {asname}" if asname else ""
    line = f"from {module} import {name}{alias}\n" if name else f"import {module}{alias}\n"
    return Edit.insert(insert_after + 1, 0, line)
