"""The README's rule table, generated from the registry (scripts/update_readme.py writes it;
tests/test_readme.py fails when it is stale)."""
from __future__ import annotations

from tritonify.diagnostics.registry import all_rules


def markdown() -> str:
    rows = ["| Code | Name | What it finds | Severity | Fix |", "| --- | --- | --- | --- | --- |"]
    for reg in all_rules():
        r = reg.rule
        rows.append(f"| [{r.code}](references/rules/{r.code}.md) | `{r.name}` | {r.summary} | {r.severity.value} | {'yes' if r.fixable else ''} |")
    return "\n".join(rows)

