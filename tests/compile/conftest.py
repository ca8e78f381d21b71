"""Fixtures for the compile-time insight tests.

Real compiles (sm_90 unless stated) run once per module through module-scoped fixtures, in a
temporary Triton cache and a temporary tritonify cache, so the suite stays in seconds and leaves
the user's caches alone.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent / "fixtures" / "kernels.py"


def marked_line(marker: str, path: Path = FIXTURE) -> int:
    """1-based line of the fixture that carries `# MARKER`."""
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.rstrip().endswith(f"# {marker}"):
            return i
    raise AssertionError(f"no line marked {marker}")


@pytest.fixture(scope="session")
def compile_env(tmp_path_factory):
    """TRITON_CACHE_DIR and TRITONIFY_CACHE_DIR in temp folders for the whole session."""
    pytest.importorskip("triton")
    saved = {k: os.environ.get(k) for k in ("TRITON_CACHE_DIR", "TRITONIFY_CACHE_DIR", "TRITON_DEFAULT_FP_FUSION")}
    root = tmp_path_factory.mktemp("compile")
    os.environ["TRITON_CACHE_DIR"] = str(root / "triton")
    os.environ["TRITONIFY_CACHE_DIR"] = str(root / "tritonify")
    os.environ["TRITON_DEFAULT_FP_FUSION"] = "1"
    yield root
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(scope="session")
def inspect_fixture(compile_env):
    """inspect(kernel, **kw) on the fixture file, trusted, cached in the session's cache."""
    from tritonify.tools.compile.service import inspect_kernel

    text = FIXTURE.read_text(encoding="utf-8")

    def run(kernel, **kw):
        kw.setdefault("target", "sm_90")
        kw.setdefault("trusted", True)
        return inspect_kernel(text, str(FIXTURE), kernel, **kw)

    return run
