"""Shared helpers for the ncu tests: the H200 fixtures captured by gpu/ncu/capture.py."""
from __future__ import annotations

import gzip
import json
from functools import lru_cache
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures" / "h200"


def text(name: str) -> str:
    path = FIXTURES / name
    if not path.exists():
        path = FIXTURES / (name + ".gz")
    data = path.read_bytes()
    return (gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode("utf-8")


@lru_cache(maxsize=1)
def manifest() -> list[dict]:
    return json.loads((FIXTURES / "manifest.json").read_text())


def case(kernel: str) -> dict:
    return next(m for m in manifest() if m["kernel"] == kernel)


def source_csv(kernel: str) -> str:
    return text(f"source/{kernel}.csv")


@lru_cache(maxsize=1)
def all_diagnoses():
    from tritonify.diagnostics.ncu.diagnose import diagnose_pages

    sources = [source_csv(m["kernel"]) for m in manifest()]
    return diagnose_pages(text("raw_base.csv"), text("details.csv"), sources, roots=[str(FIXTURES)])


def diagnosis(kernel: str):
    return next(d for d in all_diagnoses() if d.launch.kernel == kernel)
