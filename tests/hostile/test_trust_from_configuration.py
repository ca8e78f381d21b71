"""A workspace cannot trust itself (issue 31): `"trusted": true` in a `workspace/configuration`
answer (a workspace settings file: `.helix/languages.toml`, a project-local Neovim config, VS Code's
`.vscode/settings.json`) or in settings pushed with `didChangeConfiguration` is ignored; only the
client's initialization options grant trust. Before the fix the per-folder answer was accepted and
the next Benchmark ran the workspace's code."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.server.rawclient import RawClient

HERE = Path(__file__).resolve().parent
FAKE_ENGINE = HERE.parent / "server" / "fake_engine.py"
KERNEL = (HERE.parent / "cli" / "project" / "kernels.py").read_text()


def benchmark(c: RawClient, uri: str) -> dict:
    return c.request("workspace/executeCommand", {"command": "tritonify.benchmark", "arguments": [uri, "act_kernel"]},
                     timeout=60)["result"]


@pytest.mark.parametrize("where", ["global answer", "folder answer", "under tritonify", "pushed"])
def test_trust_from_the_workspace_configuration_is_ignored(tmp_path, where):
    root = tmp_path / "ws"
    root.mkdir()
    path = root / "kernels.py"
    path.write_text(KERNEL)
    uri = path.as_uri()
    claim = {"tritonify": {"trusted": True}} if where == "under tritonify" else {"trusted": True}

    def answer(params):
        items = params.get("items", [])
        if where == "folder answer":
            return [None if item.get("scopeUri") is None else claim for item in items]
        return [claim if where != "pushed" else None for _ in items]

    c = RawClient(answers={"workspace/configuration": answer})
    try:
        c.initialize(root, capabilities={"workspace": {"configuration": True}},
                     options={"interpreter": [sys.executable, str(FAKE_ENGINE)]}, client_name="helix")
        if where == "pushed":
            c.notify("workspace/didChangeConfiguration", {"settings": claim})
        c.open(uri, KERNEL)
        c.diagnostics(uri, timeout=60)
        outcome = benchmark(c, uri)
        logged = [n["params"]["message"] for n in c.notifications if n.get("method") == "window/logMessage"]
        assert c.shutdown_and_exit() == 0
    finally:
        c.kill()
    assert outcome["status"] == "untrusted", outcome
    assert not Path(str(path) + ".ran").exists()      # the fake engine marks what it ran
    assert any("ignored \"trusted\": true from the workspace's configuration" in m for m in logged), logged


def test_the_client_grants_trust_and_the_configuration_may_withdraw_it(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    path = root / "kernels.py"
    path.write_text(KERNEL)
    c = RawClient(answers={"workspace/configuration": lambda p: [{"trusted": False} for _ in p.get("items", [])]})
    try:
        c.initialize(root, capabilities={"workspace": {"configuration": True}},
                     options={"trusted": True, "interpreter": [sys.executable, str(FAKE_ENGINE)]}, client_name="Neovim")
        c.open(path.as_uri(), KERNEL)
        c.diagnostics(path.as_uri(), timeout=60)
        outcome = benchmark(c, path.as_uri())
        assert c.shutdown_and_exit() == 0
    finally:
        c.kill()
    assert outcome["status"] == "untrusted", outcome
