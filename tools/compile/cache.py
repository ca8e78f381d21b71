"""Results cached on disk by what determines them, so a keystroke does not recompile.

The key is a hash of: the text of the statements the worker runs (imports, definitions,
assignments, with their line numbers, since line info is part of the output), the kernel, the
compile request (types, constexprs, options, overrides), the target, the requested listings,
the interpreter and the worker's own code. Editing a benchmark at the bottom of the file,
or a comment outside the kernel, keeps the key.
"""
from __future__ import annotations

import ast
import hashlib
import json
import os
from pathlib import Path

from tritonify.tools.compile.runner import WORKER

_KEPT = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.Assign, ast.AnnAssign, ast.If, ast.Try)


def cache_dir() -> Path:
    """$TRITONIFY_CACHE_DIR/inspect, else $XDG_CACHE_HOME/tritonify/inspect, else ~/.cache/tritonify/inspect."""
    if os.environ.get("TRITONIFY_CACHE_DIR"):
        return Path(os.environ["TRITONIFY_CACHE_DIR"]) / "inspect"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tritonify" / "inspect"


def definitions_digest(tree: ast.Module, text: str) -> str:
    """Hash of the statements the worker executes (with their line numbers), not the whole file.
    Linear in the file's size: the lines are split once (`ast.get_source_segment` per statement
    splits the whole text each time, minutes for a 1 MB file)."""
    h = hashlib.sha256()
    lines = _ast_lines(text)
    for stmt in tree.body:
        if isinstance(stmt, _KEPT):
            h.update(f"{stmt.lineno}:{stmt.col_offset}:".encode())
            end = getattr(stmt, "end_lineno", None) or stmt.lineno
            h.update("".join(lines[stmt.lineno - 1:end]).encode("utf-8", "surrogatepass"))
            h.update(b"\0")
    return h.hexdigest()


def _ast_lines(text: str) -> list[str]:
    """The lines as `ast` numbers them (breaks at \\n, \\r\\n and \\r only), ends kept."""
    import re

    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)


def result_key(digest: str, request: dict, arch: int, python: str) -> str:
    worker = hashlib.sha256(WORKER.read_bytes() + WORKER.with_name("kernel_source.py").read_bytes()).hexdigest()[:16]
    payload = json.dumps({"src": digest, "req": request, "arch": arch, "python": python, "worker": worker},
                         sort_keys=True, default=repr)
    return hashlib.sha256(payload.encode()).hexdigest()


def load(key: str, folder: Path | None = None) -> dict | None:
    path = (folder or cache_dir()) / f"{key}.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def store(key: str, result: dict, folder: Path | None = None) -> None:
    folder = folder or cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f"{key}.json.tmp{os.getpid()}"
        tmp.write_text(json.dumps(result), encoding="utf-8")
        os.replace(tmp, folder / f"{key}.json")
    except OSError:
        pass  # a read-only cache costs a recompile, nothing else
