"""Half-typed and garbage input never makes the linter raise: it reports, it does not crash."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tritonify.diagnostics.engine import lint_text
from tritonify.diagnostics.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
CORPUS = sorted(p for p in [*(ROOT / "examples").rglob("*.py"), *(ROOT / "tests" / "rules" / "fixtures").glob("*.py")])
TEXTS = [p.read_text(encoding="utf-8", errors="replace") for p in CORPUS]
ALL = Settings()


def _check(text: str | bytes, path: str = "k.py"):
    result = lint_text(text, path, ALL)
    # an internal error in a rule is a bug even when the engine survives it
    assert result.error is None or result.error.startswith("SyntaxError"), result.error
    for f in result.findings:
        assert f.line >= 1 and f.column >= 0 and f.end_line >= f.line


@pytest.mark.skipif(not TEXTS, reason="no corpus")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_truncation_never_raises(data):
    text = data.draw(st.sampled_from(TEXTS))
    cut = data.draw(st.integers(0, len(text)))
    _check(text[:cut])


@pytest.mark.skipif(not TEXTS, reason="no corpus")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_edits_never_raise(data):
    text = data.draw(st.sampled_from(TEXTS))
    for _ in range(data.draw(st.integers(1, 4))):
        pos = data.draw(st.integers(0, len(text)))
        end = data.draw(st.integers(pos, min(len(text), pos + 40)))
        insert = data.draw(st.sampled_from(["", "(", ")", ":", "\n", "    ", "tl.", "libdevice.tanh(", "]", "'''", "\\", "\x00", "é", "# noqa"]))
        text = text[:pos] + insert + text[end:]
    _check(text)


@given(st.binary(max_size=400))
@settings(max_examples=100, deadline=None)
def test_random_bytes_never_raise(data):
    _check(data)
    _check(data, "k.cu")


def test_every_corpus_file_lints_without_internal_error():
    for path, text in zip(CORPUS, TEXTS):
        _check(text, str(path))
