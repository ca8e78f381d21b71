"""The trust setting: false unless the client says true; `trusted` flat or under `tritonify` is
the one setting, the messages name it as it is written where it exists (never a
`tritonify.trusted` VS Code setting, which does not exist), and docs/editors.md documents it."""
from __future__ import annotations

from pathlib import Path

import json

from tritonify.server.settings import EditorSettings, trust_hint

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


def test_the_hint_names_what_exists_in_each_editor_and_the_docs_say_the_same():
    other, vscode = trust_hint(False), trust_hint(True)
    assert "tritonify.trusted" not in other and "tritonify.trusted" not in vscode
    assert '"trusted": true' in other and "init_options" in other and "[language-server.tritonify.config]" in other
    assert vscode == "trust the workspace: Manage Workspace Trust"
    doc = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
    assert "### Trust (the `trusted` setting)" in doc and "init_options = { trusted = true" in doc
    assert "[language-server.tritonify.config]" in doc and "trusted = true" in doc and "| `trusted` | `false`" in doc
    assert "Manage Workspace Trust" in doc
    # the extension says so by the key contract/protocol.json names, which the server reads
    protocol = json.loads((ROOT / "contract" / "protocol.json").read_text(encoding="utf-8"))
    assert protocol["clientStatesTrust"] == "statesWorkspaceTrust"
    assert "[CLIENT_STATES_TRUST]: true" in (ROOT / "extension" / "server.ts").read_text(encoding="utf-8")


def test_no_message_of_the_server_or_the_extension_names_a_tritonify_trusted_setting():
    for folder, suffix in (("server", ".py"), ("extension", ".ts")):
        for path in (ROOT / folder).rglob(f"*{suffix}"):
            assert "tritonify.trusted" not in path.read_text(encoding="utf-8").replace(
                "no `tritonify.trusted`", ""), path
