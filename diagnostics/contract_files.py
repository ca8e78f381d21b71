"""Where a kernel file's benchmark contract lives (a naming convention, read without importing).

A contract (`tritonify.kernels.bench.Contract`) for `k.py` is written in `k.py` itself, in
`k_contract.py` or in `bench_k.py` beside it. The benchmark harness, the code lens and the
compile inspector's dtype guess all look there; the convention lives here, in the analysis layer,
because the analysis may not import the harness (tests/test_import_graph.py).
"""
from __future__ import annotations

from pathlib import Path


def contract_path(kernel_file: Path) -> Path:
    """Where a kernel file's own contract file goes: ``<stem>_contract.py`` beside it."""
    kernel_file = Path(kernel_file)
    return kernel_file.with_name(f"{kernel_file.stem}_contract.py")


def candidate_files(path: Path) -> list[Path]:
    """Files that may hold contracts for the kernel file ``path``, existing ones only, in search order."""
    path = Path(path)
    stem = path.stem
    for suffix in ("_contract",):
        if stem.endswith(suffix):
            return [path]
    if stem.startswith("bench_"):
        return [path]
    files = [path, contract_path(path), path.with_name(f"bench_{stem}.py")]
    return [f for f in files if f.is_file()]
