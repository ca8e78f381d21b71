"""Knowledge pages (Markdown) that diagnostics, hovers and `tritonify rule` show.

The one place that knows where a page lives: `page_path(code)` for a rule (`rules/TRI001.md`), a
bottleneck pattern (`patterns/C.md`) or a compile finding (`compile/CMP-K.md`), wherever the
package is installed. Guides (`guides/`) are linked by name.
"""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent
RULES = ROOT / "rules"
PAGE_FOLDERS = ("rules", "patterns", "compile")   # rule codes, ncu pattern letters, compile findings


def page_path(code: str) -> Path | None:
    """The page of a rule, pattern or compile finding by its code (any case); None without one."""
    code = code.strip()
    if not code or "/" in code or "\\" in code or code.startswith("."):
        return None
    for folder in PAGE_FOLDERS:
        page = ROOT / folder / f"{code.upper()}.md"
        if page.is_file():
            return page
    return None


def page_url(code: str) -> str | None:
    """file:// URI of the code's page (what findings carry as their link); None without a page."""
    page = page_path(code)
    return page.as_uri() if page else None
