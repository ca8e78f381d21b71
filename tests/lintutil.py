"""Helpers for rule tests: lint a snippet or a fixture with one rule selected."""
from __future__ import annotations

import textwrap
from pathlib import Path

from tritonify.diagnostics.engine import lint_text
from tritonify.diagnostics.fixes import apply_edits, choose_fixes
from tritonify.diagnostics.settings import Settings
from tritonify.kernels.templates.insert import template_insert_edits

FIXTURES = Path(__file__).parent / "rules" / "fixtures"


def lint(code: str, select: str | None = None, path: str = "kernel.py"):
    """Findings for a snippet (dedented), only `select`'s codes when given."""
    settings = Settings(select=(select,) if select else ("ALL",))
    result = lint_text(textwrap.dedent(code), path, settings)
    return [f for f in result.findings if select is None or f.code.startswith(select)]


def lint_fixture(name: str, select: str | None = None):
    path = FIXTURES / name
    settings = Settings(select=(select,) if select else ("ALL",))
    return lint_text(path.read_text(), str(path), settings).findings


def marked_lines(name: str, code: str) -> list[int]:
    """1-based lines of a fixture that carry a `# CODE` marker comment (the expected findings)."""
    lines = (FIXTURES / name).read_text().splitlines()
    return [i for i, line in enumerate(lines, 1) if f"# {code}" in line]


def fixed(code: str, finding, which: int = 0) -> str:
    """The snippet after applying one of a finding's fixes."""
    return apply_edits(textwrap.dedent(code), finding.fixes[which].edits)


def apply_fixes(text: str, findings, *, safe_only: bool = True) -> tuple[str, int]:
    """One pass of the fix loop: each finding's preferred fix applied once, overlapping ones left
    out (as `check --fix` chooses them). Returns (new text, number of fixes applied)."""
    chosen, edits = choose_fixes(text, findings, safe_only)
    return apply_edits(text, edits), len(chosen)


def apply_template(text: str, template, line: int, **placeholders: str) -> str:
    """`text` with the template inserted (plain text): what accepting the code action gives."""
    return apply_edits(text, template_insert_edits(text, template, line, **placeholders))
