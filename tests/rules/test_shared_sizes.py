"""TRI004 and TRI005 share one `KernelSizes` per kernel (`_static_sizes.kernel_sizes`): each
rule must find the same whether it runs alone, after the other, or before it (a shared memo
that kept a value one rule computed under its own assumptions would show here)."""
from __future__ import annotations

from pathlib import Path

import pytest

from tritonify.diagnostics.engine import lint_text
from tritonify.diagnostics.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
FILES = [ROOT / "tests" / "rules" / "fixtures" / "TRI004.py", ROOT / "tests" / "rules" / "fixtures" / "TRI005.py",
         *sorted((ROOT / "examples" / "triton").glob("*.py"))]


def _found(text: str, path: str, select: tuple[str, ...], code: str) -> list[tuple]:
    result = lint_text(text, path, Settings(select=select))
    return [(f.line, f.column, f.message) for f in result.findings if f.code == code]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_each_rule_alone_or_together(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    for code in ("TRI004", "TRI005"):
        alone = _found(text, str(path), (code,), code)
        together = _found(text, str(path), ("TRI004", "TRI005"), code)
        assert alone == together, code


def test_the_fixtures_fire() -> None:
    for code in ("TRI004", "TRI005"):
        path = ROOT / "tests" / "rules" / "fixtures" / f"{code}.py"
        assert _found(path.read_text(encoding="utf-8"), str(path), (code,), code)
