"""scripts/fast_lane.py maps every package folder to tests: a new layer (as tools/ was) cannot be
left out of the fast lane, and a change to a tool runs the tests of that tool."""
from __future__ import annotations

import importlib.util
from pathlib import Path

from tests.test_import_graph import FOLDERS

ROOT = Path(__file__).resolve().parents[1]


def _lane():
    spec = importlib.util.spec_from_file_location("fast_lane", ROOT / "scripts" / "fast_lane.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_package_folder_has_tests_in_the_fast_lane():
    lane = _lane()
    prefixes = [prefix for prefix, _ in lane.MAP]
    unmapped = [folder for folder in FOLDERS if folder != "tritonify"
                and not any(p == f"{folder}/" or p.startswith(f"{folder}/") for p in prefixes)]
    assert not unmapped, f"folders of setup.py's FOLDERS with no entry in fast_lane.MAP: {unmapped}"
    for prefix, tests in lane.MAP:
        missing = [t for t in tests if not (ROOT / t).exists()]
        assert not missing, f"{prefix} maps to tests that do not exist: {missing}"


def test_a_change_runs_the_tests_of_what_changed():
    lane = _lane()
    tests, typescript = lane.tests_for(["tools/ncu/profile_run.py", "tools/compile/runner.py"])
    assert "tests/ncu" in tests and "tests/compile" in tests and not typescript
    tests, _ = lane.tests_for(["infra/child_process.py"])
    assert "tests/server/test_child_process.py" in tests and "tests/server" not in tests
    assert all(t in tests for t in lane.ALWAYS)
