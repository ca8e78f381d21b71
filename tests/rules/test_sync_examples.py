"""The examples/triton/sync_*.py files fire exactly the synchronisation/softmax rules their
docstrings announce (TRI008-TRI012, TRI018), so the examples and the rules cannot drift apart."""
import ast
import re
from pathlib import Path

import pytest
from tritonify.diagnostics.engine import lint_text
from tritonify.diagnostics.settings import Settings

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples" / "triton").glob("sync_*.py"))
OWN = ("TRI008", "TRI009", "TRI010", "TRI011", "TRI012", "TRI018", "TRI063")


def test_there_are_examples():
    assert len(EXAMPLES) >= 3


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_fires_what_its_docstring_says(path):
    text = path.read_text()
    announced = set(re.findall(r"TRI0\d\d", ast.get_docstring(ast.parse(text)) or "")) & set(OWN)
    assert announced, f"{path.name} announces none of {OWN}"
    result = lint_text(text, str(path), Settings(select=OWN))
    assert result.error is None
    assert {f.code for f in result.findings} == announced
