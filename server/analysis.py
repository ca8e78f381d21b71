"""One linted version of one document, shared by diagnostics, code actions, hovers and lenses.

The diagnostics feature fills the cache after each lint; a request about a newer version than
the cache holds lints that version on the spot (in the lint worker: a few milliseconds for
ordinary files) so that every feature answers about the text the client sees.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Callable

from tritonify.diagnostics.engine import SYNTAX, FileResult
from tritonify.diagnostics.reparse import reparse
from tritonify.diagnostics.settings import Settings
from tritonify.diagnostics.source import SourceFile
from tritonify.server import latency_trace as trace
from tritonify.server.lint_worker import KernelSpan, LintWorker, Revision
from tritonify.server.positions import LineIndex


MAX_PARSE_HERE_CHARS = 1_000_000
BOM = "\ufeff"   # a UTF-8 byte-order mark some editors leave at the start of the text


def without_bom(text: str) -> str:
    """The text the engine sees: without a leading byte-order mark, as the command line reads a
    file (source.decode_source). It is not a line break, so only columns of line 1 move."""
    return text[1:] if text.startswith(BOM) else text


def _shift_line_one(result: FileResult) -> FileResult:
    """Findings and fix edits of the text without its BOM, placed back on the editor's text."""
    def edit(e):
        return replace(e, start_column=e.start_column + (e.start_line == 1),
                       end_column=e.end_column + (e.end_line == 1))

    for f in result.findings:
        f.column += f.line == 1
        f.end_column += f.end_line == 1
        f.fixes = [replace(fix, edits=tuple(edit(e) for e in fix.edits)) for fix in f.fixes]
    return result


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
    exact: bool = True      # False: some findings carried over from an earlier version (incremental)

    @property
    def findings(self):
        return self.result.findings

    @property
    def syntax_error(self) -> bool:
        """Whether the text does not parse (a statement half typed): its TRI000 is among the
        findings, beside those of the rest of the file (lint_worker._tolerant)."""
        return any(f.code == SYNTAX.code for f in self.result.findings)

    @cached_property
    def source(self) -> SourceFile:
        """The parsed Python source (for kernels and hovers); empty tree for CUDA files. Parsed
        from the last version of the document parsed here when the edit allows (diagnostics.reparse)."""
        if not self.path.endswith((".py", ".pyi")):
            return SourceFile(text=self.text, path=self.path)
        text = without_bom(self.text)
        old = _LAST_PARSE.get(self.uri)
        tree = reparse(old[0], old[1], text, self.path) if old is not None else None
        source = SourceFile(text=text, path=self.path, tree=tree) if tree is not None else SourceFile.from_text(text, self.path)
        if source.tree is not None:
            _LAST_PARSE[self.uri] = (text, source.tree)
        return source

    @property
    def parsed_here(self) -> bool:
        """Whether this process may parse the text for a hover (large files are parsed
        only in the lint worker, to keep the server responsive)."""
        return len(self.text) <= MAX_PARSE_HERE_CHARS


# uri -> (text, tree) of the last version of an open document parsed in the server (Analysis.source)
_LAST_PARSE: dict[str, tuple[str, object]] = {}


async def analyse(worker: LintWorker, uri: str, version: int | None, text: str, path: str, settings: Settings,
                  encoding, timeout_s: float, mode: str = "full",
                  on_first: Callable[[Analysis], None] | None = None, revision: Revision | None = None) -> Analysis:
    """Lint `text` in the worker process (never imports or runs it) and wrap the result.
    `mode` "incremental" re-lints only the kernels changed since that worker's last lint;
    `on_first` then gets its first answer, when the worker sends one (lint_worker: the
    statement-scope findings of what was just typed, the others carried over). `revision`: which
    version of which open document `text` is (the worker then gets the edits since the version it
    holds, not the text)."""
    linted = without_bom(text)
    trace.event("s.lint", version=version, mode=mode, worker=id(worker))
    index = LineIndex(text, encoding)

    def first(answer) -> None:
        result, kernels, _ = answer
        trace.event("s.lint.first", version=version)
        on_first(Analysis(uri, version, text, path, index, settings,
                          _shift_line_one(result) if linted is not text else result, kernels, exact=False))

    try:
        result, kernels, exact = await worker.request(linted, path, settings, timeout_s, mode,
                                                      on_first=first if on_first is not None else None,
                                                      revision=revision if linted is text else None)
    except BaseException as exc:
        trace.event("s.lint.stopped", version=version, why=type(exc).__name__)
        raise
    trace.event("s.lint.done", version=version, exact=exact)
    if linted is not text:
        result = _shift_line_one(result)
    return Analysis(uri, version, text, path, index, settings, result, kernels, exact)


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

    def latest(self, uri: str) -> Analysis | None:
        """The last analysis kept for `uri`, whatever its version (None when none)."""
        with self._lock:
            return self._by_uri.get(uri)

    def has(self, uri: str) -> bool:
        """Whether some version of `uri` was analysed (and not dropped since)."""
        with self._lock:
            return uri in self._by_uri

    def put(self, analysis: Analysis) -> None:
        with self._lock:
            self._by_uri[analysis.uri] = analysis

    def drop(self, uri: str) -> None:
        with self._lock:
            self._by_uri.pop(uri, None)
        _LAST_PARSE.pop(uri, None)
