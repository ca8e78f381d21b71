"""Starts the CPU-interpreter kernel checks in the background once collection shows that this session
runs the test that waits for them (tests/templates/interpreter_run.py says how, and why)."""
from __future__ import annotations

import importlib.util

import pytest

from tests.templates.interpreter_run import TEST_NAME, InterpreterRun

_RUN = pytest.StashKey[InterpreterRun]()


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly or _RUN in session.config.stash:
        return
    if not all(importlib.util.find_spec(name) for name in ("torch", "triton")):
        return   # the test skips, saying which is missing
    if any(item.name == TEST_NAME for item in session.items):
        run = session.config.stash[_RUN] = InterpreterRun()
        # a plugin object, not this conftest: its hooks then see the items of every folder
        session.config.pluginmanager.register(_PausedDuringEditorTests(run), "interpreter-run-pause")


class _PausedDuringEditorTests:
    """Stops the background run while a test marked e2e runs (it measures a real editor's latency)."""

    def __init__(self, run: InterpreterRun) -> None:
        self.run = run

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        if item.get_closest_marker("e2e"):
            self.run.pause()

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> None:
        if item.get_closest_marker("e2e"):
            self.run.resume()


def pytest_sessionfinish(session: pytest.Session) -> None:
    run = session.config.stash.get(_RUN, None)
    if run is not None:
        run.stop()


@pytest.fixture
def interpreter_run(request: pytest.FixtureRequest) -> InterpreterRun:
    """The background run started at collection (or one started now, if it was not)."""
    stash = request.config.stash
    if _RUN not in stash:
        stash[_RUN] = InterpreterRun()
    return stash[_RUN]
