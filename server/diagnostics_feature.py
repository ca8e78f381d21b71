"""Live diagnostics: lint on open, while typing (debounced) and on save; clear on close.

While typing, each change restarts a per-document timer (DEBOUNCE_S); when it fires, the
text of that moment is linted in a worker thread, and the result is published only if the
document still has that version (a result for a stale version is dropped, never shown).
Each diagnostic carries `source` "tritonify", its `code`, a `codeDescription` link to the
rule's page, and `data` with its fixes (so a client can apply them without asking again).
"""
from __future__ import annotations

import asyncio
import time
from pathlib import Path

from lsprotocol import types

from tritonify.diagnostics.model import Finding, Severity
from tritonify.diagnostics.registry import get_rule
from tritonify.server.analysis import Analysis
from tritonify.server.app import TritonifyServer, guarded
from tritonify.server.documents import lint_path, open_document
from tritonify.server.positions import LineIndex
from tritonify.server.settings import RUN_ON_SAVE

DEBOUNCE_S = 0.3
SOURCE = "tritonify"

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
    Severity.HINT: types.DiagnosticSeverity.Hint,
}


def _range_dict(r: types.Range) -> dict:
    return {"start": {"line": r.start.line, "character": r.start.character},
            "end": {"line": r.end.line, "character": r.end.character}}


def fix_data(finding: Finding, index: LineIndex) -> list[dict]:
    """The finding's fixes as plain JSON: title, applicability and LSP text edits."""
    out = []
    for fix in finding.fixes:
        edits = [{"range": _range_dict(index.range(e.start_line, e.start_column, e.end_line, e.end_column)),
                  "newText": e.new_text} for e in fix.edits]
        out.append({"title": fix.title, "applicability": fix.applicability.value, "edits": edits})
    return out


def doc_url(code: str, fallback: str | None) -> str | None:
    reg = get_rule(code)
    if reg is not None and reg.rule.page.is_file():
        return reg.rule.url
    if fallback and fallback.startswith("file:") and Path(fallback[len("file://"):]).is_file():
        return fallback
    return None


def to_diagnostic(finding: Finding, index: LineIndex) -> types.Diagnostic:
    href = doc_url(finding.code, finding.url)
    return types.Diagnostic(
        range=index.range(finding.line, finding.column, finding.end_line, finding.end_column),
        message=finding.message,
        severity=_SEVERITY.get(finding.severity, types.DiagnosticSeverity.Warning),
        code=finding.code,
        code_description=types.CodeDescription(href=href) if href else None,
        source=SOURCE,
        data={"code": finding.code, "fixes": fix_data(finding, index)},
    )


def diagnostics_of(analysis: Analysis) -> list[types.Diagnostic]:
    return [to_diagnostic(f, analysis.index) for f in analysis.findings]


class DiagnosticsFeature:
    def __init__(self, server: TritonifyServer):
        self.server = server
        self._pending: dict[str, asyncio.Task] = {}
        self._prelints: dict[str, asyncio.Task] = {}
        self.last_publish: dict[str, float] = {}   # uri -> monotonic time of the last publish (benchmarks)

    # ---- scheduling -----------------------------------------------------------------------
    def schedule(self, uri: str, delay: float) -> None:
        task = self._pending.pop(uri, None)
        if task is not None:
            task.cancel()
        self._pending[uri] = asyncio.ensure_future(self._lint_later(uri, delay))

    def prelint(self, uri: str) -> None:
        """Start linting the newest text now, unless a lint of this document is running (it
        then goes on with the newest text when it ends)."""
        task = self._prelints.get(uri)
        if task is None or task.done():
            self._prelints[uri] = asyncio.ensure_future(self._prelint_loop(uri))

    async def _prelint_loop(self, uri: str) -> None:
        try:
            while True:
                doc = open_document(self.server, uri)
                path = lint_path(doc) if doc is not None else None
                if path is None:
                    return
                version, text = doc.version, doc.source
                if self.server.analyses.get(doc.uri, version, text) is None:
                    await asyncio.shield(self.server.analysis_task(doc.uri, version, text, path))
                now = open_document(self.server, uri)
                if now is None or now.version == version:
                    return
        except asyncio.CancelledError:
            pass
        except Exception as exc:
            self.server.log(types.MessageType.Warning, f"linting ahead of the debounce failed for {uri}: {exc!r}")

    def cancel(self, uri: str) -> None:
        task = self._pending.pop(uri, None)
        if task is not None:
            task.cancel()

    async def _lint_later(self, uri: str, delay: float) -> None:
        try:
            if delay:
                await asyncio.sleep(delay)
            await self.lint_and_publish(uri)
        except asyncio.CancelledError:
            pass
        except Exception as exc:
            import traceback

            self.server.log(types.MessageType.Error, f"diagnostics for {uri} failed: {exc!r}\n{traceback.format_exc()}")
        finally:
            if self._pending.get(uri) is asyncio.current_task():
                self._pending.pop(uri, None)

    async def lint_and_publish(self, uri: str) -> None:
        server = self.server
        doc = open_document(server, uri)
        if doc is None:
            return
        path = lint_path(doc)
        if path is None:
            return
        version, text = doc.version, doc.source
        hit = server.analyses.get(doc.uri, version, text)
        if hit is None:
            hit = await asyncio.shield(server.analysis_task(doc.uri, version, text, path))
        now = open_document(server, uri)
        if now is None or now.version != version:
            return  # closed or edited meanwhile: this result is stale
        server.analyses.put(hit)
        if hit.result.error:
            server.log_once(types.MessageType.Warning, f"{path}: {hit.result.error}")
        server.set_diagnostics("lint", doc.uri, diagnostics_of(hit), version)
        self.last_publish[doc.uri] = time.monotonic()
        if hit.result.exports_changed:   # e.g. `jit` or `tl` redefined: files importing it lint anew
            self.relint_all(except_uri=doc.uri)

    def relint_all(self, except_uri: str | None = None) -> None:
        """After a settings change (or a change to what a module exports): lint every open
        document again."""
        try:
            uris = list(self.server.workspace.text_documents)
        except RuntimeError:
            return
        for uri in uris:
            doc = open_document(self.server, uri)
            if doc is not None and doc.uri != except_uri:
                self.server.analyses.drop(doc.uri)
                self.schedule(doc.uri, 0)


def register(server: TritonifyServer) -> DiagnosticsFeature:
    feature = DiagnosticsFeature(server)
    server.diagnostics_feature = feature
    server.on_settings_changed.append(feature.relint_all)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    @guarded(server, "didOpen")
    def did_open(params: types.DidOpenTextDocumentParams):
        feature.schedule(params.text_document.uri, 0)
        server.document_event("opened", params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    @guarded(server, "didChange")
    def did_change(params: types.DidChangeTextDocumentParams):
        uri = params.text_document.uri
        if server.settings_for(uri).lint_run == RUN_ON_SAVE:
            feature.cancel(uri)
            return
        feature.prelint(uri)
        feature.schedule(uri, DEBOUNCE_S)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    @guarded(server, "didSave")
    def did_save(params: types.DidSaveTextDocumentParams):
        uri = params.text_document.uri
        if uri.endswith("pyproject.toml"):
            server.pyproject.clear()
            feature.relint_all()
            return
        feature.schedule(uri, 0)
        server.document_event("saved", uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    @guarded(server, "didClose")
    def did_close(params: types.DidCloseTextDocumentParams):
        uri = params.text_document.uri
        feature.cancel(uri)
        feature._prelints.pop(uri, None)
        server.analyses.drop(uri)
        server.clear_diagnostics(uri)
        server.document_event("closed", uri)

    return feature
