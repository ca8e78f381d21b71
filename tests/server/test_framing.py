"""No frame a client sends stops the server (server/framing.py).

For each malformed frame: send it, then a normal request, which must be answered; then
shutdown and exit with code 0. With pygls 2.1.1's reader a huge Content-Length killed the server
(MemoryError) and every other case below left it alive but never answering again.
"""
from __future__ import annotations

import json

import pytest

from tests.server.rawclient import RawClient, frame

HOVER = {"textDocument": {"uri": "file:///nowhere/k.py"}, "position": {"line": 0, "character": 0}}


def request(msg_id, method="textDocument/hover", params=HOVER) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}).encode()


BODY = request("inner")
CASES = {
    "length-of-a-terabyte": b"Content-Length: 1000000000000\r\n\r\n" + BODY,
    "length-over-64-MB": b"Content-Length: %d\r\n\r\n" % (64 * 1024 * 1024 + 1) + BODY,
    "negative-length": b"Content-Length: -5\r\n\r\n" + BODY,
    "non-numeric-length": b"Content-Length: twelve\r\n\r\n" + BODY,
    "empty-length": b"Content-Length:\r\n\r\n" + BODY,
    "body-one-byte-longer": b"Content-Length: %d\r\n\r\n" % len(BODY) + BODY + b"}",
    "body-ten-bytes-shorter": b"Content-Length: %d\r\n\r\n" % (len(BODY) + 10) + BODY,
    "garbage-line-of-a-megabyte": b"x" * 1_000_000,
    "garbage-lines": b"hello\r\nnot a header at all\r\n\r\n\r\n",
    "header-without-body-then-eof-of-frame": b"Content-Type: application/json\r\n\r\n",
    "nul-bytes": b"\0" * 100 + b"\r\n",
}
ANSWERS_ITSELF = {
    # malformed, yet a request: it is answered too
    "lf-only-headers": (b"Content-Length: %d\n\n" % len(BODY) + BODY, "inner", "result"),
    "lowercase-header-and-content-type": (b"content-length:%d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n"
                                          % len(BODY) + BODY, "inner", "result"),
    "batch": (frame(json.dumps([json.loads(request("b1")), json.loads(request("b2"))]).encode()), "b1", -32600),
    "empty-batch": (frame(b"[]"), None, -32600),
    "request-without-jsonrpc": (frame(json.dumps({"id": "nj", "method": "textDocument/hover", "params": HOVER}).encode()),
                                "nj", -32600),
    "bare-string": (frame(b'"hello"'), None, -32600),
    "not-json": (frame(b"{not json"), None, -32700),
    "deeply-nested-json": (frame(b"[" * 100_000 + b"]" * 100_000), None, None),
}


@pytest.fixture
def client(workspace):
    c = RawClient()
    c.initialize(workspace)
    yield c
    c.kill()


def _still_answers(c: RawClient) -> None:
    c.send_bytes(frame(request("after")))
    answer = c.wait_response("after", timeout=15)
    assert answer.get("result", "missing") is None or "result" in answer, answer
    assert c.proc.poll() is None
    assert c.shutdown_and_exit() == 0


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_frame_is_skipped_and_the_next_request_answered(client, case):
    client.send_bytes(CASES[case])
    _still_answers(client)


@pytest.mark.parametrize("case", list(ANSWERS_ITSELF))
def test_a_bad_message_gets_its_json_rpc_answer(client, case):
    data, msg_id, expected = ANSWERS_ITSELF[case]
    client.send_bytes(data)
    if expected == "result":
        assert "result" in client.wait_response(msg_id, timeout=15)
    elif expected is not None:
        assert client.wait_response(msg_id, timeout=15)["error"]["code"] == expected
    _still_answers(client)
    if case == "batch":
        assert client.responses.get("b2", {}).get("error", {}).get("code") == -32600


def test_many_bad_frames_in_a_row_then_a_good_one(client):
    client.send_bytes(b"".join(CASES.values()))
    _still_answers(client)


def test_a_refused_length_is_never_allocated(client):
    """The terabyte frame does not grow the server: its memory after stays near its memory before."""
    def rss_kb() -> int:
        with open(f"/proc/{client.proc.pid}/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))

    before = rss_kb()
    client.send_bytes(CASES["length-of-a-terabyte"])
    client.send_bytes(frame(request("after-big")))
    assert "id" in client.wait_response("after-big", timeout=15)
    assert rss_kb() - before < 50_000
    assert client.shutdown_and_exit() == 0


def test_a_fifty_megabyte_document_is_linted_without_gigabytes(workspace):
    """Opened with insight on and trust stated: a note instead of findings (over max-file-bytes),
    nothing compiled (over 1 MB), and the server's peak memory in the hundreds of MB (it was 6.6 GB
    when such a document went to the compile worker)."""
    from tests.server.conftest import KERNEL

    c = RawClient()
    try:
        c.initialize(workspace, options={"trusted": True, "inspect": {"enabled": True, "target": "sm_90"}})
        text = KERNEL + "".join(f"table_{i} = [{i}, {i + 1}, {i + 2}]  # data row\n" for i in range(1_000_000))
        assert len(text) > 50_000_000
        uri = (workspace / "big.py").as_uri()
        c.open(uri, text)
        del text
        diags = c.diagnostics(uri, timeout=120)
        assert len(diags) == 1 and "lint limit" in diags[0]["message"]
        assert "id" in c.request("textDocument/codeLens", {"textDocument": {"uri": uri}}, timeout=60)
        with open(f"/proc/{c.proc.pid}/status") as f:
            peak_mb = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) // 1024
        assert peak_mb < 1024, peak_mb
        assert c.shutdown_and_exit(timeout=30) == 0
    finally:
        c.kill()
