"""server/lint_worker.py: linting in a worker process with a time limit and restarts."""
from __future__ import annotations

import asyncio
import sys

from tritonify.diagnostics.settings import Settings
from tritonify.server.lint_worker import LintWorker

KERNEL_TEXT = ("import triton\nimport triton.language as tl\nfrom triton.language.extra import libdevice\n"
               "@triton.jit\ndef k(x_ptr):\n    x = tl.load(x_ptr + tl.arange(0, 16))\n"
               "    for _ in range(4):\n        x = libdevice.tanh(x)\n    tl.store(x_ptr + tl.arange(0, 16), x)\n")


def _run(coro):
    return asyncio.run(coro)


def test_lints_in_the_worker_and_reports_kernels():
    async def main():
        worker = LintWorker()
        try:
            result, kernels = await worker.lint(KERNEL_TEXT, "k.py", Settings(), 30)
            again, _ = await worker.lint("x = 1\n", "k.py", Settings(), 30)
        finally:
            await worker.aclose()
        return result, kernels, again, worker.restarts

    result, kernels, again, restarts = _run(main())
    assert [f.code for f in result.findings] == ["TRI001"]
    assert [(k.name, k.first_line, k.last_line) for k in kernels] == [("k", 4, 9)]
    assert again.findings == [] and restarts == 0


SLOW = [sys.executable, "-c", "import sys, time; sys.stdin.buffer.read(8); time.sleep(60)"]
DIES = [sys.executable, "-c", "import sys, os; sys.stdin.buffer.read(8); os._exit(3)"]


def test_a_lint_past_its_time_limit_is_stopped_and_reported():
    async def main():
        worker = LintWorker(SLOW)
        try:
            return await worker.lint("x = 1\n", "k.py", Settings(), 0.5)
        finally:
            await worker.aclose()

    result, kernels = _run(main())
    assert [f.code for f in result.findings] == ["TRI000"] and kernels == []
    assert "stopped analysing this file after 0.5 s" in result.findings[0].message


def test_a_dead_worker_is_reported_then_replaced():
    async def main():
        worker = LintWorker(DIES)
        first, _ = await worker.lint("x = 1\n", "k.py", Settings(), 5)
        worker.command = LintWorker().command      # the next start is a real worker
        second, _ = await worker.lint("x = 1\n", "k.py", Settings(), 30)
        await worker.aclose()
        return first, second, worker.restarts

    first, second, restarts = _run(main())
    assert "analysis process died" in first.findings[0].message
    assert second.findings == [] and restarts == 0   # killed after dying, so a fresh start


def test_cancelling_a_lint_kills_the_worker_so_the_next_answer_is_not_mixed_up():
    async def main():
        worker = LintWorker(SLOW)
        task = asyncio.ensure_future(worker.lint("x = 1\n", "k.py", Settings(), 30))
        await asyncio.sleep(0.3)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        worker.command = LintWorker().command
        result, _ = await worker.lint(KERNEL_TEXT, "k.py", Settings(), 30)
        await worker.aclose()
        return result

    assert [f.code for f in _run(main()).findings] == ["TRI001"]


def test_a_lint_no_longer_wanted_is_interrupted_and_the_worker_goes_on():
    """Cancelling a lint (its version superseded) interrupts it in the worker, which answers the
    next request at once with that request's own result: no restart, no answer read twice."""
    from tests.test_incremental import TEXT

    big = TEXT + "".join(TEXT[TEXT.index("@triton.jit"):].replace("gelu_", f"gelu{i}_").replace("launch_", f"launch{i}_")
                         for i in range(150))

    async def main():
        worker = LintWorker()
        try:
            await worker.lint("x = 1\n", "warm.py", Settings(), 60)   # started and imported
            slow = asyncio.ensure_future(worker.lint(big, "big.py", Settings(), 60))
            await asyncio.sleep(0.3)
            assert not slow.done()
            slow.cancel()
            slow.cancel()            # cancelled twice, as two quick keys do
            try:
                await slow
            except asyncio.CancelledError:
                pass
            result, kernels = await worker.lint(KERNEL_TEXT, "k.py", Settings(), 60)
        finally:
            await worker.aclose()
        return result, kernels, worker.restarts, worker.interrupts

    result, kernels, restarts, interrupts = _run(main())
    assert [f.code for f in result.findings] == ["TRI001"] and [k.name for k in kernels] == ["k"]
    assert restarts == 0 and interrupts == 1


def test_an_interrupt_where_the_lint_may_not_stop_stops_it_where_it_next_may():
    """A signal while the workspace index takes the new text is kept, not lost: the lint stops at
    its next interruptible part (it never runs to its end for a superseded version); between
    requests a signal is ignored, and the next request starts afresh."""
    import signal

    import pytest

    from tritonify.server import lint_worker as lw

    try:
        lw._state, lw._interrupt_pending = lw.BUSY, False
        lw._on_interrupt(signal.SIGUSR1, None)     # must not raise here
        assert lw._interrupt_pending
        ran = []
        with pytest.raises(lw.Interrupted):
            with lw._interruptible():
                ran.append(True)
        assert ran == []
        lw._state, lw._interrupt_pending = lw.INTERRUPTIBLE, False
        with pytest.raises(lw.Interrupted):
            lw._on_interrupt(signal.SIGUSR1, None)
        lw._state = lw.IDLE
        lw._on_interrupt(signal.SIGUSR1, None)
        assert not lw._interrupt_pending
    finally:
        lw._state, lw._interrupt_pending = lw.IDLE, False


def test_the_worker_reparses_only_the_statement_typed_into_and_finds_the_same():
    """Typing within a line: the worker's tree comes from the last one (diagnostics.reparse) and
    the findings are those of a fresh worker linting that text from scratch."""
    from tests.test_incremental import TEXT
    from tritonify.server import lint_worker as lw

    lines = TEXT.split("\n")
    at = next(i for i, line in enumerate(lines) if "tl.load(" in line)
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    lines.insert(at + 1, indent + "w = 0")
    first = "\n".join(lines)
    lines[at + 1] = indent + "w = libdevice.tanh(x)"
    second = "\n".join(lines)
    lw._TREES.pop("/tmp/reparse_k.py", None)
    lw.lint_with_kernels(first, "/tmp/reparse_k.py", Settings(), "incremental")
    old_tree = lw._TREES["/tmp/reparse_k.py"][1]
    result, kernels, _ = lw.lint_with_kernels(second, "/tmp/reparse_k.py", Settings(), "incremental")
    new_tree = lw._TREES["/tmp/reparse_k.py"][1]
    assert new_tree is not old_tree and new_tree.body[0] is old_tree.body[0]   # the import kept, not parsed again
    lw._state = lw.IDLE

    async def fresh():
        worker = LintWorker()
        try:
            return await worker.request(second, "/tmp/reparse_k.py", Settings(), 60, "full")
        finally:
            await worker.aclose()

    expected, expected_kernels, _ = _run(fresh())
    key = lambda fs: sorted((f.code, f.line, f.column, f.message) for f in fs)   # noqa: E731
    assert key(result.findings) == key(expected.findings) and "TRI001" in {f.code for f in result.findings}
    assert kernels == expected_kernels


def test_the_worker_keeps_the_trees_and_bases_of_its_most_recent_files_only():
    """It is not told when a document closes: what it keeps for reuse is bounded, the file typed
    into last kept."""
    from tritonify.server import lint_worker as lw

    recent = lw._Recent()
    for i in range(lw.RECENT_PATHS + 5):
        recent[f"f{i}.py"] = i
        recent["typed.py"] = i   # set again after every other file
    assert len(recent) == lw.RECENT_PATHS and "typed.py" in recent and "f0.py" not in recent
    assert isinstance(lw._TREES, lw._Recent) and isinstance(lw._PREVIOUS, lw._Recent)
