"""One linted version of one document, shared by diagnostics, code actions, hovers and lenses.

The diagnostics feature fills the cache after each lint; a request about a newer version than
the cache holds lints that version on the spot (a few milliseconds for ordinary files) so that
every feature answers about the text the client sees.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import cached_property

from tritonify.diagnostics.engine import FileResult, lint_text
from tritonify.diagnostics.settings import Settings
from tritonify.diagnostics.source import SourceFile
from tritonify.diagnostics.triton_ast import ImportMap, Kernel, find_kernels
from tritonify.server.positions import LineIndex


@dataclass
class Analysis:
    uri: str
    version: int | None
    text: str
    path: str
    index: LineIndex
    settings: Settings
    result: FileResult

    @property
    def findings(self):
        return self.result.findings

    @cached_property
    def source(self) -> SourceFile:
        """The parsed Python source (for kernels and hovers); empty tree for CUDA files."""
        if not self.path.endswith((".py", ".pyi")):
            return SourceFile(text=self.text, path=self.path)
        return SourceFile.from_text(self.text, self.path)

    @cached_property
    def kernels(self) -> list[Kernel]:
        tree = self.source.tree
        if tree is None:
            return []
        try:
            return find_kernels(tree, ImportMap(tree))
        except RecursionError:
            return []


def analyse(uri: str, version: int | None, text: str, path: str, settings: Settings, encoding) -> Analysis:
    """Lint `text` (never imports or runs it) and wrap the result."""
    result = lint_text(text, path, settings)
    return Analysis(uri, version, text, path, LineIndex(text, encoding), settings, result)


class AnalysisCache:
    def __init__(self):
        self._by_uri: dict[str, Analysis] = {}
        self._lock = threading.Lock()

    def get(self, uri: str, version: int | None, text: str) -> Analysis | None:
        with self._lock:
            hit = self._by_uri.get(uri)
        if hit is not None and hit.version == version and (hit.text is text or hit.text == text):
            return hit
        return None

    def put(self, analysis: Analysis) -> None:
        with self._lock:
            self._by_uri[analysis.uri] = analysis

    def drop(self, uri: str) -> None:
        with self._lock:
            self._by_uri.pop(uri, None)
