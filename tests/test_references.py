"""Every rule has its page, with the five headings, and diagnostics link to it."""
import pytest

from tritonify.diagnostics.registry import all_rules

HEADINGS = ["## What it detects", "## Why it costs", "## Example", "## Fix", "## Evidence"]


@pytest.mark.parametrize("reg", all_rules(), ids=lambda r: r.code)
def test_rule_has_page_with_headings(reg):
    page = reg.rule.page
    assert page.is_file(), f"missing {page}"
    text = page.read_text(encoding="utf-8")
    assert text.startswith(f"# {reg.code} {reg.rule.name}")
    for heading in HEADINGS:
        assert heading in text, f"{reg.code}: page lacks '{heading}'"


@pytest.mark.parametrize("reg", all_rules(), ids=lambda r: r.code)
def test_rule_has_tests(reg):
    from pathlib import Path

    tests = Path(__file__).parent / "rules" / f"test_{reg.code.lower()}.py"
    assert tests.is_file(), f"missing {tests}"


def test_every_rule_module_is_registered():
    """Each `rules/<language>/<code>_<name>.py` in the source folder is a registered rule (a strict
    editable install finds a new module only after the install is re-run)."""
    from pathlib import Path

    from tritonify.diagnostics import rules

    folder = Path(rules.__file__).resolve().parent
    on_disk = {p.stem.split("_", 1)[0].upper() for p in folder.glob("*/[a-z][a-z][a-z][0-9][0-9][0-9]_*.py")}
    registered = {r.code for r in all_rules()}
    assert on_disk <= registered, f"not registered: {sorted(on_disk - registered)} (re-run the editable install)"
