"""Every use of pygls internals, in one place (checked on pygls `PYGLS_CHECKED`).

pygls 2.1 has no public way to answer a request with an error from inside message parsing, to
find the future of a request the server sent, to know that `shutdown` was received, to record
the client's info, or to stop its read loop from outside. Tritonify needs each of these; they go
through here so that a pygls upgrade has one module to check (tests/server/test_pygls_adapter.py
fails when the installed pygls is not the one checked).
"""
from __future__ import annotations

from typing import Any

PYGLS_CHECKED = "2.1.1"


def send_error(protocol, msg_id, error) -> None:
    """Answer request `msg_id` with the ResponseError `error` (pygls: `_send_response`). With no
    usable id (None) the answer carries `"id": null`, as JSON-RPC says (lsprotocol would leave it out)."""
    if msg_id is None:
        protocol._send_data({"jsonrpc": "2.0", "id": None, "error": {"code": error.code, "message": error.message}})
        return
    protocol._send_response(msg_id, error=error)


def take_request_future(protocol, msg_id) -> Any:
    """The future of the server's own request `msg_id`, removed from pygls' table; None if unknown."""
    futures = protocol._request_futures
    return futures.pop(msg_id) if msg_id in futures else None


def current_request_future(protocol) -> Any:
    """The future of the request being handled now (for `$/cancelRequest`), or None."""
    msg_id = protocol.msg_id
    return protocol._request_futures.get(msg_id) if msg_id else None


def shutdown_received(protocol) -> bool:
    return bool(protocol._shutdown)


def set_client_info(protocol, client_info) -> None:
    protocol._client_info = client_info


def set_stop_event(server, event) -> None:
    """The event pygls' server waits on to stop serving."""
    server._stop_event = event
