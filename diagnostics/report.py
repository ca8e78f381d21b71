"""Render findings: ruff-style text, JSON, SARIF 2.1.0, statistics."""
from __future__ import annotations

import json
from collections import Counter
from typing import Iterable

from tritonify.infra.version import __version__
from tritonify.diagnostics.model import Finding, Severity
from tritonify.diagnostics.registry import all_rules, get_rule


def text(findings: list[Finding], *, show_fixes: bool = True) -> str:
    lines = []
    for f in findings:
        mark = " [*]" if show_fixes and f.fix is not None and f.fix.applicability.value == "safe" else ""
        lines.append(f"{f.path}:{f.line}:{f.column + 1}: {f.code}{mark} {f.message}")
    return "\n".join(lines)


_PLURAL = {"error": "errors", "warning": "warnings", "info": "info", "hint": "hints", "finding": "findings",
           "file": "files"}


def count(n: int, noun: str) -> str:
    """`1 warning`, `2 warnings`, `3 info`."""
    return f"{n} {noun if n == 1 else _PLURAL.get(noun, noun + 's')}"


def summary(findings: list[Finding], files: int, *, fixed: int = 0, would: bool = False, skipped: int = 0) -> str:
    """The last lines of the text report. `would`: the fixes were only shown (--fix --diff);
    `skipped`: paths not checked (special files, broken links), each reported on its own."""
    n = len(findings)
    fixable = sum(1 for f in findings if f.fix is not None and f.fix.applicability.value == "safe")
    parts = []
    if fixed:
        parts.append(f"{'Would fix' if would else 'Fixed'} {count(fixed, 'finding')}.")
    also = f", {skipped} skipped" if skipped else ""
    if n == 0 and not files and skipped:
        parts.append(f"No file checked ({skipped} skipped).")
    elif n == 0:
        parts.append(f"All checks passed ({count(files, 'file')} checked{also}).")
    else:
        by_sev = Counter(f.severity.value for f in findings)
        detail = ", ".join(count(by_sev[s.value], s.value) for s in Severity if by_sev[s.value])
        parts.append(f"Found {count(n, 'finding')} ({detail}) in {count(files, 'file')} checked{also}.")
        if fixable:
            parts.append(f"[*] {fixable} fixable with `tritonify check --fix`.")
    return "\n".join(parts)


def statistics(findings: list[Finding]) -> str:
    counts = Counter(f.code for f in findings)
    fixable = Counter(f.code for f in findings if f.fix is not None and f.fix.applicability.value == "safe")
    rows = []
    for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        reg = get_rule(code)
        name = reg.rule.name if reg else ("invalid-file" if code == "TRI000" else "")
        rows.append(f"{n:>5}\t{code}\t{'[*] ' if fixable[code] else '    '}{name}")
    return "\n".join(rows)


def to_json(findings: list[Finding]) -> str:
    return json.dumps([f.to_dict() for f in findings], indent=2)


_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note", Severity.HINT: "note"}


def to_sarif(findings: list[Finding]) -> str:
    """SARIF 2.1.0, as GitHub code scanning accepts it."""
    from pathlib import Path

    rules = []
    index = {}
    for reg in all_rules():
        index[reg.code] = len(rules)
        rules.append({
            "id": reg.code,
            "name": reg.rule.name,
            "shortDescription": {"text": reg.rule.summary},
            "helpUri": reg.rule.url,
            "defaultConfiguration": {"level": _SARIF_LEVEL[reg.rule.severity]},
        })
    results = []
    for f in findings:
        if f.code not in index:
            index[f.code] = len(rules)
            rules.append({"id": f.code, "shortDescription": {"text": f.code}})
        uri = Path(f.path).as_posix()
        res = {
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": _SARIF_LEVEL[f.severity],
            "message": {"text": f.message},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {"uri": uri},
                    "region": {
                        "startLine": f.line,
                        "startColumn": f.column + 1,
                        "endLine": f.end_line,
                        "endColumn": f.end_column + 1,
                    },
                }
            }],
        }
        if f.fix is not None:
            res["fixes"] = [{
                "description": {"text": f.fix.title},
                "artifactChanges": [{
                    "artifactLocation": {"uri": uri},
                    "replacements": [{
                        "deletedRegion": {"startLine": e.start_line, "startColumn": e.start_column + 1,
                                          "endLine": e.end_line, "endColumn": e.end_column + 1},
                        "insertedContent": {"text": e.new_text},
                    } for e in f.fix.edits],
                }],
            }]
        results.append(res)
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "tritonify", "version": __version__, "rules": rules}},
            "results": results,
        }],
    }
    return json.dumps(doc, indent=2)


def render(findings: Iterable[Finding], fmt: str) -> str:
    findings = list(findings)
    if fmt == "json":
        return to_json(findings)
    if fmt == "sarif":
        return to_sarif(findings)
    return text(findings)
