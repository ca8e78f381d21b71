"""Every compile-time finding code has its page with the five headings."""
from pathlib import Path

import pytest
from tritonify.diagnostics.compile.findings import CODES
from tritonify.references import page_path, page_url

ROOT = Path(__file__).resolve().parents[2]
HEADINGS = ["## What it detects", "## Why it costs", "## Example", "## Fix", "## Evidence"]


@pytest.mark.parametrize("code", CODES)
def test_page(code):
    page = page_path(code)
    assert page == ROOT / "references" / "compile" / f"{code}.md"
    assert page_url(code).startswith("file://")
    text = page.read_text(encoding="utf-8")
    assert text.startswith(f"# {code} ")
    for heading in HEADINGS:
        assert heading in text
