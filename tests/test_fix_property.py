"""`check --fix` never writes a file it corrupts, whatever the file's line endings or the odd
characters it holds.

For every rule fixture and example file, with its line endings turned into CRLF or lone CR and
with form feeds and U+2028 placed where Python reads them as text (a form feed before a
top-level statement, U+2028 at the end of a comment), fixing the file on disk:
- gives text that parses,
- keeps the file's line endings (and fixes a CRLF or CR file exactly as its LF version, endings
  aside),
- applies as many fixes as on the plain file (an edit shifted by a line model that is not
  Python's fixes the wrong thing, or nothing, or the same thing ten times),
- leaves no safe fix behind (the findings it fixed are gone),
- and a second run changes nothing.
"""
from __future__ import annotations

import io
import tempfile
import tokenize
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tritonify.diagnostics.engine import iter_files, language_of, lint_text
from tritonify.diagnostics.file_fixes import fix_file
from tritonify.diagnostics.fixes import parse_problem
from tritonify.diagnostics.model import Applicability
from tritonify.diagnostics.settings import Settings
from tritonify.diagnostics.source import LINE_BREAK

ROOT = Path(__file__).resolve().parent.parent
ALL = Settings(select=("ALL",))
FILES = sorted([*(ROOT / "tests" / "rules" / "fixtures").iterdir(), *iter_files([ROOT / "examples"], ALL)])
ENDINGS = {"lf": "\n", "crlf": "\r\n", "cr": "\r"}


def _with_endings(text: str, newline: str) -> str:
    return LINE_BREAK.sub(newline, text)


def _breaks(text: str) -> set[str]:
    return {m.group() for m in LINE_BREAK.finditer(text)}


def _comment_ends(text: str) -> list[tuple[int, int]]:
    """(1-based line, column) just after each comment of an LF Python text."""
    try:
        return [tok.end for tok in tokenize.generate_tokens(io.StringIO(text).readline) if tok.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError):
        return []


def _decorate(text: str, comments: set[int], statements: set[int]) -> str:
    """Put U+2028 at the end of the chosen comments and a form feed before the chosen top-level
    statements (lines starting with `def`, `class`, `@`, `import` or `from`) of an LF text."""
    lines = text.split("\n")
    for i, (row, col) in enumerate(_comment_ends(text)):
        if i in comments:
            lines[row - 1] = lines[row - 1][:col] + "\u2028" + lines[row - 1][col:]
    tops = [k for k, line in enumerate(lines) if line.startswith(("def ", "class ", "@", "import ", "from "))]
    for i, k in enumerate(tops):
        if i in statements:
            lines[k] = "\f" + lines[k]
    return "\n".join(lines)


def _fix_on_disk(text: str, name: str) -> tuple[str, int, list[str], str]:
    """(fixed text, fixes applied, problems, text after a second run) of `text` written as a file."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(text.encode("utf-8"))
        first = fix_file(path, ALL)
        fixed = path.read_bytes().decode("utf-8")
        second = fix_file(path, ALL)
        again = path.read_bytes().decode("utf-8")
        left = [f for f in first.result.findings if f.fix is not None and f.fix.applicability == Applicability.SAFE]
        skipped = [p for p in first.problems if "fix not applied" in p]
        assert not left or skipped, f"{name}: safe fixes left after --fix: {[(f.code, f.line) for f in left]}"
        return fixed, first.fixed, first.problems, again


_plain: dict[Path, tuple[str, int]] = {}


def _plain_fix(path: Path) -> tuple[str, int]:
    if path not in _plain:
        text = _with_endings(path.read_text(encoding="utf-8"), "\n")
        fixed, n, _, _ = _fix_on_disk(text, path.name)
        _plain[path] = (fixed, n)
    return _plain[path]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ending=st.sampled_from(sorted(ENDINGS)),
       comments=st.sets(st.integers(0, 40), max_size=8),
       statements=st.sets(st.integers(0, 20), max_size=5))
def test_fix_parses_keeps_endings_and_fixes_what_the_plain_file_fixes(path, ending, comments, statements):
    language = language_of(str(path)) or "python"
    plain_fixed, plain_count = _plain_fix(path)
    text = _with_endings(path.read_text(encoding="utf-8"), "\n")
    decorated = _decorate(text, comments, statements) if language == "python" else text
    variant = _with_endings(decorated, ENDINGS[ending])
    assert parse_problem(variant, language) == parse_problem(text, language)  # the variant is still valid code

    fixed, count, problems, again = _fix_on_disk(variant, path.name)

    assert parse_problem(fixed, language) is None or parse_problem(text, language) is not None, problems
    assert _breaks(fixed) <= {ENDINGS[ending]}, f"line endings changed: {_breaks(fixed)}"
    assert count == plain_count, f"{count} fixes here, {plain_count} on the plain LF file"
    if decorated == text:  # only the endings differ: the fix is the same, endings aside
        assert fixed == _with_endings(plain_fixed, ENDINGS[ending])
    assert again == fixed  # stable: a second --fix finds nothing more to do


def test_the_files_cover_fixes():
    """The property above is only worth something if the files have safe fixes to apply."""
    fixed = sum(_plain_fix(p)[1] > 0 for p in FILES)
    assert fixed >= 20, fixed
    assert any(language_of(str(p)) == "cuda" and _plain_fix(p)[1] for p in FILES)
