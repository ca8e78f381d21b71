"""JSON-RPC edge cases answered as the specification says (issue 31), through a real server.

- an id of NaN, Infinity (also `1e400`, which JSON reads as infinity) or a fraction: Invalid Request
  (-32600) with `"id": null`; before the fix the id was echoed as `NaN` / `Infinity`, which is not JSON;
- a notification method sent with an id (`textDocument/didOpen` with `"id": 9`): answered Invalid
  Request and not applied; before, it was applied and never answered;
- `shutdown` (any request) before `initialize`: -32002 ServerNotInitialized, notifications
  dropped, and `initialize` still works afterwards; before, `shutdown` was accepted and the session
  wedged (every later request "server is shutting down").
"""
from __future__ import annotations

import json

import pytest

from tests.server.rawclient import RawClient, frame

HOVER = '"params":{"textDocument":{"uri":"file:///nowhere/x.py"},"position":{"line":0,"character":0}}'


def strict_json(body: bytes):
    def refuse(name):
        raise AssertionError(f"the server sent {name}, which is not JSON: {body[:200]!r}")

    return json.loads(body, parse_constant=refuse)


def wait_for(c: RawClient, key, timeout=10.0) -> dict:
    return c.wait_response(key, timeout)


@pytest.fixture
def client():
    c = RawClient()
    yield c
    c.kill()


@pytest.mark.parametrize("raw_id", ["NaN", "Infinity", "-Infinity", "1e400", "1.5"])
def test_an_id_that_is_not_a_string_or_an_integer_is_an_invalid_request(client, raw_id):
    client.initialize(None)
    client.send_bytes(frame(f'{{"jsonrpc":"2.0","id":{raw_id},"method":"textDocument/hover",{HOVER}}}'.encode()))
    answer = wait_for(client, None)
    assert answer["error"]["code"] == -32600 and "string or an integer" in answer["error"]["message"]
    for body in client.bodies:
        strict_json(body)
    assert "error" not in client.request("textDocument/hover", {"textDocument": {"uri": "file:///nowhere/x.py"},
                                                                "position": {"line": 0, "character": 0}})
    assert client.shutdown_and_exit() == 0


def test_a_notification_sent_with_an_id_is_answered_and_not_applied(client, tmp_path):
    client.initialize(tmp_path)
    uri = (tmp_path / "k.py").as_uri()
    opened = {"jsonrpc": "2.0", "id": 9, "method": "textDocument/didOpen",
              "params": {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "import triton\n"}}}
    client.send(opened)
    answer = wait_for(client, 9)
    assert answer["error"]["code"] == -32600 and "notification" in answer["error"]["message"]
    # not applied: the document is not open, so a request about it is answered without it
    lenses = client.request("textDocument/codeLens", {"textDocument": {"uri": uri}})
    assert lenses["result"] == []
    assert not any(n.get("method") == "textDocument/publishDiagnostics" and n["params"]["uri"] == uri
                   for n in client.notifications)
    assert client.shutdown_and_exit() == 0


def test_requests_before_initialize_are_refused_and_initialize_still_works(client, tmp_path):
    refused = client.request("shutdown")
    assert refused["error"]["code"] == -32002, refused
    client.send_bytes(frame(f'{{"jsonrpc":"2.0","id":"h","method":"textDocument/hover",{HOVER}}}'.encode()))
    assert wait_for(client, "h")["error"]["code"] == -32002
    client.notify("textDocument/didOpen", {"textDocument": {"uri": (tmp_path / "k.py").as_uri(), "languageId": "python",
                                                            "version": 1, "text": "x = 1\n"}})
    result = client.initialize(tmp_path)
    assert "capabilities" in result["result"], result
    hover = client.request("textDocument/hover", {"textDocument": {"uri": "file:///nowhere/x.py"},
                                                  "position": {"line": 0, "character": 0}})
    assert "error" not in hover, hover
    assert client.shutdown_and_exit() == 0
