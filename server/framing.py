"""The LSP base protocol on stdin: frames read so that no byte sequence a client sends can stop
the server. Replaces pygls' stdio read loop (`pygls.io_.run_async`, checked against pygls 2.1.1);
pygls keeps everything after the body is read (structuring, dispatch, writing).

What pygls 2.1.1 does with a bad frame, and what this reader does instead:

| the client sends | pygls 2.1.1 | here |
| --- | --- | --- |
| `Content-Length: 1000000000000` | allocates it: MemoryError, the server exits | refused (over MAX_BODY_BYTES, 64 MB) without reading it; the server resynchronises on the next header |
| a negative or non-numeric length | never matches again: no answer, ever | logged and skipped; next header |
| LF-only header lines (`\\n`) | never matches: no answer, ever | accepted |
| a body longer than its length | the rest prefixes the next header: no answer, ever | the extra bytes are skipped; next header |
| a body shorter than its length | the next message is eaten | what follows the message's JSON is given back to the reader: nothing is lost |
| a header line of gigabytes without a newline | read whole into memory | at most MAX_HEADER_LINE bytes kept |
| a JSON-RPC batch (`[...]`), a message without `"jsonrpc"`, a bare value | no answer | `-32600` Invalid Request (with the id where one is given) |
| bytes that are not JSON | parse error logged, no answer | `-32700` Parse error, id null |

Every skip is logged (window/logMessage and the server's log), one line per skipped frame.
"""
from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from pygls.io_ import StdoutWriter

from tritonify.server.pygls_adapter import set_stop_event

log = logging.getLogger("tritonify.server.framing")

MAX_BODY_BYTES = 64 * 1024 * 1024     # a larger Content-Length is refused (LSP documents are far smaller)
MAX_HEADER_LINE = 8192                 # bytes of one header line kept (a longer one is garbage)
PYGLS_CHECKED = "2.1.1"
PARSE_ERROR = -32700
INVALID_REQUEST = -32600

_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*([^\r\n]*)", re.IGNORECASE)
_HEADER = re.compile(rb"^[A-Za-z0-9][A-Za-z0-9-]*[ \t]*:")
# A header inside a body: raw CR/LF cannot occur inside a JSON string, so this is the next frame.
_LENGTH_IN_BODY = re.compile(rb"content-length[ \t]*:[ \t]*\d+[ \t]*\r?\n", re.IGNORECASE)


class FrameReader:
    """Blocking reads of frame bodies from a binary stream (run it in a thread)."""

    def __init__(self, stream, report: Callable[[str], None] | None = None):
        self._stream = stream
        self._buf = bytearray()
        self._eof = False
        self._report = report or (lambda message: log.warning("%s", message))

    # ---- bytes --------------------------------------------------------------------------------
    def _fill(self) -> bool:
        if self._eof:
            return False
        read = getattr(self._stream, "read1", None)
        try:
            chunk = read(65536) if read is not None else self._stream.read(1)
        except (OSError, ValueError):
            chunk = b""
        if not chunk:
            self._eof = True
            return False
        self._buf += chunk
        return True

    def _readline(self) -> tuple[bytes, bool]:
        """(line with its ending, overlong); b"" at the end of the stream. Of a line longer than
        MAX_HEADER_LINE only its last MAX_HEADER_LINE bytes are kept (a header may end it)."""
        overlong = False
        start = 0
        while True:
            nl = self._buf.find(b"\n", start)
            if nl >= 0:
                line = bytes(self._buf[:nl + 1])
                del self._buf[:nl + 1]
                return line, overlong
            if len(self._buf) > MAX_HEADER_LINE:
                del self._buf[:len(self._buf) - MAX_HEADER_LINE]
                overlong = True
            start = len(self._buf)
            if not self._fill():
                line = bytes(self._buf)
                self._buf.clear()
                return line, overlong

    def _read_exactly(self, n: int) -> bytes | None:
        while len(self._buf) < n:
            if not self._fill():
                return None
        body = bytes(self._buf[:n])
        del self._buf[:n]
        return body

    def push_back(self, data: bytes) -> None:
        self._buf[:0] = data

    # ---- frames -------------------------------------------------------------------------------
    def next_body(self) -> bytes | None:
        """The next frame's body, or None at the end of the stream. Bad frames are reported and
        skipped; reading goes on from the next Content-Length header."""
        length: int | None = None
        garbage = 0
        while True:
            line, overlong = self._readline()
            if not line:
                if garbage:
                    self._report(f"skipped {garbage} bytes that were not a frame header (end of stream)")
                return None
            if not line.strip(b"\r\n\t "):
                if length is None:
                    continue                 # blank lines between frames, or after a refused header
                if garbage:
                    self._report(f"skipped {garbage} bytes that were not a frame header")
                body = self._read_exactly(length)
                if body is None:
                    self._report(f"the stream ended inside a body of {length} bytes")
                    return None
                return self._cut_at_next_header(body)
            matches = list(_LENGTH.finditer(line))
            if matches:
                match = matches[-1]
                before = line[:match.start()]
                if before.strip(b"\r\n\t "):
                    garbage += len(before)
                length = self._length(match.group(1).strip())
                continue
            if _HEADER.match(line) and not overlong:
                continue                      # Content-Type or any other header: ignored
            garbage += len(line)
            length = None                     # garbage in a header block: wait for the next header

    def _length(self, value: bytes) -> int | None:
        text = value.decode("ascii", "replace")[:40]
        if not value.isdigit():
            self._report(f"skipped a frame: Content-Length {text!r} is not a non-negative integer")
            return None
        if len(value) > 12 or int(value) > MAX_BODY_BYTES:
            self._report(f"refused a frame of Content-Length {text}: over the limit of "
                         f"{MAX_BODY_BYTES // (1024 * 1024)} MB; its bytes are skipped up to the next header")
            return None
        return int(value)

    def _cut_at_next_header(self, body: bytes) -> bytes:
        """A body that holds a frame header was shorter than its Content-Length said: give the
        bytes from that header back, so the next message is read whole."""
        match = _LENGTH_IN_BODY.search(body)
        if match is None:
            return body
        self.push_back(body[match.start():])
        self._report(f"a body was shorter than its Content-Length ({match.start()} of {len(body)} bytes); "
                     "reading on from the next header")
        return body[:match.start()]


# ---- messages ------------------------------------------------------------------------------------
def _valid_id(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def dispatch(server, body: bytes, reader: FrameReader | None = None) -> None:
    """Decode one body and hand it to pygls; answer what JSON-RPC says must be answered. Bytes
    after the first JSON value (a Content-Length larger than the message) go back to `reader`:
    they are the start of the next frame. (Called between two reads, never during one.)"""
    protocol = server.protocol
    text = body.decode("utf-8", errors="replace").lstrip()   # bad bytes become U+FFFD: still answered
    try:
        message, end = json.JSONDecoder(object_hook=protocol.structure_message).raw_decode(text)
        rest = text[end:]
        if rest.strip():
            if reader is None:
                raise ValueError(f"Extra data after the message at char {end}")
            reader.push_back(rest.encode("utf-8"))
            server.log_problem(f"a body was longer than its message ({len(rest)} more bytes); "
                               "reading them as the next frame")
    except (ValueError, RecursionError) as exc:
        _error(server, None, PARSE_ERROR, f"parse error: {str(exc)[:200]}")
        return
    except Exception as exc:   # a message pygls could not structure (its own error, no id to answer)
        server.log_problem(f"could not read a message: {type(exc).__name__}: {exc}")
        return
    if isinstance(message, list):
        ids = [i for i in (m.get("id") if isinstance(m, dict) else getattr(m, "id", None) for m in message)
               if _valid_id(i)]   # an element with "jsonrpc" was structured by pygls, the others are dicts
        reason = "JSON-RPC batches are not supported (LSP sends one message per frame)"
        for msg_id in ids or [None]:
            _error(server, msg_id, INVALID_REQUEST, reason)
        return
    if isinstance(message, dict) or not hasattr(message, "jsonrpc"):
        # pygls structures only objects that carry "jsonrpc"; anything left is not a JSON-RPC message
        msg_id = message.get("id") if isinstance(message, dict) and _valid_id(message.get("id")) else None
        if isinstance(message, dict) and "jsonrpc" not in message:
            reason = 'invalid request: "jsonrpc": "2.0" is missing'
        else:
            reason = "invalid request: a JSON-RPC message is an object with \"jsonrpc\": \"2.0\""
        _error(server, msg_id, INVALID_REQUEST, reason)
        return
    try:
        protocol.handle_message(message)
    except Exception as exc:   # noqa: BLE001 - one message never ends the loop
        server.log_problem(f"handling a message failed: {type(exc).__name__}: {exc}")


def _error(server, msg_id, code: int, message: str) -> None:
    server.log_problem(f"answered id {msg_id!r} with error {code}: {message}")
    try:
        server.protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})
    except Exception:   # noqa: S110 - the client is gone; the read loop ends at EOF
        pass


async def read_loop(server, stdin, stop_event: threading.Event) -> None:
    reader = FrameReader(stdin, server.log_problem)
    loop = asyncio.get_running_loop()
    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tritonify-stdin")
    try:
        while not stop_event.is_set():
            body = await loop.run_in_executor(executor, reader.next_body)
            if body is None:
                break
            dispatch(server, body, reader)
    finally:
        executor.shutdown(wait=False)


def serve_stdio(server, stdin, stdout) -> None:
    """pygls' `start_io` with this reader: serve until EOF or `exit`."""
    stop_event = threading.Event()
    set_stop_event(server, stop_event)
    server.protocol.set_writer(StdoutWriter(stdout))
    try:
        asyncio.run(read_loop(server, stdin, stop_event))
    except BrokenPipeError:
        log.error("the connection to the client is lost; shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()
