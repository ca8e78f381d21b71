"""Parse an edited text by parsing again only the top-level statements the edit touched.

While typing, each key changes a line or two of a file the lint worker parsed a moment ago; a
100 KB file takes 30-70 ms to parse on a slow machine, the statement typed into a few. When an
edit keeps the number of lines (a key typed within a line; not Enter, nor a paste of lines), the
new tree is the old one with the touched statements parsed again:

* the region parsed again runs from the start of the top-level statement before the first
  changed line (it may take in a line typed after it: an indented line after a function is
  its body) to just before the first top-level statement after the last changed line;
* the region is parsed on its own, preceded by blank lines so that its line numbers are the
  file's; the statements before and after it are the old tree's, unchanged (same lines, same
  columns);
* a region that does not parse on its own, or whose neighbours share a line with it (`a; b`),
  gives None: the caller parses the whole text (which then reports the syntax error).

The statements outside the region start on an unchanged line at column 0 after a statement
that ended on an earlier line, so the tokenizer is in the same state there in both texts; the
result is the tree `ast.parse` gives for the whole new text (tests/test_reparse.py checks that
on random edits).

`tolerant_parse` is for a text that does not parse at all (a statement half typed): it
neutralises the statement being typed (its lines as they were in the last text that parsed, or
a `pass`), keeping every other line and its number, so the language server lints the rest of
the file and shows the syntax error as one finding beside the others (tests/test_tolerant_parse.py).
"""
from __future__ import annotations

import ast
import bisect
import warnings
from dataclasses import dataclass


def _first_line(node: ast.stmt) -> int:
    return min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])


def reparse(old_text: str, old_tree: ast.Module | None, new_text: str, filename: str = "<unknown>") -> ast.Module | None:
    """The tree of `new_text` built from `old_tree` (the tree of `old_text`), or None when only a
    parse of the whole text can give it (see the module doc). The old tree's nodes are shared,
    not copied: neither tree may be changed afterwards."""
    if old_tree is None or "\r" in old_text or "\r" in new_text:
        return None   # `\r` line breaks: lines are not simply split at `\n`
    # (`ast.parse` reads no `from __future__` import: the region needs none of the file's)
    if old_text == new_text:
        return old_tree
    old, new = old_text.split("\n"), new_text.split("\n")
    if len(old) != len(new):
        return None   # lines moved: every later node's line numbers would change
    changed = [i for i, (a, b) in enumerate(zip(old, new)) if a != b]
    lo, hi = changed[0] + 1, changed[-1] + 1   # 1-based
    body = old_tree.body
    starts = [_first_line(n) for n in body]
    i = bisect.bisect_right(starts, lo) - 1    # the last statement starting at or before the edit
    while i > 0 and (body[i - 1].end_lineno or body[i - 1].lineno) >= starts[i]:
        i -= 1   # it shares a line with the one before it
    j = bisect.bisect_right(starts, hi)        # the first statement starting after the edit
    while 0 < j < len(body) and (body[j - 1].end_lineno or body[j - 1].lineno) >= starts[j]:
        j += 1
    first = starts[i] if i >= 0 else 1
    i = max(i, 0)
    last = starts[j] - 1 if j < len(body) else len(new)
    region = "\n" * (first - 1) + "\n".join(new[first - 1:last])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # SyntaxWarning for invalid escapes in user code
            part = ast.parse(region, filename=filename, type_comments=False)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    return ast.Module(body=body[:i] + part.body + body[j:], type_ignores=[])


# ---- a text that parses, around the statement being typed -----------------------------------------

MAX_TRIES = 8   # parses tried before giving up (each a fraction of a full lint's time)


@dataclass(frozen=True)
class Tolerant:
    """A text that parses, made from one that does not by neutralising the statement being
    typed: `text` is the given one with the lines `blanked` (1-based) replaced by a `pass` at the
    statement's indentation (its first line) and blank lines (the others), so every other line
    keeps its number and its columns; `tree` is its parse."""

    text: str
    tree: ast.Module
    blanked: frozenset[int]


def tolerant_parse(text: str, good_text: str | None, good_tree: ast.Module | None,
                   error: SyntaxError | None, filename: str = "<unknown>") -> Tolerant | None:
    """`text` (which does not parse) made to parse by neutralising the statement being typed, or
    None. Tried in order: the lines changed since `good_text` (the last text that parsed,
    `good_tree` its tree) put back as they were there (blank lines for lines added), so what the
    statement bound stays bound; those lines as a `pass`, with the line's own indentation and
    then the previous line's; with the lines of the syntax error too; the innermost statement of
    the good tree around the change, whole (an edit of a continuation line inside brackets); the
    error's lines alone, and with the lines indented under them."""
    lines = text.split("\n")
    good = good_text.split("\n") if good_text is not None else None
    changed = _changed_runs(lines, good)
    error_run = _error_run(error, len(lines))
    candidates: list[tuple[list[tuple[int, int]], str]] = []
    if changed and good is not None:
        candidates.append((changed, "revert"))
        candidates += [(changed, "own"), (changed, "previous")]
        if error_run is not None:
            candidates += [(_merged(changed + [error_run]), "own"), (_merged(changed + [error_run]), "previous")]
        if good_tree is not None:
            around = _statements_around(good_tree, changed, len(lines) - len(good))
            if around:
                candidates.append((_merged(around + ([error_run] if error_run else [])), "own"))
    if error_run is not None:
        candidates += [([error_run], "own"), ([error_run], "previous"), ([_with_indented_after(lines, error_run)], "own")]
    tries = 0
    seen: set[tuple] = set()
    for runs, how in candidates:
        key = (tuple(runs), how)
        if key in seen:
            continue
        seen.add(key)
        made = _neutralised(lines, runs, how, good)
        if made is None:
            continue
        tries += 1
        if tries > MAX_TRIES:
            return None
        candidate, blanked = made
        tree = _parse_like(good_text, good_tree, candidate, filename)
        if tree is not None:
            return Tolerant(candidate, tree, blanked)
    return None


def _changed_runs(lines: list[str], good: list[str] | None) -> list[tuple[int, int]]:
    """0-based inclusive line runs of `lines` that differ from `good` (runs of the lines that
    differ when the number of lines is the same; else the span between the common head and tail)."""
    if good is None:
        return []
    if len(good) == len(lines):
        runs: list[tuple[int, int]] = []
        for i, (a, b) in enumerate(zip(lines, good)):
            if a != b:
                if runs and runs[-1][1] == i - 1:
                    runs[-1] = (runs[-1][0], i)
                else:
                    runs.append((i, i))
        return runs
    head = 0
    limit = min(len(lines), len(good))
    while head < limit and lines[head] == good[head]:
        head += 1
    tail = 0
    while tail < limit - head and lines[-1 - tail] == good[-1 - tail]:
        tail += 1
    last = len(lines) - 1 - tail
    return [(head, last)] if last >= head else []


def _error_run(error: SyntaxError | None, count: int) -> tuple[int, int] | None:
    if error is None or not error.lineno:
        return None
    first = min(max(error.lineno - 1, 0), count - 1)
    last = min(max((getattr(error, "end_lineno", None) or error.lineno) - 1, first), count - 1)
    return first, last


def _merged(runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(runs):
        if out and a <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _statements_around(tree: ast.Module, runs: list[tuple[int, int]], delta: int) -> list[tuple[int, int]]:
    """For each run (new text's lines), the lines of the innermost simple statement of the good
    tree that holds it, in the new text's lines (`delta`: lines added by the edit, which sits
    inside the run). Definitions and compound statements are never taken whole."""
    out = []
    for a, b in runs:
        best = None
        for node in ast.walk(tree):
            if not isinstance(node, ast.stmt) or isinstance(node, _COMPOUND):
                continue
            first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
            if first <= a and last >= b - delta and (best is None or last - first < best[1] - best[0]):
                best = (first, last)
        if best is not None:
            out.append((best[0], best[1] + delta))
    return out


_COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While,
             ast.With, ast.AsyncWith, ast.Try) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ()) \
    + ((ast.Match,) if hasattr(ast, "Match") else ())


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _with_indented_after(lines: list[str], run: tuple[int, int]) -> tuple[int, int]:
    """`run` with the lines after it indented deeper than its first (its continuation or body)."""
    base = len(_indent(lines[run[0]]))
    last = run[1]
    while last + 1 < len(lines) and (not lines[last + 1].strip() or len(_indent(lines[last + 1])) > base):
        last += 1
    while last > run[1] and not lines[last].strip():
        last -= 1
    return run[0], last


def _neutralised(lines: list[str], runs: list[tuple[int, int]], how: str,
                 good: list[str] | None) -> tuple[str, frozenset[int]] | None:
    """`lines` with each run neutralised (`how`: "revert" puts back the good text's lines, blank
    lines for those added; "own" / "previous": a `pass` with the indentation of the run's first
    line / of the line above it, then blank lines), and the 1-based lines changed; None when a
    run cannot be put back (lines were removed)."""
    out = list(lines)
    blanked: set[int] = set()
    delta = len(lines) - len(good) if good is not None else 0
    for a, b in runs:
        blanked.update(range(a + 1, b + 2))
        if how == "revert":
            if good is None or delta < 0:
                return None
            back = good[a:b + 1] if delta == 0 else good[a:b + 1 - delta]
            out[a:b + 1] = back + [""] * (b + 1 - a - len(back))
            continue
        indent = _indent(lines[a])
        if how == "previous":
            above = next((lines[i] for i in range(a - 1, -1, -1) if lines[i].strip()), "")
            indent = _indent(above)
        content = any(lines[i].strip() for i in range(a, b + 1))
        for i in range(a, b + 1):
            out[i] = ""
        if content:
            out[a] = indent + "pass"
    return "\n".join(out), frozenset(blanked)


def _parse_like(good_text: str | None, good_tree: ast.Module | None, text: str, filename: str) -> ast.Module | None:
    """The tree of `text`: from the good tree when only some statements differ (`reparse`), else
    parsed in full; None when it does not parse."""
    if good_text is not None and good_tree is not None:
        tree = reparse(good_text, good_tree, text, filename)
        if tree is not None:
            return tree
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text, filename=filename, type_comments=False)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
