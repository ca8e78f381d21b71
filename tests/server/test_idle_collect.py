"""The server's cyclic collector runs its full passes only once the documents are idle
(app.collect_when_idle), never in the middle of typing, and freezes what survives."""
from __future__ import annotations

import asyncio
import gc
import time

from tritonify.server import app
from tritonify.server.app import create_server


def test_a_full_pass_waits_until_no_document_changed_for_a_while_then_freezes():
    server = create_server()

    async def main():
        server.last_change["file:///k.py"] = time.monotonic()
        server.collect_when_idle()
        await asyncio.sleep(app.IDLE_COLLECT_S * 0.5)
        server.last_change["file:///k.py"] = time.monotonic()   # a key: the pass waits again
        await asyncio.sleep(app.IDLE_COLLECT_S * 0.8)
        during = server.idle_collections
        await asyncio.sleep(app.IDLE_COLLECT_S * 1.5)
        return during, server.idle_collections, gc.get_freeze_count()

    try:
        during, after, frozen = asyncio.run(main())
    finally:
        gc.unfreeze()
    assert during == 0 and after == 1 and frozen > 0
