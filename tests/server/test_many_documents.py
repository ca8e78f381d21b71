"""Many open documents cost linear work (counted, not timed): each document opened is linted
once, however many are open, where each new document that is not on disk used to make the
server lint every other open document again (100 documents opened one after the other: 5,050
lints, 5.4 s; 10,000 stopped the server reading its input). A document that imports a changed
module still lints anew (tests/server/test_workspace_updates.py)."""
from __future__ import annotations

import json

from tests.server.rawclient import RawClient

KERNEL = '''import triton
import triton.language as tl


@triton.jit
def k{i}(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, x * 2)
'''


def _lints_for(count: int, tmp_path) -> int:
    trace = tmp_path / f"trace{count}.jsonl"
    client = RawClient(env={"TRITONIFY_LATENCY_TRACE": str(trace), "TRITONIFY_INSPECT": "0"})
    try:
        client.initialize(None, {"workspace": {"configuration": True}})
        for i in range(count):   # one after the other, as a user opens them: each one's diagnostics first
            uri = f"file:///nowhere/pkg/doc{i}.py"
            mark = client.mark()
            client.open(uri, KERNEL.format(i=i))
            client.diagnostics(uri, version=1, start=mark, timeout=60)
        # what the last opens could still make the server do (a relint of importers) is counted too
        answer = client.request("textDocument/hover", {"textDocument": {"uri": "file:///nowhere/pkg/doc0.py"},
                                                       "position": {"line": 7, "character": 10}}, timeout=60)
        assert "error" not in answer
        assert client.shutdown_and_exit() == 0
    finally:
        client.kill()
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    return sum(1 for e in events if e["ev"] == "s.lint")


def test_work_for_four_times_the_documents_is_at_most_four_times(tmp_path):
    small, big = _lints_for(100, tmp_path), _lints_for(400, tmp_path)
    assert small >= 100   # each document was linted
    assert big <= 4 * small, (small, big)
