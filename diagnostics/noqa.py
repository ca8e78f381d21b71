"""`# noqa` comments: the edit that silences one rule on one line, and the codes that name no rule.

The editor's "Disable CODE for this line" action calls this. The comment goes where
`SourceFile.is_suppressed` looks for it (the finding's first line); an existing
`# noqa: A, B` on that line is extended rather than duplicated, and a bare `# noqa` (which
already silences everything) is left as it is.
"""
from __future__ import annotations

import io
import re
import tokenize

from tritonify.diagnostics.model import Edit
from tritonify.diagnostics.source import LINE_BREAK, NOQA_RE, SourceFile, split_lines


def _line(text: str, line: int) -> str | None:
    lines = LINE_BREAK.split(text)
    if not 1 <= line <= len(lines):
        return None
    return lines[line - 1]


def _comment_start(line_text: str) -> int | None:
    """Column of the `#` that starts a real comment on this line (not one inside a string)."""
    if "#" not in line_text:
        return None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(line_text + "\n").readline):
            if tok.type == tokenize.COMMENT:
                return tok.start[1]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass  # the line alone is not valid (e.g. inside a multi-line string): fall back below
    return None


def noqa_edit(text: str, line: int, code: str) -> Edit | None:
    """An edit adding `code` to the `# noqa` comment of 1-based `line`, or None when the line
    does not exist or is already silenced for `code`."""
    code = code.strip().upper()
    line_text = _line(text, line)
    if line_text is None or not code:
        return None
    hash_col = _comment_start(line_text)
    if hash_col is not None:
        comment = line_text[hash_col:]
        m = NOQA_RE.search(comment)
        if m:
            codes = m.group("codes")
            if not codes:
                return None  # a bare `# noqa` silences every rule already
            present = [c.strip().upper() for c in codes.split(",")]
            if any(code.startswith(c) for c in present):
                return None
            start = hash_col + m.start("codes")
            end = hash_col + m.end("codes")
            return Edit(line, start, line, end, ", ".join([*present, code]))
        # another comment: put the noqa in front of it, keeping it
        return Edit(line, hash_col, line, hash_col, f"# noqa: {code} ")
    stripped = len(line_text.rstrip())
    return Edit(line, stripped, line, len(line_text), f"  # noqa: {code}")


def unknown_codes(source: SourceFile) -> list[tuple[int, str]]:
    """(line, code) for each code in a `# noqa: ...` comment that looks like one of Tritonify's
    (same letters as a registered code) but names no rule, such as `TRI0001`: such a comment
    silences nothing. Codes of other tools (`E501`, `F401`) are theirs and are left alone."""
    return _unknown(source.noqa)


_CUDA_NOQA = re.compile(r"(?://|/\*)\s*noqa\s*:\s*(?P<codes>[A-Za-z]+[0-9]+(?:\s*,\s*[A-Za-z]+[0-9]+)*)")


def unknown_cuda_codes(text: str) -> list[tuple[int, str]]:
    """The same for `// noqa: CUD001` comments of a CUDA file."""
    noqa = {}
    if "noqa" in text:
        for no, line in enumerate(split_lines(text), 1):
            m = _CUDA_NOQA.search(line)
            if m:
                noqa[no] = {c.strip().upper() for c in m.group("codes").split(",")}
    return _unknown(noqa)


def _unknown(noqa: dict[int, set[str] | None]) -> list[tuple[int, str]]:
    from tritonify.diagnostics.settings import known_codes, unknown_selector

    families = {code.rstrip("0123456789") for code in known_codes()}
    out = []
    for line, codes in sorted(noqa.items()):
        for code in sorted(codes or ()):
            if code.rstrip("0123456789") in families and unknown_selector(code):
                out.append((line, code))
    return out


def unknown_code_note(line: int, code: str) -> str:
    return f"line {line}: `noqa` names {code}, which is no rule; it silences nothing"
