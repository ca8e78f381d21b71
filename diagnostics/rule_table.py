"""The README's rule table, generated from the registry (scripts/update_readme.py writes it;
tests/test_readme.py fails when it is stale)."""
from __future__ import annotations

import json

from tritonify.diagnostics.registry import all_rules
from tritonify.references import RULES


def measured_precision() -> dict[str, dict[str, dict[str, int]]]:
    """{round: {code: {"TP": n, "FP": n, "NOISE": n}}} from the real-world study
    (references/rules/precision.json, written by benchmarks/realworld/precision.py)."""
    path = RULES / "precision.json"
    if not path.is_file():
        return {}
    return json.loads(path.read_text(encoding="utf-8")).get("rounds", {})


def _precision_cell(code: str, rounds: dict) -> str:
    cells = []
    for rnd, per_rule in rounds.items():
        c = per_rule.get(code)
        if c and sum(c.values()):
            cells.append(f"r{rnd}: {c['TP'] / sum(c.values()):.0%} of {sum(c.values())}")
    return "; ".join(cells) or "no findings labelled"


def fix_cell(rule) -> str:
    """'yes' where `check --fix` applies the fix, 'editor' where it is only offered in the editor
    (every fix changes behaviour and needs review), '' without a fix."""
    if not rule.fixable:
        return ""
    return "yes" if rule.safe_fix else "editor"


def markdown() -> str:
    rounds = measured_precision()
    rows = ["| Code | Name | What it finds | Severity | Fix | Default | Precision (real-world study) |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for reg in all_rules():
        r = reg.rule
        rows.append(f"| [{r.code}](references/rules/{r.code}.md) | `{r.name}` | {r.summary} | {r.severity.value} "
                    f"| {fix_cell(r)} | {'yes' if r.default else 'opt-in'} | {_precision_cell(r.code, rounds)} |")
    return "\n".join(rows)

