"""A pytest plugin for the child runs of ``kernel_checks.py`` (``-p tests.templates.check_shards``):
with ``TRITONIFY_CHECK_SHARD=i/n`` the child keeps the i-th of every n collected checks (round robin
in collection order, so each parametrized group is spread over the shards) and ends its report with
the line ``check shard i/n: k of N checks``, from which the parent proves that the shards together ran
every check exactly once."""
from __future__ import annotations

import os

import pytest

SHARD_ENV = "TRITONIFY_CHECK_SHARD"
_KEY = pytest.StashKey[tuple[int, int, int, int]]()


def parse(spec: str) -> tuple[int, int]:
    index, count = (int(v) for v in spec.split("/"))
    if not 0 <= index < count:
        raise ValueError(f"{SHARD_ENV}={spec!r}: want i/n with 0 <= i < n")
    return index, count


@pytest.hookimpl(trylast=True)   # after -k, -m and any other selection
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    spec = os.environ.get(SHARD_ENV)
    if not spec:
        return
    index, count = parse(spec)
    kept = items[index::count]
    dropped = [item for position, item in enumerate(items) if position % count != index]
    config.stash[_KEY] = (index, count, len(kept), len(items))
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = kept


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    if _KEY in config.stash:
        index, count, kept, total = config.stash[_KEY]
        terminalreporter.write_line(f"check shard {index}/{count}: {kept} of {total} checks")
