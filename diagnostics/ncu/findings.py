"""Turn diagnoses into line findings: what the editor shows on the kernel's lines.

`line_findings(diagnoses)` is the function the language server calls (through
`tritonify profile --format json`, or directly on `Diagnosis` objects). Each pattern found on a
launch becomes a `Finding` with `code` = the pattern letter, on the line where its cost is (the
kernel's `def` line for launch-level patterns such as A, B, J), with the pattern's code actions.
The report's file path is mapped onto a local file when the report came from another machine.
"""
from __future__ import annotations

import re
from pathlib import Path

from tritonify.diagnostics.model import Finding, Severity
from tritonify.diagnostics.ncu.code_actions import fixes_for
from tritonify.diagnostics.ncu.diagnose import Diagnosis
from tritonify.diagnostics.ncu.paths import map_source_path
from tritonify.diagnostics.ncu.patterns import by_letter
from tritonify.diagnostics.source import split_lines
from tritonify.references import page_url

def _kernel_range(text: str, def_line: int | None) -> range:
    lines = split_lines(text)
    if not def_line:
        return range(0)
    end = len(lines)
    indent = len(lines[def_line - 1]) - len(lines[def_line - 1].lstrip()) if def_line <= len(lines) else 0
    for n in range(def_line + 1, len(lines) + 1):
        t = lines[n - 1]
        if t.strip() and not t.startswith((" ", "\t", ")")) and (len(t) - len(t.lstrip())) <= indent \
                and re.match(r"(@|def |class |extern |__global__|[A-Za-z_])", t.lstrip()):
            end = n - 1
            break
    return range(def_line, end + 1)


def line_findings(diagnoses: list[Diagnosis], *, roots: list[str | Path] | None = None,
                  texts: dict[str, str] | None = None, lines_per_pattern: int = 2) -> list[Finding]:
    """Findings on the kernel's source lines, one per (launch, pattern, line).

    `texts` maps a local path to its current text (the editor's buffer); without it the file is
    read from disk. Kernel-level patterns sit on the `def` line. Explained patterns (a cause was
    found too) and secondary lines are HINTs, so the editor shows the cause first.
    """
    out: list[Finding] = []
    for d in diagnoses:
        if d.profile is None:
            continue
        path = map_source_path(d.profile.path, roots)
        text = (texts or {}).get(path)
        if text is None:
            try:
                text = Path(path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = None
        file_lines = split_lines(text) if text else []
        cuda = path.endswith((".cu", ".cuh", ".cpp", ".h", ".hpp"))
        for hit in d.hits:
            letter = hit.pattern.letter
            targets = hit.lines[:lines_per_pattern] or ([d.profile.def_line] if d.profile.def_line else [])
            if not targets:
                continue
            fix_lines = list(hit.lines)
            more = getattr(by_letter(letter), "more_fix_lines", None)
            if more and text and not cuda:  # lines the profile cannot point at (e.g. the cast itself)
                fix_lines += more(file_lines, _kernel_range(text, d.profile.def_line))
            limiter = hit.evidence.get("limiter") if isinstance(hit.evidence.get("limiter"), str) else None
            kernel_text = "\n".join(file_lines) if file_lines else None
            fixes = fixes_for(letter, kernel_text, fix_lines, cuda=cuda,
                              sm_count=int(hit.evidence.get("launch__sm_count", 132) or 132), limiter=limiter)
            for rank, line in enumerate(targets):
                width = len(file_lines[line - 1]) if 0 < line <= len(file_lines) else 0
                indent = (width - len(file_lines[line - 1].lstrip())) if width else 0
                primary = rank == 0 and not hit.explained_by
                severity = (Severity.WARNING if hit.severity == "warning" else Severity.INFO) if primary else Severity.HINT
                note = f" (caused by {hit.explained_by})" if hit.explained_by else ""
                out.append(Finding(
                    code=letter,
                    message=f"{hit.pattern.title} in {d.launch.kernel} (ncu launch {d.launch.id}): "
                            f"{hit.message}{note}; fix: {hit.fix_text}",
                    line=line, column=indent, end_line=line, end_column=width,
                    severity=severity, path=path, fixes=list(fixes) if rank == 0 else [],
                    url=page_url(letter)))
    return out
