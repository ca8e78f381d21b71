"""Map a source path recorded in a report (often on another machine) onto a local file."""
from __future__ import annotations

from pathlib import Path


def map_source_path(path: str, roots: list[str | Path] | None = None) -> str:
    """The local file for a path recorded in a report (possibly on another machine): the path
    itself if it exists, else the file under `roots` sharing the longest trailing path."""
    if Path(path).is_file():
        return path
    parts = Path(path).parts
    for root in roots or [Path.cwd()]:
        root = Path(root)
        for k in range(len(parts) - 1, 0, -1):
            candidate = root.joinpath(*parts[-k:])
            if candidate.is_file():
                return str(candidate)
    return path


def read_local(path: str, roots: list[str | Path] | None = None) -> str | None:
    """The text of the local file a recorded path maps to, or None."""
    local = map_source_path(path, roots)
    try:
        return Path(local).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
