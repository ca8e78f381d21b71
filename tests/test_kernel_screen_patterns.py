"""The screen's call-argument and alias patterns (diagnostics/kernel_screen.py) are compiled once
and matched against the file's own names: they must find the callees a pattern built from those
names finds, no more and no fewer."""
from __future__ import annotations

import re

from tritonify.diagnostics.kernel_screen import _GAP, _aliases, _candidate_callees


def _callees_by_names(text: str) -> set[str]:
    """The callees found by the pattern built from the file's def names (the screen's old way)."""
    functions = set(re.findall(r"\bdef[ \t]+(\w+)", text))
    found = set()
    if functions:
        defs = "|".join(sorted(map(re.escape, functions)))
        for m in re.finditer(rf"\({_GAP}(?:{defs})\b", text):
            before = text[max(0, m.start() - 2000):m.start()].rstrip()
            found.add(re.search(r"[\w.]*$", before).group())
    return {c for c in found if c}


CASES = [
    "def fn(x): pass\nk = compat.kernel(fn)\n",
    "def fn(x): pass\nk = make(fnx)\nj = make(  fn)\n",
    # a `(` inside a comment that the gap after another `(` crosses: that one is not a call of `fn`
    "def fn(x): pass\ndef other(y): pass\nk = wrap(  # see note (fn\n  other)\n",
    # ... and when the word after the first `(` is not a function of the file, the comment's `(fn` is read
    "def fn(x): pass\nk = wrap(  # see note.make(fn\n  unknown)\n",
    "def f(x): pass\ndef foo(x): pass\na = g(foo)\nb = h(f)\nc = i(f_other)\n",
]


def test_call_arguments_match_the_name_built_pattern():
    for text in CASES:
        assert _candidate_callees(text) == _callees_by_names(text), text


def test_aliases_read_only_the_asked_names():
    text = "kk = compat.other\nk = compat.kernel\nk.x = 1\nk == 2\n"
    assert _aliases(text, {"k"}) == {"compat.kernel"}
    assert _aliases(text, {"kk"}) == {"compat.other"}
    assert _aliases(text, {"q"}) == set()
