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


def measured_against_ground_truth() -> dict[str, dict[str, int]]:
    """{code: {"TP", "FP"}} of the compile-break rules, judged by running freshly written programs
    (precision.json's "ground_truth", from results/freshcode/)."""
    path = RULES / "precision.json"
    if not path.is_file():
        return {}
    return json.loads(path.read_text(encoding="utf-8")).get("ground_truth", {})


def measured_as_labelled() -> dict[str, dict[str, dict[str, int]]]:
    """{round: {code: counts}} for rules narrowed from their own round's labels: the round as it
    was labelled (precision.json's "as_labelled")."""
    path = RULES / "precision.json"
    if not path.is_file():
        return {}
    return json.loads(path.read_text(encoding="utf-8")).get("as_labelled", {})


def _precision_cell(code: str, rounds: dict, as_labelled: dict | None = None) -> str:
    cells = []
    for rnd in sorted(set(rounds) | set(as_labelled or {}), key=int):
        c = rounds.get(rnd, {}).get(code)
        before = (as_labelled or {}).get(rnd, {}).get(code)
        if before and sum(before.values()):
            shown = f"r{rnd} as labelled: {before['TP'] / sum(before.values()):.0%} of {sum(before.values())}"
            if c and sum(c.values()):
                shown += f", after narrowing: {c['TP'] / sum(c.values()):.0%} of {sum(c.values())}"
            else:
                shown += ", none left after narrowing"
            cells.append(shown)
        elif c and sum(c.values()):
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
    as_labelled = measured_as_labelled()
    truth = measured_against_ground_truth()
    rows = ["| Code | Name | What it finds | Severity | Fix | Default | Precision (real-world study; ground truth for compile breaks) |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for reg in all_rules():
        r = reg.rule
        rows.append(f"| [{r.code}](references/rules/{r.code}.md) | `{r.name}` | {r.summary} | {r.severity.value} "
                    f"| {fix_cell(r)} | {'yes' if r.default else 'opt-in'} | {_truth_cell(truth.get(r.code))}{_precision_cell(r.code, rounds, as_labelled)} |")
    return "\n".join(rows)


def _truth_cell(counts: dict | None) -> str:
    """The ground-truth figure of a compile-break rule, first in its cell (it decides its default)."""
    if not counts or not sum(counts.values()):
        return ""
    n = sum(counts.values())
    return f"**ran: {counts['TP'] / n:.0%} of {n}**; "

