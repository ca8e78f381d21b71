"""Every pattern has its page (signal, cause, fix in Triton and CUDA, sources), and the guides exist."""
from pathlib import Path

import pytest

from tritonify.diagnostics.ncu.patterns import detectors
from tritonify.diagnostics.lookup import rule_page

REFS = Path(__file__).resolve().parents[2] / "references"


@pytest.mark.parametrize("mod", detectors(), ids=lambda m: m.PATTERN.letter)
def test_pattern_page(mod):
    letter, title = mod.PATTERN.letter, mod.PATTERN.title
    found = rule_page(letter)
    assert found is not None, f"missing references/patterns/{letter}.md"
    page = found.text
    assert page.startswith(f"# {letter} {title}")
    for heading in ("## Signal", "## Cause", "## Fix", "### Triton", "### CUDA", "## How tritonify decides", "## Sources"):
        assert heading in page, (letter, heading)
    assert "```python" in page and "```cuda" in page


@pytest.mark.parametrize("guide", ["profiling.md", "playbook.md"])
def test_guides(guide):
    text = (REFS / "guides" / guide).read_text()
    assert text.startswith("# ") and len(text) > 2000
