"""The Tritonify language server: a small core that hands each LSP method to a feature.

What the core does (and only that):
* builds the pygls server, registers each feature module (`diagnostics_feature`,
  `code_actions`, `hover`, `code_lens`, `jobs_feature`, `inspect_feature`);
* passes document events ("opened", "saved", "closed") on to the features that want them
  (pygls gives each notification one handler; the diagnostics feature owns those);
* reads settings (initialization options, `workspace/configuration`) into `EditorSettings`;
* keeps diagnostics per (source, document), so lint results and job results can be published
  together without clobbering each other (esbonio's model);
* makes sure every request is answered: a feature that fails is logged through
  `window/logMessage` and answers an empty result; a request whose params do not convert is
  answered with JSON-RPC error -32602 (pygls 2.1 drops it); a request after `shutdown` gets
  -32600, one before `initialize` -32002 (notifications then are dropped); an id that is not a
  string or an integer (NaN, Infinity, 1.5) gets -32600 with `"id": null`, never echoed; a
  notification method sent with an id gets -32600 and is not applied; the stream itself is read
  by `framing.py`, which no malformed frame can stop.
"""
from __future__ import annotations

import asyncio
import contextvars
import functools
import gc
import inspect
import logging
import os
import sys
import time
import traceback
from typing import Any, Callable, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from tritonify.contract import PROTOCOL
from tritonify.diagnostics.settings import Settings
from tritonify.infra.version import __version__
from tritonify.server.analysis import Analysis, AnalysisCache, analyse
from tritonify.server.lint_worker import LintWorker, Revision
from tritonify.server.pygls_adapter import send_error, set_client_info, shutdown_received, take_request_future
from tritonify.server.documents import ChangeLog, file_path, lint_path, open_document, replace_workspace
from tritonify.server.framing import serve_stdio
from tritonify.server import latency_trace as trace
from tritonify.server.settings import (EditorSettings, LintSettingsCache, claims_trust, lint_settings, trust_hint,
                                       withdraw_only)

log = logging.getLogger("tritonify.server")

# The cyclic collector: its automatic full passes are off in the server (GEN2_THRESHOLD; one
# over the long-lived objects, pygls' and the open documents' analyses, took up to 120 ms on the
# event loop while typing); a full pass runs once the documents have been idle for
# IDLE_COLLECT_S (`collect_when_idle`) and freezes what survives (gc.freeze), so that the passes
# of the young generations look only at what is new; every FULL_PASS_EVERY idle passes one also
# looks at what was frozen.
GEN2_THRESHOLD = 1_000_000
IDLE_COLLECT_S = 1.0
FULL_PASS_EVERY = 20
CONFIG_TIMEOUT_S = 2.0
REQUEST_WAIT_S = 3.0      # longest a request waits for its document's analysis
TYPING_PAUSE_S = 0.1      # a request this soon after an edit waits that long first (current_analysis)
LARGE_CHARS = 500_000     # documents this large are linted by a worker of their own
OVERFLOW_AFTER_S = 0.2    # ... and so is any document while the typing worker is this long on another
SENT_TO_CLIENT = "tritonify_sent_to_client"   # a log record the client got as window/logMessage
INVALID_PARAMS = -32602
INVALID_REQUEST = -32600
SERVER_NOT_INITIALIZED = -32002


class _Answered:
    """Stands in for a message the protocol already answered with an error."""

    jsonrpc = "2.0"


ANSWERED = _Answered()


# The ExecuteCommandParams of the command being run: pygls hands a command its arguments only,
# and the work-done token the client chose lives on the params.
F = TypeVar("F")   # a feature type (TritonifyServer.get_feature)

COMMAND_PARAMS: contextvars.ContextVar[types.ExecuteCommandParams | None] = contextvars.ContextVar("command_params", default=None)


class TritonifyProtocol(LanguageServerProtocol):
    """pygls' protocol, with the answers JSON-RPC requires and pygls 2.1 leaves out."""

    initialize_received = False

    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    def lsp_workspace__execute_command(self, params: types.ExecuteCommandParams):
        COMMAND_PARAMS.set(params)
        return (yield from super().lsp_workspace__execute_command(params))

    def structure_message(self, data):
        if isinstance(data, dict) and "jsonrpc" in data and "method" in data and data.get("id") is not None:
            msg_id, method = data["id"], data["method"]
            if not _valid_id(msg_id):   # NaN, Infinity, 1e400, 1.5, true: echoing it would be invalid JSON
                send_error(self, None, types.ResponseError(
                    code=INVALID_REQUEST, message=f"invalid request: the id of {method} must be a string or an integer"))
                return ANSWERED
            if isinstance(method, str) and _is_notification(method):   # pygls would apply it and never answer
                send_error(self, msg_id, types.ResponseError(
                    code=INVALID_REQUEST, message=f"invalid request: {method} is a notification and takes no id; not applied"))
                return ANSWERED
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if not isinstance(data, dict):
                raise
            msg_id = data.get("id")
            valid_id = _valid_id(msg_id)
            if "method" in data and valid_id:
                method = data.get("method")
                detail = _cause(exc)
                send_error(self, msg_id, types.ResponseError(
                    code=INVALID_PARAMS, message=f"invalid params for {method}: {detail}"))
                self._server.log(types.MessageType.Warning, f"answered {method} (id {msg_id}) with invalid-params: {detail}")
                return ANSWERED
            future = take_request_future(self, msg_id) if valid_id else None
            if future is not None:  # a malformed answer to our own request
                if not future.done():
                    future.set_exception(exc)
                return ANSWERED
            raise

    def handle_message(self, message):
        if message is ANSWERED:
            return
        method = getattr(message, "method", None)
        msg_id = getattr(message, "id", None)
        is_request = method is not None and msg_id is not None
        if method is not None and not self.initialize_received and method not in (types.INITIALIZE, types.EXIT):
            # LSP: before `initialize` a request is answered -32002 and a notification dropped
            if is_request:
                send_error(self, msg_id, types.ResponseError(
                    code=SERVER_NOT_INITIALIZED, message=f"{method} refused: the server is not initialized yet"))
            else:
                self._server.log_problem(f"dropped {method}: it came before initialize")
            return
        if is_request:
            trace.event("s.request", method=method)
        if is_request and method == types.INITIALIZE:
            self.initialize_received = True
        if is_request and getattr(message, "jsonrpc", None) != self.VERSION:
            send_error(self, msg_id, types.ResponseError(code=INVALID_REQUEST, message="jsonrpc must be \"2.0\""))
            return
        if is_request and shutdown_received(self) and method != types.EXIT:
            send_error(self, msg_id, types.ResponseError(
                code=INVALID_REQUEST, message=f"server is shutting down; {method} refused"))
            return
        super().handle_message(message)


def _valid_id(msg_id: Any) -> bool:
    """A JSON-RPC id as LSP has it: a string or an integer (not a bool, a float, NaN or Infinity)."""
    return isinstance(msg_id, (str, int)) and not isinstance(msg_id, bool)


def _is_notification(method: str) -> bool:
    """Whether LSP defines `method` as a notification (a message that takes no id)."""
    entry = types.METHOD_TO_TYPES.get(method)
    return entry is not None and entry[1] is None and entry[0].__name__.endswith("Notification")


def _cause(exc: BaseException) -> str:
    """What was wrong with the params, in cattrs' words ("invalid value ... @ $.params.range")."""
    cause = exc.__cause__ or exc
    try:
        from cattrs import transform_error

        if isinstance(cause, Exception) and hasattr(cause, "exceptions"):
            return "; ".join(transform_error(cause, path="$"))[:500]
    except Exception:
        pass
    text = str(cause).splitlines()[0] if str(cause) else type(cause).__name__
    return text[:500]


class TritonifyServer(LanguageServer):
    def refresh_code_lenses(self) -> None:
        """Ask the client to re-request code lenses (when it supports that); a failure is harmless."""
        caps = self.client_capabilities.workspace
        if caps and caps.code_lens and caps.code_lens.refresh_support:
            try:
                self.workspace_code_lens_refresh(None)
            except Exception:  # noqa: S110 - the lenses refresh on the next request anyway
                pass

    def owe_code_lenses(self, uri: str) -> None:
        """A code lens request for `uri` was answered before any lint of it had ended (no
        lenses): once one has, the client is asked to request them again (`code_lenses_ready`),
        else the lenses would stay away until the next edit."""
        self._lenses_owed.add(uri)

    def code_lenses_ready(self, uri: str) -> None:
        """A lint of `uri` ended and was published: ask for its lenses again if an answer lacked them."""
        if uri in self._lenses_owed:
            self._lenses_owed.discard(uri)
            self.refresh_code_lenses()

    def __init__(self):
        super().__init__("tritonify", __version__, protocol_cls=TritonifyProtocol, max_workers=4)
        self._lenses_owed: set[str] = set()   # owe_code_lenses
        self._base_settings = EditorSettings()
        self._initial_raw: Any = None       # initializationOptions
        self._global_raw: Any = None        # latest workspace/configuration (or pushed settings)
        self._folder_raw: dict[str, Any] = {}
        self.editor_settings = EditorSettings()
        self.folder_settings: dict[str, EditorSettings] = {}   # folder URI -> its settings
        self.pyproject = LintSettingsCache()
        self.analyses = AnalysisCache()
        self.lint_worker = LintWorker()
        self.large_lint_worker = LintWorker()   # documents over LARGE_CHARS: they never hold up the others
        self.changes = ChangeLog()   # the client's edits, sent to the worker that holds a document
        self._owners: dict[str, LintWorker] = {}   # uri -> the worker that lints it (worker_for)
        self._inflight: dict[tuple[str, int | None], asyncio.Task] = {}
        self._inflight_text: dict[tuple[str, int | None], str] = {}   # the text each of those lints
        # (source, uri) -> diagnostics; published together per document
        self._diagnostics: dict[str, dict[str, list[types.Diagnostic]]] = {}
        self._versions: dict[str, int | None] = {}
        self._published: dict[str, tuple[int | None, list[types.Diagnostic]]] = {}   # uri -> the last publication
        self._reported: set[str] = set()
        self._config_published: dict[str, tuple[str, ...]] = {}   # pyproject.toml URI -> its problems shown
        self.on_settings_changed: list[Callable[[], Any]] = []
        self.on_document_event: list[Callable[[str, str], Any]] = []   # (event, uri)
        self.on_first_answer: list[Callable[[Analysis], Any]] = []   # a lint's first answer (_first_answer)
        self.on_shutdown: list[Callable[[], Any]] = []
        self._features_by_type: dict[type, Any] = {}
        self.last_change: dict[str, float] = {}   # uri -> monotonic time of its last didChange
        self._idle_collect: asyncio.TimerHandle | None = None
        self.idle_collections = 0

    # ---- the collector -----------------------------------------------------------------------
    def collect_when_idle(self) -> None:
        """Run the collector once no document has changed for IDLE_COLLECT_S (see GEN2_THRESHOLD)."""
        if self._idle_collect is not None:
            self._idle_collect.cancel()
        try:
            self._idle_collect = asyncio.get_running_loop().call_later(IDLE_COLLECT_S, self._collect_if_idle)
        except RuntimeError:   # no event loop (a test calling a feature directly)
            self._idle_collect = None

    def _collect_if_idle(self) -> None:
        self._idle_collect = None
        quiet = time.monotonic() - max(self.last_change.values(), default=-1e9)
        if quiet < IDLE_COLLECT_S:
            self.collect_when_idle()
            return
        self.idle_collections += 1
        if self.idle_collections % FULL_PASS_EVERY == 0:
            gc.unfreeze()
        gc.collect()
        gc.freeze()

    # ---- features ---------------------------------------------------------------------------
    def add_feature(self, feature: Any) -> None:
        """Register a feature object, found again by its type (`get_feature`)."""
        self._features_by_type[type(feature)] = feature

    def get_feature(self, kind: type[F]) -> F | None:
        """The registered feature of type `kind` (None before it is registered)."""
        return self._features_by_type.get(kind)

    # ---- logging ---------------------------------------------------------------------------
    def log(self, level: types.MessageType, message: str) -> None:
        """window/logMessage, never raising (the client may be gone). The line also goes to the
        Python log (a --log-file), not to stderr: an editor shows stderr in the same log as
        window/logMessage, and each line would appear twice (StderrFilter)."""
        getattr(log, {1: "error", 2: "warning"}.get(int(level), "info"))(message, extra={SENT_TO_CLIENT: True})
        try:
            self.window_log_message(types.LogMessageParams(type=level, message=message))
        except Exception:  # pragma: no cover - nothing left to tell
            pass

    def log_once(self, level: types.MessageType, message: str) -> None:
        if message not in self._reported:
            self._reported.add(message)
            self.log(level, message)

    def report_server_error(self, error: Exception, source) -> None:
        """pygls' out-of-band errors: log them (pygls would pop up a message box)."""
        self.log(types.MessageType.Error, f"{getattr(source, '__name__', source)}: {type(error).__name__}: {error}")

    def log_problem(self, message: str) -> None:
        """A frame or message the stream reader skipped or answered with an error (framing.py)."""
        self.log(types.MessageType.Warning, f"protocol: {message}")

    # ---- settings --------------------------------------------------------------------------
    def client_says(self, key: str) -> bool:
        """Whether the client set `key` to true in initializationOptions.client (the keys are
        contract/protocol.json's client* entries)."""
        raw = self._initial_raw
        client = raw.get("client") if isinstance(raw, dict) else None
        return isinstance(client, dict) and client.get(key) is True

    def trust_hint(self) -> str:
        """What makes the workspace trusted, in this client's words (settings.trust_hint)."""
        return trust_hint(self.client_says(PROTOCOL["clientStatesTrust"]))

    def settings_for(self, uri: str) -> EditorSettings:
        """The editor settings of the workspace folder holding `uri` (longest match)."""
        best, best_len = self.editor_settings, -1
        for folder, settings in self.folder_settings.items():
            if uri.startswith(folder.rstrip("/") + "/") and len(folder) > best_len:
                best, best_len = settings, len(folder)
        return best

    def lint_settings_for(self, uri: str, path: str) -> Settings:
        editor = self.settings_for(uri)
        local = file_path(uri)
        if local is not None:
            base, problems = self.pyproject.for_folder(local.parent)
            self.report_config_problems(local.parent, problems)
        else:
            base = Settings()
        settings, problem = lint_settings(base, editor)
        if problem:
            self.log_once(types.MessageType.Warning, problem)
        return settings

    def report_config_problems(self, folder, problems: list) -> None:
        """A broken `[tool.tritonify]` value, shown where the user looks: a warning message once,
        and a diagnostic on the key's line of that pyproject.toml (cleared once it reads cleanly).
        Linting goes on with the default for that key (settings.load_lint_settings)."""
        from tritonify.server.settings import config_diagnostics

        for problem in problems:
            if problem.message not in self._reported:
                self._reported.add(problem.message)
                self.log(types.MessageType.Warning, problem.message)
                try:
                    self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning,
                                                                     message=f"Tritonify: {problem.message}"))
                except Exception:   # noqa: S110 - the log has it
                    pass
        by_uri = config_diagnostics(folder, problems, self._config_published)
        for uri, diagnostics in by_uri.items():
            self._config_published[uri] = tuple(d.message for d in diagnostics)
            if not diagnostics:
                self._config_published.pop(uri)
            self.set_diagnostics("config", uri, diagnostics)

    def apply_settings(self, raw: Any, folder: str | None = None, *, initial: bool = False) -> None:
        """Record a settings object (initialization options when `initial`, else the latest
        global or per-folder configuration) and recompute the effective settings."""
        if folder:
            self._folder_raw[folder] = raw
        elif initial:
            self._initial_raw = raw
        else:
            self._global_raw = raw
        initial = self._base_settings.updated(self._initial_raw)
        # Trust comes from the client alone (VS Code's workspace trust, the user's own init options):
        # a `workspace/configuration` answer or a pushed settings object may come from a settings
        # file inside the workspace, so it may withdraw trust, never grant it (issue 31).
        self.editor_settings = withdraw_only(initial.updated(self._global_raw), initial.trusted)
        self.folder_settings = {f: withdraw_only(self.editor_settings.updated(r), initial.trusted)
                                for f, r in self._folder_raw.items()}
        # (the VS Code extension answers with its own workspace trust, and restarts the server when
        # the user grants it: nothing to say to it)
        if (not initial.trusted and not self.client_says(PROTOCOL["clientStatesTrust"])
                and any(claims_trust(r) for r in (self._global_raw, *self._folder_raw.values()))):
            self.log_once(types.MessageType.Warning, "ignored \"trusted\": true from the workspace's configuration: "
                                                     f"trust comes only from the client ({self.trust_hint()})")
        for settings in (self.editor_settings, *self.folder_settings.values()):
            for problem in settings.problems:
                self.log_once(types.MessageType.Warning, f"setting ignored: {problem}")

    async def fetch_configuration(self) -> None:
        """Ask the client for the `tritonify` section, globally and per folder."""
        caps = self.client_capabilities.workspace
        if not (caps and caps.configuration):
            return
        try:
            folders = list(self.workspace.folders.values())
        except RuntimeError:
            return
        items = [types.ConfigurationItem(section="tritonify")]
        items += [types.ConfigurationItem(scope_uri=f.uri, section="tritonify") for f in folders]
        try:
            results = await asyncio.wait_for(
                self.workspace_configuration_async(types.ConfigurationParams(items=items)), CONFIG_TIMEOUT_S)
        except Exception as exc:
            self.log(types.MessageType.Warning, f"workspace/configuration failed, keeping the current settings: {exc!r}")
            return
        if not isinstance(results, (list, tuple)):
            return
        if results:
            self.apply_settings(results[0])
        for folder, raw in zip(folders, results[1:]):
            if isinstance(raw, dict) and raw:
                self.apply_settings(raw, folder=folder.uri)
        self.pyproject.clear()

    def settings_changed(self) -> None:
        for callback in self.on_settings_changed:
            try:
                callback()
            except Exception:
                self.log(types.MessageType.Error, f"settings callback failed:\n{traceback.format_exc()}")

    def document_event(self, event: str, uri: str) -> None:
        """Tell each feature that asked that a document was "opened", "saved" or "closed"."""
        for callback in self.on_document_event:
            try:
                callback(event, uri)
            except Exception:
                self.log(types.MessageType.Error, f"{event} callback failed:\n{traceback.format_exc()}")

    # ---- analyses ----------------------------------------------------------------------------
    @property
    def position_encoding(self):
        try:
            return self.workspace.position_encoding
        except RuntimeError:
            return types.PositionEncodingKind.Utf16

    async def current_analysis(self, uri: str, wait_s: float | None = None) -> Analysis | None:
        """The analysis of the open document's current version, or None when `uri` is not
        open, not a Triton/CUDA document, or its analysis takes longer than `wait_s` (a
        request then gets an empty answer rather than a late one; the lint goes on and its
        diagnostics are published when done)."""
        doc = open_document(self, uri)
        if doc is None:
            return None
        path = lint_path(doc)
        if path is None:
            return None
        text, version = doc.source, doc.version
        hit = self.analyses.get(doc.uri, version, text)
        if hit is not None:
            return hit
        typing = TYPING_PAUSE_S - (time.monotonic() - self.last_change.get(doc.uri, -1e9))
        if typing > 0:
            # a version being typed: its lint starts once typing pauses (the diagnostics'
            # debounce); linting it now for this request would queue a lint per key in the
            # worker ahead of the last one. A newer key makes the request stale: no answer.
            await asyncio.sleep(typing)
            now = open_document(self, uri)
            if now is None or now.version != version:
                return None
            hit = self.analyses.get(doc.uri, version, text)
            if hit is not None:
                return hit
        task = self.analysis_task(doc.uri, version, text, path)
        try:
            return await asyncio.wait_for(asyncio.shield(task), REQUEST_WAIT_S if wait_s is None else wait_s)
        except asyncio.CancelledError:
            if task.cancelled():   # its version was superseded (cancel_stale): the request is stale too
                return None
            raise
        except asyncio.TimeoutError:
            self.log(types.MessageType.Info, f"{path}: analysis still running; answered without it")
            return None

    def cancel_stale(self, uri: str, version: int | None) -> None:
        """Stop the lints of `uri`'s other versions (the worker interrupts them and goes on):
        the next key made them stale, and the lint of the newest version would wait for them."""
        if not self.analyses.has(uri):
            return   # no lint of it has ended yet: the one under way is what later ones build on
        for (u, v), task in list(self._inflight.items()):
            if u == uri and v != version and not task.done() and not task.cancelling():
                task.cancel()

    def analysis_task(self, uri: str, version: int | None, text: str, path: str) -> asyncio.Task:
        """The one lint of (uri, version, text), shared by the diagnostics and by requests. The
        text is part of the key: a document closed and opened again starts at version 1 again,
        with other text, and the lint of the old text may still be running (issue 31)."""
        key = (uri, version)
        task = self._inflight.get(key)
        if task is not None and not task.cancelled():
            linted = self._inflight_text.get(key)
            if linted is text or linted == text:
                return task
            task.cancel()   # the same version of another text: its result is for no open document
        task = asyncio.ensure_future(self._analyse_and_keep(uri, version, text, path, "incremental",
                                                            on_first=self._first_answer))
        self._inflight[key] = task
        self._inflight_text[key] = text

        def done(t: asyncio.Task) -> None:
            if self._inflight.get(key) is t:
                self._inflight.pop(key, None)
                self._inflight_text.pop(key, None)

        task.add_done_callback(done)
        task.add_done_callback(lambda t: t.cancelled() or t.exception())   # never "exception was never retrieved"
        return task

    def _first_answer(self, analysis: Analysis) -> None:
        """A lint's first answer (analysis.analyse's `on_first`), to the features that show it,
        while its version is the document's (it is never kept as the version's analysis)."""
        if not self.is_current(analysis.uri, analysis.version, analysis.text):
            return
        for callback in self.on_first_answer:
            try:
                callback(analysis)
            except Exception:
                self.log(types.MessageType.Error, f"first-answer callback failed:\n{traceback.format_exc()}")

    async def _analyse_and_keep(self, uri: str, version: int | None, text: str, path: str,
                                mode: str = "full", on_first: Callable[[Analysis], None] | None = None) -> Analysis:
        analysis = await self.analyse(uri, version, text, path, mode=mode, on_first=on_first)
        if self.is_current(uri, version, text):
            self.analyses.put(analysis)
        return analysis

    def is_current(self, uri: str, version: int | None, text: str) -> bool:
        """Whether the open document `uri` is at `version` with `text` (a result for anything else
        is stale: edited, closed, or closed and opened again at the same version with other text)."""
        doc = open_document(self, uri)
        return doc is not None and doc.version == version and (doc.source is text or doc.source == text)

    def worker_for(self, uri: str, path: str, text: str) -> LintWorker:
        """The one worker that lints `uri` and holds its text, its last lint and the overlay of
        the other documents it lints: every lint of it (incremental, full, the confirming one)
        goes there, so two answers about one version cannot come from two states. A document over
        LARGE_CHARS lives in the large worker, so that it never holds up the others; another one
        moves to the other worker when its own has been on another document for OVERFLOW_AFTER_S
        (a slow lint of one file never holds up the others) and stays there."""
        if len(text) > LARGE_CHARS:
            owner = self.large_lint_worker
        else:
            owner = self._owners.get(uri, self.lint_worker)
            other = self.large_lint_worker if owner is self.lint_worker else self.lint_worker
            if owner.busy_elsewhere_s(path) > OVERFLOW_AFTER_S and other.busy_elsewhere_s(path) <= OVERFLOW_AFTER_S:
                owner = other
        self._owners[uri] = owner
        return owner

    def forget(self, uri: str) -> None:
        """A document closed: its change log and its worker go."""
        self.changes.closed(uri)
        self._owners.pop(uri, None)
        self._lenses_owed.discard(uri)

    def revision(self, uri: str, version: int | None) -> Revision | None:
        """`version` of the open document `uri` as a lint worker is told of it (lint_worker.Revision)."""
        key = self.changes.key(uri)
        if key is None:
            return None
        return Revision(key, version, self.position_encoding,
                        lambda since: self.changes.edits(uri, key, since, version))

    async def analyse(self, uri: str, version: int | None, text: str, path: str, settings: Settings | None = None,
                      mode: str = "full", on_first: Callable[[Analysis], None] | None = None) -> Analysis:
        settings = settings if settings is not None else self.lint_settings_for(uri, path)
        return await analyse(self.worker_for(uri, path, text), uri, version, text, path, settings,
                             self.position_encoding, self.settings_for(uri).lint_timeout_s, mode, on_first,
                             self.revision(uri, version))

    async def exact_analysis(self, uri: str, version: int | None, text: str, path: str) -> Analysis:
        """A full lint of (uri, version), once typing pauses, in the worker that lints the
        document (worker_for): on the same text and overlay as its incremental lints, and the base
        its next incremental lint builds on. The next key interrupts it (LintWorker.request)."""
        return await self.analyse(uri, version, text, path, mode="full")

    @property
    def lint_workers(self) -> tuple[LintWorker, ...]:
        return (self.lint_worker, self.large_lint_worker)

    # ---- diagnostics per source ------------------------------------------------------------
    def set_diagnostics(self, source: str, uri: str, diagnostics: list[types.Diagnostic], version: int | None = None) -> bool:
        """Publish `uri`'s diagnostics with `source`'s replaced; not when they are what was last
        published for that version (a lint's whole answer that its first one gave already, a
        confirming lint that agrees): each publication costs the editor a redraw of the
        document's problems. Whether it was published."""
        per_source = self._diagnostics.setdefault(uri, {})
        per_source[source] = diagnostics
        self._versions[uri] = version
        merged = [d for items in per_source.values() for d in items]
        if self._published.get(uri) == (version, merged):
            trace.event("s.diag.same", version=version)
            return False
        self._published[uri] = (version, merged)
        trace.event("s.diag.sent", version=version, n=len(merged))
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=merged, version=version))
        return True

    def clear_diagnostics(self, uri: str) -> None:
        self._diagnostics.pop(uri, None)
        self._versions.pop(uri, None)
        self._published.pop(uri, None)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def shutdown(self):
        for worker in self.lint_workers:
            worker.kill()
        super().shutdown()


def guarded(server: TritonifyServer, feature: str, default: Any = None):
    """Wrap a feature handler so that its failure is logged and answered with `default`:
    one broken feature must not take the others (or the request) down."""

    def decorate(fn):
        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def wrapper(*args, **kwargs):
                try:
                    return await fn(*args, **kwargs)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    server.log(types.MessageType.Error, f"{feature} failed: {type(exc).__name__}: {exc}\n{traceback.format_exc()}")
                    return default() if callable(default) else default
        else:
            @functools.wraps(fn)
            def wrapper(*args, **kwargs):
                try:
                    return fn(*args, **kwargs)
                except Exception as exc:
                    server.log(types.MessageType.Error, f"{feature} failed: {type(exc).__name__}: {exc}\n{traceback.format_exc()}")
                    return default() if callable(default) else default
        return wrapper

    return decorate


def _register_lifecycle(server: TritonifyServer) -> None:
    @server.feature(types.INITIALIZE)
    @guarded(server, "initialize")
    def initialize(params: types.InitializeParams):
        set_client_info(server.protocol, params.client_info)
        replace_workspace(server.protocol)
        # trust is false (EditorSettings' default) unless the client states it, VS Code or not
        server.apply_settings(params.initialization_options, initial=True)

    @server.feature(types.INITIALIZED)
    @guarded(server, "initialized")
    async def initialized(params: types.InitializedParams):
        asyncio.ensure_future(server.lint_worker.start())
        # the spare worker too: a lint that waits for another document's slow one goes there, and
        # starting a Python then would cost it a second (OVERFLOW_AFTER_S)
        asyncio.ensure_future(server.large_lint_worker.start(warm=True))
        await server.fetch_configuration()
        server.settings_changed()
        server.collect_when_idle()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    @guarded(server, "didChangeConfiguration")
    async def did_change_configuration(params: types.DidChangeConfigurationParams):
        raw = params.settings
        if isinstance(raw, dict) and raw:
            server.apply_settings(raw)   # pushed settings (older clients, Neovim's `settings`)
        else:
            await server.fetch_configuration()   # pulled: the client just says "something changed"
        server.pyproject.clear()
        server.settings_changed()

    @server.feature(types.SHUTDOWN)
    @guarded(server, "shutdown")
    def shutdown(params=None):
        for worker in server.lint_workers:
            worker.kill()
        for callback in server.on_shutdown:
            try:
                callback()
            except Exception:
                server.log(types.MessageType.Error, f"shutdown callback failed:\n{traceback.format_exc()}")


def _register_exit(server: TritonifyServer) -> None:
    @server.feature(types.EXIT)
    def exit_now(params=None):
        """`exit`: stop everything and leave at once, 0 after `shutdown` and 1 without it, as
        LSP says. pygls' own teardown waits for its stdin-reader thread, which may sit in a
        read() until the client closes the pipe; an editor waiting for the process to end
        would wait with it."""
        code = 0 if shutdown_received(server.protocol) else 1
        try:
            for worker in server.lint_workers:
                worker.kill()
            for callback in server.on_shutdown:
                callback()
            sys.stdout.flush()
            logging.shutdown()
        finally:
            os._exit(code)


def create_server() -> TritonifyServer:
    """A fresh server with every feature registered."""
    from tritonify.server import code_actions, code_lens, diagnostics_feature, hover, inspect_feature, jobs_feature

    server = TritonifyServer()
    _register_lifecycle(server)
    _register_exit(server)
    for feature in (diagnostics_feature, code_actions, hover, code_lens, jobs_feature, inspect_feature):
        feature.register(server)
    return server


def main(argv: list[str] | None = None) -> int:
    """Serve LSP on stdin/stdout until `exit` (or until the client closes stdin)."""
    import argparse

    from tritonify.server.arguments import add_arguments

    parser = argparse.ArgumentParser(prog="tritonify server", description="Tritonify language server (stdio)")
    add_arguments(parser)
    args = parser.parse_args(argv)
    return serve(args)


class StderrFilter(logging.Filter):
    """What stderr does not repeat: lines the client already got through window/logMessage, and
    pygls' warning for a `$/cancelRequest` of a request already answered (clients send those
    routinely; nothing is wrong)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, SENT_TO_CLIENT, False):
            return False
        return not (record.name.startswith("pygls") and str(record.msg).startswith("Cancel notification for unknown message id"))


def serve(args) -> int:
    stderr = logging.StreamHandler(sys.stderr)
    stderr.addFilter(StderrFilter())
    handlers: list[logging.Handler] = [stderr]
    if getattr(args, "log_file", None):
        try:
            handlers.append(logging.FileHandler(args.log_file, encoding="utf-8"))
        except OSError as exc:
            print(f"tritonify server: cannot write log file {args.log_file}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    logging.basicConfig(level=getattr(args, "log_level", "WARNING"), handlers=handlers,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, GEN2_THRESHOLD)   # full passes when idle only (collect_when_idle)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print() must never corrupt the protocol stream
    server = create_server()
    serve_stdio(server, stdin, stdout)   # framing.py: pygls' read loop, made unbreakable
    code = 0 if shutdown_received(server.protocol) else 1
    try:
        stdout.flush()
    except Exception:
        pass
    logging.shutdown()
    # The stdin reader thread may still be blocked in read(); don't wait for it.
    os._exit(code)
