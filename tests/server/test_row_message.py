"""Problems rows: a message fits about 100 characters, cut at a clause, the rest in the hover."""
from __future__ import annotations

import json
from pathlib import Path

from tritonify.server.diagnostics_feature import ROW_CHARS, row_message

FINDINGS = Path.home() / ".cache" / "tritonify-realworld" / ".round1_findings.json"


def test_a_short_message_is_whole_and_a_long_one_is_cut_at_a_clause():
    assert row_message("libdevice.tanh in a loop") == "libdevice.tanh in a loop"
    long = ("masked `tl.load` without `other=` feeds `tl.dot` (line 930): masked-off lanes are undefined by the spec "
            "(today's GPUs happen to fill them with 0, but nothing promises it); add `other=0.0`")
    row = row_message(long)
    assert row == "masked `tl.load` without `other=` feeds `tl.dot` (line 930)…"
    assert len(row) <= ROW_CHARS
    assert row_message("x" * 300).endswith("…") and len(row_message("x" * 300)) <= ROW_CHARS


def test_every_message_of_the_round1_study_fits_a_row():
    if not FINDINGS.is_file():
        import pytest

        pytest.skip("the real-world corpus findings are not built here")
    data = json.loads(FINDINGS.read_text())
    messages = {f["message"] for f in (data if isinstance(data, list) else data.get("findings", []))}
    assert messages
    for message in messages:
        row = row_message(message)
        assert len(row) <= ROW_CHARS and (row == message or row.endswith("…"))
        assert message.startswith(row[:-1].rstrip())   # a prefix: nothing rewritten
