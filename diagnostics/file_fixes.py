"""Fix one file on disk (`tritonify check --fix`) without ever corrupting it.

The file is read once; its text is decoded as the linter decodes it (coding declaration, UTF-8
byte-order mark); the fix loop (`fixes.fix_until_stable`) works on that text, keeps its line
endings and accepts no pass that does not parse. Just before writing, the file is read again:
if it changed since it was read (an editor saved it meanwhile), it is left alone. The text is
written back with the encoding and byte-order mark it had. A file that cannot be decoded
exactly, encoded back, or written is not fixed, and the reason names the file; nothing here
raises for a bad file.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path

from tritonify.diagnostics.engine import FileResult, language_of, lint_text, read_source
from tritonify.diagnostics.fixes import FixOutcome, fix_until_stable
from tritonify.diagnostics.model import Applicability
from tritonify.diagnostics.settings import Settings
from tritonify.diagnostics.source import BOM, LINE_BREAK, decode_source, source_encoding
from tritonify.infra.bounded_read import NotReadable, read_bytes


@dataclass
class FileFix:
    path: Path
    result: FileResult                      # the findings left (after fixing, or as read)
    fixed: int = 0                          # fixes applied (or, with diff, that would be)
    diff: str = ""                          # unified diff of the change (diff mode)
    problems: list[str] = field(default_factory=list)  # why fixes were not (all) applied, each naming the file


def _keepends(text: str) -> list[str]:
    """Lines with their breaks, on `ast`'s line model (for a diff that shows every line)."""
    out, last = [], 0
    for m in LINE_BREAK.finditer(text):
        out.append(text[last:m.end()])
        last = m.end()
    if last < len(text):
        out.append(text[last:])
    return out


def _has_safe_fix(result: FileResult) -> bool:
    return any(f.fix is not None and f.fix.applicability == Applicability.SAFE for f in result.findings)


def _not_fixed(path: Path, result: FileResult, why: str) -> FileFix:
    return FileFix(path, result, problems=[f"{path}: not fixed: {why}"])


def _os_reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def fix_file(path: Path, settings: Settings, *, diff: bool = False) -> FileFix:
    """Lint `path` and apply its safe fixes (write them, or with `diff` only describe them)."""
    data = read_source(path, settings)   # the size limit before reading; no special file is read
    if isinstance(data, FileResult):
        return FileFix(path, data)
    result = lint_text(data, str(path), settings, on_disk=True)
    if not _has_safe_fix(result):
        return FileFix(path, result)
    language = language_of(str(path)) or "python"
    encoding, bom = source_encoding(data)
    text, problem = decode_source(data)
    if problem:
        return _not_fixed(path, result, f"{problem.split(';')[0]}; fixing would rewrite those bytes")

    def lint(new_text: str):
        return lint_text(new_text, str(path), settings).findings

    outcome: FixOutcome = fix_until_stable(text, result.findings, lint, language=language)
    fix = FileFix(path, result, problems=[f"{path}:{f.line}:{f.column + 1}: {f.code} fix not applied: {why}"
                                          for f, why in outcome.skipped])
    if not outcome.count or outcome.text == text:
        return fix
    try:
        new_data = (BOM if bom else b"") + outcome.text.encode(encoding)
    except (UnicodeEncodeError, LookupError) as exc:
        fix.problems.append(f"{path}: not fixed: the fixed text cannot be written as {encoding} ({exc})")
        return fix
    if diff:  # nothing is written: the findings reported stay those of the file as it is
        fix.diff = "".join(difflib.unified_diff(_keepends(text), _keepends(outcome.text), f"a/{path}", f"b/{path}"))
        if not fix.diff.endswith("\n"):
            fix.diff += "\n\\ No newline at end of file\n"
        fix.fixed = outcome.count
        return fix
    try:
        try:
            now = read_bytes(path, settings.max_file_bytes)
        except NotReadable:   # it grew past the limit or was replaced by a special file meanwhile
            now = None
        if now != data:
            fix.problems.append(f"{path}: not fixed: the file changed while it was being checked; run again")
            return fix
        path.write_bytes(new_data)
    except OSError as exc:
        fix.problems.append(f"{path}: not fixed: cannot write the file ({_os_reason(exc)})")
        return fix
    fix.fixed = outcome.count
    if outcome.findings is not None:
        fix.result = FileResult(str(path), outcome.findings, error=result.error, notes=result.notes)
    else:
        fix.result = lint_text(outcome.text, str(path), settings)
    return fix
