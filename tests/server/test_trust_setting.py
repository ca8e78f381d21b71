"""The trust setting: false unless the client says true; `trusted` flat or under `tritonify`
(what messages call tritonify.trusted) is the one setting, and docs/editors.md documents it."""
from __future__ import annotations

from pathlib import Path

from tritonify.server.settings import TRUST_HINT, EditorSettings

ROOT = Path(__file__).resolve().parents[2]


def test_trust_defaults_to_false():
    assert EditorSettings().trusted is False
    assert EditorSettings().updated({"lint": {"run": "onSave"}}).trusted is False
    assert EditorSettings().updated(None).trusted is False


def test_trust_is_read_flat_or_under_tritonify_and_a_wrong_value_is_refused():
    assert EditorSettings().updated({"trusted": True}).trusted is True
    assert EditorSettings().updated({"tritonify": {"trusted": True}}).trusted is True
    wrong = EditorSettings().updated({"trusted": "yes"})
    assert wrong.trusted is False and any("trusted" in p for p in wrong.problems)
    assert EditorSettings().updated({"trusted": True}).updated({"trusted": False}).trusted is False


def test_the_setting_messages_name_is_documented_for_other_editors():
    assert "tritonify.trusted" in TRUST_HINT
    doc = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
    assert "tritonify.trusted" in doc and "trusted = true" in doc and "| `trusted` | `false`" in doc
