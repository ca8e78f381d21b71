"""Live diagnostics: lint on open, while typing (debounced) and on save; clear on close.

While typing, each change restarts a per-document timer; when it fires, the version of that
moment is linted (or its lint, already under way, awaited) and published, only if the document
still has that version (a result for a stale version is dropped, never shown). The timer,
DEBOUNCE_S, is a pause a little longer than the gap between keys of someone typing. A document
is also linted at once on each change (a lint that ends goes on with the newest text), and its
result, when its version is still the newest and it parses, is published at once rather than
when the timer fires (a half-typed line's syntax error waits for the timer, so it does not
flicker). Each change stops the lints of older versions under way (`cancel_stale`: the worker
interrupts them and goes on, no restart), so none holds up the lint of the last key; until a
first lint of the document has ended (nothing to build on yet), only documents whose last lint
took at most LINT_AHEAD_S are linted ahead like this.

A lint while typing is incremental (diagnostics.incremental: only the kernels and statements
the edit touched, and what reads the names it changed, are linted again; the others' findings
carried over; an edited import lints the file in full). It answers twice: first with the
findings of the rules of statement scope (`Rule.scope`) on what it lints again, every other
finding carried over (`publish_first`, shown at once), then with all of them. Once typing pauses for
CONFIRM_IDLE_S, a full lint of that version runs in the worker that lints the document (on the
same text and overlay: `TritonifyServer.worker_for`) and its diagnostics replace the incremental
ones; the next edit cancels it (its worker interrupts it). A lint that
runs longer than BUSY_AFTER_S sends `tritonify/lintBusy` {uri, busy: true} (and busy: false
when its diagnostics are out), for the client's status item.
Each diagnostic carries `source` "tritonify", its `code`, a `codeDescription` link to the
rule's page, and `data` with its fixes (so a client can apply them without asking again).
"""
from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

from lsprotocol import types

from tritonify.contract import PROTOCOL
from tritonify.diagnostics.model import Finding, Severity
from tritonify.diagnostics.workspace_index import module_name
from tritonify.references import page_url
from tritonify.server import latency_trace as trace
from tritonify.server.analysis import Analysis
from tritonify.server.app import TritonifyServer, guarded
from tritonify.server.documents import lint_path, open_document
from tritonify.server.positions import LineIndex
from tritonify.server.settings import RUN_ON_SAVE

DEBOUNCE_S = 0.1          # longer than the gap between keys of someone typing
LINT_AHEAD_S = 0.07       # a document whose last lint took at most this is linted on each change
CONFIRM_IDLE_S = 0.75
RELINT_AFTER_S = 0.2      # importers of a changed module lint anew once changes pause this long
OPEN_LINT_AFTER_S = 0.02  # an opened document's first lint starts this much later (did_open),
OPEN_BURST_LINT_AFTER_S = 0.25   # ... this much when it came within OPEN_BURST_GAP_S of the last open
OPEN_BURST_GAP_S = 0.05
_PROTOCOL = PROTOCOL   # contract/protocol.json, shared with the client
BUSY_AFTER_S = _PROTOCOL["busyAfterMs"] / 1000
BUSY_NOTIFICATION = _PROTOCOL["lintBusyNotification"]
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
    """The page a diagnostic links to: the code's page (references' one resolver), else the
    finding's own link when it names a page that exists; None without one."""
    url = page_url(code)
    if url:
        return url
    if fallback and fallback.startswith("file:") and Path(fallback[len("file://"):]).is_file():
        return fallback
    return None


ROW_CHARS = 100   # what a Problems row shows without cutting; the whole message is in the hover
_CLAUSE_ENDS = (": ", "; ", ". ", " (")


def row_message(message: str, limit: int = ROW_CHARS) -> str:
    """The message as a Problems row shows it: whole when it fits `limit`, else cut at the
    last clause end (`: `, `; `, `. `, ` (`) that fits, or at a word, marked with an ellipsis."""
    if len(message) <= limit:
        return message
    head = message[: limit - 1]
    cut = max(head.rfind(end) for end in _CLAUSE_ENDS)
    if cut < limit // 3:
        cut = head.rfind(" ")
    if cut <= 0:
        cut = limit - 1
    return head[:cut].rstrip(" :;,.(") + "…"


def to_diagnostic(finding: Finding, index: LineIndex) -> types.Diagnostic:
    """The LSP diagnostic of a finding; its message fits a Problems row, and `data.message` keeps
    the whole one when the row cut it (the hover shows it)."""
    href = doc_url(finding.code, finding.url)
    row = row_message(finding.message)
    data = {"code": finding.code, "fixes": fix_data(finding, index)}
    if row != finding.message:
        data["message"] = finding.message
    return types.Diagnostic(
        range=index.range(finding.line, finding.column, finding.end_line, finding.end_column),
        message=row,
        severity=_SEVERITY.get(finding.severity, types.DiagnosticSeverity.Warning),
        code=finding.code,
        code_description=types.CodeDescription(href=href) if href else None,
        source=SOURCE,
        data=data,
    )


def module_words(path: str) -> frozenset[str]:
    """The names a file must contain to import the module at `path`: each part of its dotted
    name (`fla.ops.parallax.parallel`: a re-export through `fla.ops` names `ops`, a relative
    import `from . import parallel` names `parallel`), without the `.py`."""
    name = module_name(Path(path)) or Path(path).stem
    return frozenset(part for part in name.split(".") if part.isidentifier())


def importer_pattern(words: set[str]):
    """A regex that finds any of `words` as a whole word (None for no words)."""
    if not words:
        return None
    return re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, words))) + r")\b")


def diagnostics_of(analysis: Analysis) -> list[types.Diagnostic]:
    return [to_diagnostic(f, analysis.index) for f in analysis.findings]


class DiagnosticsFeature:
    def __init__(self, server: TritonifyServer):
        self.server = server
        self._pending: dict[str, asyncio.Task] = {}
        self._prelints: dict[str, asyncio.Task] = {}
        self._confirms: dict[str, asyncio.Task] = {}
        self._busy: set[str] = set()
        self.lint_seconds: dict[str, float] = {}   # uri -> how long its last lint took
        self.last_publish: dict[str, float] = {}   # uri -> monotonic time of the last publish (benchmarks)
        self._changed_modules: dict[str, frozenset[str] | None] = {}   # uri -> module_words (None: disk), to relint
        self._relint_timer: asyncio.TimerHandle | None = None
        self.relinted = 0   # documents linted again because a module they may import changed
        self.last_open = float("-inf")   # monotonic time of the last didOpen

    def lints_ahead(self, uri: str) -> bool:
        last = self.lint_seconds.get(uri)
        # a lint of a superseded version is interrupted (cancel_stale) once one lint has ended
        return last is None or last <= LINT_AHEAD_S or self.server.analyses.has(uri)

    # ---- the busy state (tritonify/lintBusy) ----------------------------------------------
    def _set_busy(self, uri: str, busy: bool) -> None:
        if busy == (uri in self._busy):
            return
        (self._busy.add if busy else self._busy.discard)(uri)
        try:
            self.server.protocol.notify(BUSY_NOTIFICATION, {"uri": uri, "busy": busy})
        except Exception:  # noqa: S110 - the client may be gone; the status item is cosmetic
            pass

    async def _timed(self, uri: str, awaitable):
        """Await a lint; tell the client it is busy if that takes longer than BUSY_AFTER_S."""
        handle = asyncio.get_running_loop().call_later(BUSY_AFTER_S, self._set_busy, uri, True)
        started = time.monotonic()
        try:
            return await awaitable
        finally:
            handle.cancel()
            self.lint_seconds[uri] = time.monotonic() - started

    # ---- the full lint once typing pauses -----------------------------------------------------
    def cancel_confirm(self, uri: str) -> None:
        task = self._confirms.pop(uri, None)
        if task is not None and not task.done():
            task.cancel()   # a lint in flight is stopped with its worker (LintWorker.request)

    def confirm_later(self, uri: str, version: int | None) -> None:
        self.cancel_confirm(uri)
        self._confirms[uri] = asyncio.ensure_future(self._confirm(uri, version))

    async def _confirm(self, uri: str, version: int | None) -> None:
        try:
            await asyncio.sleep(CONFIRM_IDLE_S)
            doc = open_document(self.server, uri)
            path = lint_path(doc) if doc is not None else None
            if path is None or doc.version != version:
                return
            text = doc.source
            exact = await self.server.exact_analysis(doc.uri, version, text, path)
            if not self.server.is_current(uri, version, text):
                return
            self.server.analyses.put(exact)
            trace.event("s.publish.exact", version=version, findings=len(exact.findings))
            self.server.set_diagnostics("lint", doc.uri, diagnostics_of(exact), version)
            self.last_publish[doc.uri] = time.monotonic()
        except asyncio.CancelledError:
            pass
        except Exception as exc:
            self.server.log(types.MessageType.Warning, f"the full lint of {uri} failed: {exc!r}")

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
                    task = self.server.analysis_task(doc.uri, version, text, path)
                    try:
                        await self._timed(uri, asyncio.shield(task))
                    except asyncio.CancelledError:
                        if not task.cancelled():
                            raise
                        # that version was superseded (cancel_stale): go on with the newest text
                now = open_document(self.server, uri)
                if now is None:
                    return
                if now.version == version:
                    hit = self.server.analyses.get(now.uri, version, text)
                    if hit is not None and not hit.result.error and not hit.syntax_error:
                        # the newest text, linted: shown now, not after the debounce (a syntax
                        # error of a half-typed line waits for the debounce, so it does not flicker)
                        pending = self._pending.pop(uri, None)
                        if pending is not None:
                            pending.cancel()
                        await self.lint_and_publish(uri)
                    return
        except asyncio.CancelledError:
            pass
        except Exception as exc:
            self.server.log(types.MessageType.Warning, f"linting ahead of the debounce failed for {uri}: {exc!r}")

    def cancel(self, uri: str) -> None:
        task = self._pending.pop(uri, None)
        if task is not None:
            task.cancel()
        self.cancel_confirm(uri)
        self._set_busy(uri, False)

    async def _lint_later(self, uri: str, delay: float) -> None:
        try:
            if delay:
                await asyncio.sleep(delay)
                trace.event("s.debounced", delay_ms=round(delay * 1000))
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
            hit = await self._timed(uri, asyncio.shield(server.analysis_task(doc.uri, version, text, path)))
        if not server.is_current(uri, version, text):
            return  # edited, closed, or reopened with other text meanwhile: this result is stale
        server.analyses.put(hit)
        if hit.result.error and not hit.syntax_error:   # a syntax error is its TRI000, not a log line per key
            server.log_once(types.MessageType.Warning, f"{path}: {hit.result.error}")
        trace.event("s.publish", version=version, findings=len(hit.findings), exact=hit.exact)
        server.set_diagnostics("lint", doc.uri, diagnostics_of(hit), version)
        self.last_publish[doc.uri] = time.monotonic()
        trace.event("s.published", version=version)
        server.code_lenses_ready(doc.uri)
        server.collect_when_idle()
        self._set_busy(doc.uri, False)
        if not hit.exact:
            self.confirm_later(doc.uri, version)
        if hit.result.exports_changed:   # e.g. `jit` or `tl` redefined: files importing it lint anew
            self.relint_importers(doc.uri, None if hit.result.disk_changed else path)

    def publish_first(self, first: Analysis) -> None:
        """Show a lint's first answer (the statement-scope findings of what was just typed, the
        others carried over: lint_worker) at once, unless the whole answer of that version is in
        already or the text does not parse (its syntax error waits for the debounce, as above)."""
        if first.syntax_error or first.result.error:
            return
        if self.server.analyses.get(first.uri, first.version, first.text) is not None:
            return
        trace.event("s.publish.first", version=first.version, findings=len(first.findings))
        self.server.set_diagnostics("lint", first.uri, diagnostics_of(first), first.version)
        self.last_publish[first.uri] = time.monotonic()

    # ---- documents that import a changed one ---------------------------------------------------
    def relint_importers(self, uri: str, path: str | None) -> None:
        """Lint again, once RELINT_AFTER_S after the last such change, the other open documents
        that can import the module at `path` (`module_words`; every other open document when a module changed on disk). Coalesced: a thousand documents
        opened one after the other (each new to the index) relint each importer once, not once
        per document opened (which was quadratic: 100 documents, 5,050 lints)."""
        self._changed_modules[uri] = module_words(path) if path is not None else None
        if self._relint_timer is not None:
            self._relint_timer.cancel()
        try:
            self._relint_timer = asyncio.get_running_loop().call_later(RELINT_AFTER_S, self._relint_importers_now)
        except RuntimeError:   # no event loop (a feature called directly)
            self._relint_timer = None

    def _relint_importers_now(self) -> None:
        self._relint_timer = None
        changed, self._changed_modules = self._changed_modules, {}
        everything = None in changed.values()
        pattern = None if everything else importer_pattern(set().union(*changed.values()))
        try:
            uris = list(self.server.workspace.text_documents)
        except RuntimeError:
            return
        for uri in uris:
            doc = open_document(self.server, uri)
            if doc is None or doc.uri in changed:
                continue
            if not everything and (pattern is None or not pattern.search(doc.source)):
                continue
            self.relinted += 1
            self.server.analyses.drop(doc.uri)
            self.schedule(doc.uri, 0)

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
    server.add_feature(feature)
    server.on_settings_changed.append(feature.relint_all)
    server.on_first_answer.append(feature.publish_first)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    @guarded(server, "didOpen")
    def did_open(params: types.DidOpenTextDocumentParams):
        # a moment later, not at once, and later still within a burst of opens (an editor
        # restoring 400 tabs): a request that arrives behind the burst runs before their lints
        # start, not after each one's first steps
        server.changes.opened(params.text_document.uri, params.text_document.version)
        now = time.monotonic()
        burst = now - feature.last_open < OPEN_BURST_GAP_S
        feature.last_open = now
        feature.schedule(params.text_document.uri, OPEN_BURST_LINT_AFTER_S if burst else OPEN_LINT_AFTER_S)
        server.document_event("opened", params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    @guarded(server, "didChange")
    def did_change(params: types.DidChangeTextDocumentParams):
        uri = params.text_document.uri
        server.last_change[uri] = time.monotonic()
        server.changes.changed(uri, params.text_document.version, params.content_changes)
        trace.event("s.change", version=params.text_document.version)
        if server.settings_for(uri).lint_run == RUN_ON_SAVE:
            feature.cancel(uri)
            return
        feature.cancel_confirm(uri)   # a full lint of an older version is no longer wanted
        doc = open_document(server, uri)
        server.cancel_stale(uri, doc.version if doc is not None else None)   # nor a lint of one
        if feature.lints_ahead(uri):
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
        feature.lint_seconds.pop(uri, None)
        server.last_change.pop(uri, None)
        server.analyses.drop(uri)
        server.forget(uri)
        server.clear_diagnostics(uri)
        server.document_event("closed", uri)

    return feature
