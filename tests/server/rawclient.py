"""A plain LSP client for tests: a subprocess, Content-Length framing and JSON, nothing else.

No pygls on this side, so the server is checked against the protocol as any editor speaks it
(Neovim's built-in client, Helix), not against pygls' own idea of it.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

SERVER_COMMAND = [sys.executable, "-m", "tritonify.server"]


def frame(payload: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(payload) + payload


class RawClient:
    def __init__(self, command=None, env=None, answers: dict[str, Callable[[Any], Any]] | None = None,
                 cwd: Path | str | None = None):
        self.proc = subprocess.Popen(command or SERVER_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env={**os.environ, **(env or {})}, cwd=cwd)
        self._next_id = 0
        self.responses: dict[Any, dict] = {}
        self.notifications: list[dict] = []
        self.server_requests: list[dict] = []
        self._cond = threading.Condition()
        self.answers = {"workspace/configuration": lambda p: [None for _ in p.get("items", [])],
                        "window/workDoneProgress/create": lambda p: None,
                        "workspace/codeLens/refresh": lambda p: None,
                        "client/registerCapability": lambda p: None, **(answers or {})}
        self.stderr_lines: list[str] = []
        self.bodies: list[bytes] = []   # every frame body the server sent, as sent
        self.trace = Path((env or {})["TRITONIFY_LATENCY_TRACE"]) if "TRITONIFY_LATENCY_TRACE" in (env or {}) else None
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    # ---- wire -------------------------------------------------------------------------------
    def send_bytes(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict) -> None:
        self.send_bytes(frame(json.dumps(message).encode("utf-8")))

    def _read(self) -> None:
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value.strip())
            body = out.read(length)
            self.bodies.append(body)
            message = json.loads(body)
            if "method" in message and "id" in message:
                self.server_requests.append(message)
                answer = self.answers.get(message["method"], lambda p: None)
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": answer(message.get("params") or {})})
            with self._cond:
                if "method" in message and "id" not in message:
                    self.notifications.append(message)
                elif "id" in message and "method" not in message:
                    self.responses[message["id"]] = message
                self._cond.notify_all()

    def _drain_stderr(self) -> None:
        for line in self.proc.stderr:
            self.stderr_lines.append(line.decode("utf-8", "replace"))

    # ---- messages ----------------------------------------------------------------------------
    def request_async(self, method: str, params: Any = None) -> int:
        self._next_id += 1
        msg = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self._next_id

    def wait_response(self, msg_id, timeout: float = 10.0) -> dict:
        deadline = time.monotonic() + timeout
        with self._cond:
            while msg_id not in self.responses:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no response to request {msg_id}; stderr: {''.join(self.stderr_lines[-20:])}")
                self._cond.wait(left)
            return self.responses.pop(msg_id)

    def request(self, method: str, params: Any = None, timeout: float = 10.0) -> dict:
        return self.wait_response(self.request_async(method, params), timeout)

    def notify(self, method: str, params: Any = None) -> None:
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def wait_notification(self, method: str, predicate=lambda p: True, timeout: float = 10.0, start: int = 0) -> dict:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for n in self.notifications[start:]:
                    if n.get("method") == method and predicate(n.get("params")):
                        return n["params"]
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no {method} notification; stderr: {''.join(self.stderr_lines[-20:])}")
                self._cond.wait(left)

    def mark_after(self, method: str, predicate=lambda p: True, timeout: float = 10.0, start: int = 0) -> int:
        """Index to wait for notifications that arrive after the first `method` notification
        from `start` on whose params satisfy `predicate` (waiting up to `timeout` for it)."""
        params = self.wait_notification(method, predicate, timeout, start)
        with self._cond:
            return next(i for i, n in enumerate(self.notifications) if i >= start and n.get("params") is params) + 1

    def events(self) -> list[dict]:
        """The server's and its workers' trace events so far (server.latency_trace; the client
        must have been made with TRITONIFY_LATENCY_TRACE in `env`)."""
        assert self.trace is not None, "made without TRITONIFY_LATENCY_TRACE"
        if not self.trace.exists():
            return []
        out = []
        for line in self.trace.read_text().splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:   # a line still being written
                pass
        return out

    def wait_event(self, predicate, timeout: float = 10.0) -> dict:
        """The first trace event that satisfies `predicate`, waiting up to `timeout` for it."""
        deadline = time.monotonic() + timeout
        while True:
            found = next((e for e in self.events() if predicate(e)), None)
            if found is not None:
                return found
            if time.monotonic() > deadline:
                raise TimeoutError("no such trace event")
            time.sleep(0.05)

    def mark(self) -> int:
        """Index to wait for notifications that arrive after now."""
        with self._cond:
            return len(self.notifications)

    # ---- session -------------------------------------------------------------------------------
    def initialize(self, root: Path | None = None, capabilities: dict | None = None, options: Any = None,
                   client_name: str = "raw-test-client") -> dict:
        params = {"processId": os.getpid(), "clientInfo": {"name": client_name},
                  "rootUri": root.as_uri() if root else None,
                  "capabilities": capabilities if capabilities is not None else {},
                  "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}] if root else None}
        if options is not None:
            params["initializationOptions"] = options
        result = self.request("initialize", params)
        self.notify("initialized", {})
        return result

    def open(self, uri: str, text: str, language: str = "python", version: int = 1) -> None:
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": language, "version": version, "text": text}})

    def change(self, uri: str, text: str, version: int) -> None:
        self.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]})

    def diagnostics(self, uri: str, version: int | None = None, timeout: float = 10.0, start: int = 0) -> list[dict]:
        params = self.wait_notification(
            "textDocument/publishDiagnostics",
            lambda p: p["uri"] == uri and (version is None or p.get("version") == version), timeout, start)
        return params["diagnostics"]

    def shutdown_and_exit(self, timeout: float = 10.0) -> int:
        response = self.request("shutdown")
        assert "error" not in response, response
        self.notify("exit")
        return self.proc.wait(timeout)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)


def lsp_position(text: str, offset: int, encoding: str = "utf-16") -> dict:
    """The LSP position of a code-point offset, as an editor computes it."""
    import re

    before = text[:offset]
    breaks = list(re.finditer(r"\r\n|\r|\n", before))
    line_start = breaks[-1].end() if breaks else 0
    if before.endswith("\r") and text[offset:offset + 1] == "\n":   # inside a \r\n: not a position
        line_start = offset - 1
    column_text = text[line_start:offset]
    if encoding == "utf-8":
        character = len(column_text.encode("utf-8", "surrogatepass"))
    elif encoding == "utf-32":
        character = len(column_text)
    else:
        character = len(column_text.encode("utf-16-le", "surrogatepass")) // 2
    return {"line": len(breaks), "character": character}
