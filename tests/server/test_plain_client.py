"""The server driven by a plain client (no pygls on the client side): the "Done when" scenario,
clients shaped like Neovim's built-in LSP and Helix, and every kind of bad input."""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from tests.server.conftest import FAKE_ENGINE, KERNEL, TANH_LINE
from tests.server.rawclient import RawClient, frame, lsp_position
from tests.server.test_child_process import _alive


@pytest.fixture
def raw():
    clients = []

    def make(**kwargs):
        c = RawClient(**kwargs)
        clients.append(c)
        return c

    yield make
    for c in clients:
        c.kill()


def _apply(text: str, edits: list[dict]) -> str:
    """Apply LSP TextEdits (UTF-16) to text, as an editor does."""
    lines = text.split("\n")

    def offset(pos):
        return sum(len(line) + 1 for line in lines[:pos["line"]]) + pos["character"]

    for e in sorted(edits, key=lambda e: (e["range"]["start"]["line"], e["range"]["start"]["character"]), reverse=True):
        text = text[:offset(e["range"]["start"])] + e["newText"] + text[offset(e["range"]["end"]):]
    return text


def test_done_when_scenario(raw, workspace):
    """Open a kernel, see the diagnostics with their docs links, apply the TRI001 fix, feed
    half-typed and garbage documents, shut down cleanly."""
    c = raw()
    init = c.initialize(workspace)
    assert "result" in init and init["result"]["serverInfo"]["name"] == "tritonify"
    uri = (workspace / "kernel.py").as_uri()
    c.open(uri, KERNEL)
    diags = [d for d in c.diagnostics(uri, version=1) if d["code"] == "TRI001"]
    assert len(diags) == 1 and diags[0]["source"] == "tritonify"
    href = diags[0]["codeDescription"]["href"]
    assert href.startswith("file://") and Path(href[len("file://"):]).read_text().startswith("# TRI001")

    actions = c.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": diags[0]["range"],
                                                    "context": {"diagnostics": diags}})["result"]
    fix = next(a for a in actions if a.get("isPreferred"))
    edits = fix["edit"]["changes"][uri]
    # an editor sends the applied edit back as an incremental change (a save lints it again; the
    # same answer is not published twice)
    start = c.mark()
    c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                        "contentChanges": [{"range": e["range"], "text": e["newText"]} for e in edits]})
    fixed = _apply(KERNEL, edits)
    assert "2 * tl.sigmoid(2 * x) - 1" in fixed.splitlines()[TANH_LINE]
    c.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    assert "TRI001" not in [d["code"] for d in c.diagnostics(uri, version=2, start=start)]

    version = 2
    for cut in range(len(KERNEL), 0, -97):             # half-typed: every truncation
        version += 1
        c.change(uri, KERNEL[:cut], version)
    for garbage in ("\x00\x01\x02 def (((", "é" * 5000 + "\ud83d", "@triton.jit\ndef k(:\n", ""):
        version += 1
        start = c.mark()
        c.change(uri, garbage, version)
        lens = c.request("textDocument/codeLens", {"textDocument": {"uri": uri}})
        assert "result" in lens
    c.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    assert c.diagnostics(uri, version=version, start=start) == []      # the empty document is clean
    assert c.shutdown_and_exit() == 0


NEOVIM_CAPABILITIES = {   # the parts of Neovim 0.10's make_client_capabilities() that matter here
    "general": {"positionEncodings": ["utf-16"]},
    "textDocument": {
        "synchronization": {"didSave": True, "dynamicRegistration": False, "willSave": True},
        "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": [
            "", "quickfix", "refactor", "refactor.extract", "refactor.inline", "refactor.rewrite", "source",
            "source.organizeImports"]}}, "isPreferredSupport": True, "dataSupport": True,
            "resolveSupport": {"properties": ["edit"]}},
        "hover": {"contentFormat": ["markdown", "plaintext"]},
        "publishDiagnostics": {"relatedInformation": True, "tagSupport": {"valueSet": [1, 2]}, "dataSupport": True},
        "codeLens": {"dynamicRegistration": False},
    },
    "workspace": {"configuration": True, "workspaceFolders": True, "applyEdit": True,
                  "didChangeConfiguration": {"dynamicRegistration": False},
                  "workspaceEdit": {"resourceOperations": ["rename", "create", "delete"]}},
    "window": {"workDoneProgress": True, "showMessage": {}},
}


def test_neovim_style_client(raw, workspace):
    """Neovim: `init_options` become initializationOptions, `settings` are pushed with
    workspace/didChangeConfiguration and also served for workspace/configuration."""
    settings = {"tritonify": {"lint": {"severity": {"TRI001": "error"}}}}
    c = raw(answers={"workspace/configuration": lambda p: [settings.get(i.get("section"), None) for i in p["items"]]})
    result = c.initialize(workspace, capabilities=NEOVIM_CAPABILITIES, options={"lint": {"run": "onType"}}, client_name="Neovim")
    assert result["result"]["capabilities"]["positionEncoding"] == "utf-16"
    c.notify("workspace/didChangeConfiguration", {"settings": settings})
    time.sleep(0.2)
    uri = (workspace / "kernel.py").as_uri()
    c.open(uri, KERNEL)
    diag = [d for d in c.diagnostics(uri) if d["code"] == "TRI001"][0]
    assert diag["severity"] == 1
    hover = c.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": diag["range"]["start"]})
    assert hover["result"]["contents"]["kind"] == "markdown"
    lens = c.request("textDocument/codeLens", {"textDocument": {"uri": uri}})["result"]
    assert [x["command"]["title"] for x in lens] == ["Benchmark", "Profile"]
    assert c.shutdown_and_exit() == 0


HELIX_CAPABILITIES = {   # Helix 24/25: prefers UTF-8 positions
    "general": {"positionEncodings": ["utf-8", "utf-32", "utf-16"]},
    "textDocument": {"codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": [
        "", "quickfix", "refactor", "refactor.extract", "refactor.inline", "refactor.rewrite", "source",
        "source.organizeImports"]}}, "isPreferredSupport": True, "dataSupport": True, "disabledSupport": True},
        "hover": {"contentFormat": ["markdown"]}, "publishDiagnostics": {"versionSupport": True, "dataSupport": True}},
    "workspace": {"configuration": True, "didChangeConfiguration": {"dynamicRegistration": False},
                  "workspaceFolders": True, "applyEdit": True, "workspaceEdit": {"documentChanges": True}},
    "window": {"workDoneProgress": True},
}


def test_helix_style_client_with_utf8_positions(raw, workspace):
    c = raw()
    result = c.initialize(workspace, capabilities=HELIX_CAPABILITIES, options={"lint": {"run": "onType"}}, client_name="helix")
    assert result["result"]["capabilities"]["positionEncoding"] == "utf-8"
    text = KERNEL.replace("x = 0.5 * x * (1 + libdevice.tanh(x))", "x = 0.5 * x * (1 + libdevice.tanh(x)) + 0 * len('é😋')".replace("+ 0 * len('é😋')", "")).replace(
        "        x = 0.5", "        s = 'é😋'; x = 0.5")
    uri = (workspace / "utf8.py").as_uri()
    c.open(uri, text)
    diag = [d for d in c.diagnostics(uri) if d["code"] == "TRI001"][0]
    line = text.splitlines()[TANH_LINE]
    call = line.index("libdevice")
    assert diag["range"]["start"] == {"line": TANH_LINE, "character": len(line[:call].encode("utf-8"))}
    # an incremental edit in UTF-8 units: replace the call as Helix would
    end = line.index("(x))") + 3
    rng = {"start": lsp_position(text, text.index(line) + call, "utf-8"), "end": lsp_position(text, text.index(line) + end, "utf-8")}
    c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                        "contentChanges": [{"range": rng, "text": "tl.sigmoid(x)"}]})
    diags = c.diagnostics(uri, version=2)
    assert "TRI001" not in [d["code"] for d in diags]
    actions = c.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": rng, "context": {"diagnostics": []}})
    assert "result" in actions
    assert c.shutdown_and_exit() == 0


def test_bad_messages_are_answered_and_the_server_carries_on(raw, workspace):
    c = raw()
    c.initialize(workspace)
    uri = (workspace / "kernel.py").as_uri()
    c.open(uri, KERNEL)
    c.diagnostics(uri)

    bad = c.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": "not-a-range", "context": {}})
    assert bad["error"]["code"] == -32602 and "range" in bad["error"]["message"]
    assert c.request("textDocument/hover", None)["error"]["code"] == -32602
    assert c.request("textDocument/hover", {"textDocument": {"uri": 5}, "position": {"line": -1}})["error"]["code"] == -32602
    assert c.request("tritonify/noSuchMethod", {})["error"]["code"] == -32601
    assert c.request("workspace/executeCommand", {"command": "no.such.command"})["error"]["code"] == -32602

    # unparseable bodies: a parse error (id null), then business as usual
    for body in (b"{not json", b"[1, 2, 3]", b'"just a string"', b"\xff\xfe{}", b'{"jsonrpc": "2.0", "id": 77}'):
        c.send_bytes(frame(body))
    assert c.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}})["id"]
    assert c.responses[None]["error"]["code"] == -32700          # JSON-RPC's answer to unreadable JSON

    # a request with the wrong jsonrpc version is refused, not dropped
    c.send({"jsonrpc": "1.0", "id": "v1", "method": "textDocument/hover",
            "params": {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}})
    assert c.wait_response("v1")["error"]["code"] == -32600

    # non-UTF-8 bytes inside a document: repaired, linted, answered
    body = json.dumps({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": (workspace / "bytes.py").as_uri(), "languageId": "python", "version": 1, "text": "x = 'BAD'\n"}}}).encode()
    c.send_bytes(frame(body.replace(b"BAD", b"\xff\xfe\x80")))
    assert c.diagnostics((workspace / "bytes.py").as_uri()) == []
    # NUL bytes: a TRI000 finding, not a crash
    c.open((workspace / "nul.py").as_uri(), "x = 1\x00\n")
    assert [d["code"] for d in c.diagnostics((workspace / "nul.py").as_uri())] == ["TRI000"]
    # edits and requests for documents that are not open
    c.change((workspace / "never-opened.py").as_uri(), "x", 3)
    c.notify("textDocument/didClose", {"textDocument": {"uri": "file:///never/opened.py"}})
    assert c.request("textDocument/codeLens", {"textDocument": {"uri": "file:///never/opened.py"}})["result"] == []

    c.request("shutdown")
    after = c.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}})
    assert after["error"]["code"] == -32600
    c.notify("exit")
    assert c.proc.wait(10) == 0


def test_five_megabyte_document(raw, workspace):
    """A 5 MB document is linted by a worker of its own within its time limit; meanwhile
    the server answers, and small documents get their diagnostics."""
    c = raw()
    c.initialize(workspace, options={"lint": {"timeoutSeconds": 4}})
    uri = (workspace / "big.py").as_uri()
    filler = "".join(f"table_{i} = [{i}, {i + 1}, {i + 2}]  # data row\n" for i in range(125_000))
    text = KERNEL + filler
    assert len(text) > 5_000_000
    started = time.monotonic()
    c.open(uri, text)
    small = (workspace / "kernel.py").as_uri()
    c.open(small, KERNEL)
    assert "TRI001" in [d["code"] for d in c.diagnostics(small)]
    hover = c.request("textDocument/hover", {"textDocument": {"uri": small}, "position": {"line": TANH_LINE, "character": 30}})
    assert hover["result"]["contents"]["value"].startswith("**TRI001 libdevice-tanh**")
    assert time.monotonic() - started < 4          # not held up by the big one
    diags = c.diagnostics(uri, timeout=60)
    # either the whole analysis (the TRI001 in the kernel at the top) or a clear "stopped" note
    assert "TRI001" in [d["code"] for d in diags] or "stopped analysing this file after 4 s" in diags[0]["message"]
    lens = c.request("textDocument/codeLens", {"textDocument": {"uri": uri}}, timeout=30)
    assert "result" in lens
    assert c.shutdown_and_exit() == 0


def test_cancel_request_stops_a_running_job(raw, workspace):
    c = raw()
    c.initialize(workspace, capabilities={"window": {"workDoneProgress": True}},
                 options={"interpreter": [sys.executable, str(FAKE_ENGINE)], "trusted": True})
    path = workspace / "kernel.py"
    msg_id = c.request_async("workspace/executeCommand", {"command": "tritonify.benchmark", "arguments": [path.as_uri(), "hang"]})
    pids = Path(str(path) + ".pids")
    deadline = time.monotonic() + 10
    while not pids.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    parent, child = map(int, pids.read_text().split())
    c.notify("$/cancelRequest", {"id": msg_id})
    assert c.wait_response(msg_id)["error"]["code"] == -32800          # RequestCancelled
    deadline = time.monotonic() + 5
    while (_alive(parent) or _alive(child)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(parent) and not _alive(child)
    assert c.shutdown_and_exit() == 0


def test_exit_without_shutdown_is_exit_code_1(raw, workspace):
    c = raw()
    c.initialize(workspace)
    c.notify("exit")
    assert c.proc.wait(10) == 1


def test_tritonify_server_subcommand_starts_the_same_server(raw, workspace):
    c = raw(command=[sys.executable, "-m", "tritonify", "server", "--stdio"])
    assert c.initialize(workspace)["result"]["serverInfo"]["name"] == "tritonify"
    assert c.shutdown_and_exit() == 0
