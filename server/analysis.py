"""One linted version of one document, shared by diagnostics, code actions, hovers and lenses.

The diagnostics feature fills the cache after each lint; a request about a newer version than
the cache holds lints that version on the spot (in the lint worker: a few milliseconds for
ordinary files) so that every feature answers about the text the client sees.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import cached_property

from tritonify.diagnostics.engine import FileResult
from tritonify.diagnostics.settings import Settings
from tritonify.diagnostics.source import SourceFile
from tritonify.server.lint_worker import KernelSpan, LintWorker
from tritonify.server.positions import LineIndex


MAX_PARSE_HERE_CHARS = 1_000_000


@dataclass
class Analysis:
    uri: str
    version: int | None
    text: str
    path: str
    index: LineIndex
    settings: Settings
    result: FileResult
    kernels: list[KernelSpan]

    @property
    def findings(self):
        return self.result.findings

    @cached_property
    def source(self) -> SourceFile:
        """The parsed Python source (for kernels and hovers); empty tree for CUDA files."""
        if not self.path.endswith((".py", ".pyi")):
            return SourceFile(text=self.text, path=self.path)
        return SourceFile.from_text(self.text, self.path)

    @property
    def parsed_here(self) -> bool:
        """Whether this process may parse the text for a hover (large files are parsed
        only in the lint worker, to keep the server responsive)."""
        return len(self.text) <= MAX_PARSE_HERE_CHARS


async def analyse(worker: LintWorker, uri: str, version: int | None, text: str, path: str, settings: Settings,
                  encoding, timeout_s: float) -> Analysis:
    """Lint `text` in the worker process (never imports or runs it) and wrap the result."""
    result, kernels = await worker.lint(text, path, settings, timeout_s)
    return Analysis(uri, version, text, path, LineIndex(text, encoding), settings, result, kernels)


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
