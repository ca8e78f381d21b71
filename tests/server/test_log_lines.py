"""Each log line once: what the client gets as window/logMessage is not repeated on stderr (an
editor shows both in one channel), nor pygls' warning for a late $/cancelRequest."""
from __future__ import annotations

import time

from tests.server.rawclient import RawClient


def test_stderr_repeats_neither_logged_messages_nor_late_cancel_warnings(tmp_path):
    c = RawClient()
    try:
        c.initialize(tmp_path, options={"lint": {"run": 5}})   # not onType/onSave: a warning is logged
        logged = c.wait_notification("window/logMessage", lambda p: "setting ignored" in p["message"], 10)
        assert logged["type"] == 2    # a warning, with its level
        c.notify("$/cancelRequest", {"id": 4242})
        assert "result" in c.request("shutdown")
        c.notify("exit")
        c.proc.wait(10)
        time.sleep(0.2)
        stderr = "\n".join(c.stderr_lines)
        assert "setting ignored" not in stderr
        assert "Cancel notification for unknown message id" not in stderr
    finally:
        c.kill()
