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
"""
from __future__ import annotations

import ast
import bisect
import warnings


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
