"""The rule table's Fix column tells the truth: "yes" where `check --fix` applies a fix, "editor"
where every fix changes behaviour and is only offered in the editor for review."""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from tritonify.diagnostics.engine import iter_files, lint_file
from tritonify.diagnostics.model import Applicability
from tritonify.diagnostics.registry import all_rules
from tritonify.diagnostics.rule_table import fix_cell, markdown
from tritonify.diagnostics.settings import Settings

ROOT = Path(__file__).resolve().parent.parent


def _applicabilities() -> dict[str, set[Applicability]]:
    """code -> the applicabilities of every fix its findings offer on the fixtures and examples."""
    everything = Settings(select=("ALL",))
    files = [*(ROOT / "tests" / "rules" / "fixtures").iterdir(), *iter_files([ROOT / "examples"], everything)]
    seen: dict[str, set[Applicability]] = defaultdict(set)
    for path in files:
        for finding in lint_file(path, everything).findings:
            seen[finding.code].update(fix.applicability for fix in finding.fixes)
    return seen


def test_fix_column_matches_what_the_rules_offer():
    seen = _applicabilities()
    for reg in all_rules():
        rule = reg.rule
        offered = seen.get(rule.code, set())
        if not rule.fixable:
            continue
        assert offered, f"{rule.code} says fixable but offers no fix on its fixture or the examples"
        if rule.safe_fix:
            assert Applicability.SAFE in offered, f"{rule.code}: the table says `--fix` fixes it, but no fix is safe"
        else:
            assert Applicability.SAFE not in offered, f"{rule.code}: safe_fix=False, yet a safe fix is offered"


def test_table_says_editor_for_unsafe_only_fixes():
    rows = {line.split("|")[1].strip(): line for line in markdown().splitlines()[2:]}
    for reg in all_rules():
        cell = fix_cell(reg.rule)
        assert cell == ("" if not reg.rule.fixable else "yes" if reg.rule.safe_fix else "editor")
        row = next(v for k, v in rows.items() if f"[{reg.code}]" in k)
        assert f"| {cell} |" in row
    assert any(not r.rule.safe_fix and r.rule.fixable for r in all_rules())
