"""Open documents as the server keeps them, and what the engine needs to know about them.

pygls splits a document into lines with `str.splitlines`, which also breaks at form feed,
U+2028 and other characters that LSP clients (and Python's parser) treat as ordinary text; an
incremental edit after such a character would land on the wrong line. `LspWorkspace` keeps the
documents with LSP's own line breaks (`\\r\\n`, `\\r`, `\\n`) and applies incremental edits by offsets
computed the same way.

Only documents the client opened are served: a request about any other URI gets an empty
answer, never a read of the disk (a closed document may have changed or never existed).
"""
from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

from pygls.workspace import TextDocument, Workspace

from tritonify.diagnostics.engine import language_of
from tritonify.server.text_edits import splice, split_keepends

# languageId -> a suffix the engine recognises, for documents without a file name (untitled:)
_SUFFIX_FOR_LANGUAGE = {"python": ".py", "cuda": ".cu", "cuda-cpp": ".cu", "cpp": None}


class LspTextDocument(TextDocument):
    """A document whose incremental edits cost what they change, not what the document holds.

    The text is kept as a list of lines (each with its line break) while edits arrive, and
    joined into one string when it is next read: one didChange with 393 edits (a replace-all)
    splits the text once, splices each edit into the lines it touches and joins once, where
    splicing each into the whole string and indexing its lines again per edit took 2.1 s on a
    3,000-line file. Positions are LSP's: lines end at `\\r\\n`, `\\r` or `\\n`, columns count
    the negotiated encoding, and a position past a line's end or the document's end is clamped."""

    _lines: list[str] | None = None   # the text as lines with their breaks, while edits arrive

    @property
    def source(self) -> str:
        if self._lines is not None:
            self._source, self._lines = "".join(self._lines), None
        return super().source

    def _apply_full_change(self, change) -> None:
        self._lines = None
        super()._apply_full_change(change)

    def _apply_incremental_change(self, change) -> None:
        """Splice the change into the lines it touches (server.text_edits, the algorithm the lint
        worker's copy of the document uses too)."""
        if self._lines is None:
            self._lines = split_keepends(self.source)
        r = change.range
        splice(self._lines, (r.start.line, r.start.character), (r.end.line, r.end.character), change.text,
               self._position_codec.encoding)

    @property
    def lines(self):
        parts = split_keepends(self.source)
        if parts and parts[-1] == "":
            parts.pop()
        return tuple(parts)


class LspWorkspace(Workspace):
    def _create_text_document(self, doc_uri, source=None, version=None, language_id=None):
        return LspTextDocument(doc_uri, source=source, version=version, language_id=language_id,
                               sync_kind=self._sync_kind, position_codec=self._position_codec)


def replace_workspace(protocol) -> None:
    """Swap pygls' workspace for an `LspWorkspace` (called while initializing, before any
    document is opened)."""
    old = protocol._workspace
    if old is None or isinstance(old, LspWorkspace):
        return
    new = LspWorkspace(old.root_uri, old._sync_kind, list(old.folders.values()), old.position_encoding)
    protocol._workspace = new


def open_document(server, uri) -> TextDocument | None:
    """The open document for `uri`, or None (not open, not a string, server not initialized)."""
    if not isinstance(uri, str):
        return None
    try:
        return server.workspace.text_documents.get(unquote(uri))
    except RuntimeError:  # not initialized yet
        return None


def file_path(uri: str) -> Path | None:
    """The local file a `file:` URI names, else None."""
    try:
        parsed = urlparse(uri)
    except ValueError:
        return None
    if parsed.scheme != "file":
        return None
    path = unquote(parsed.path)
    if not path or "\0" in path:
        return None
    return Path(path)


def lint_path(doc: TextDocument) -> str | None:
    """The path the engine should lint the document under (its suffix picks the language),
    or None when Tritonify has nothing to say about this kind of document."""
    path = file_path(doc.uri)
    name = str(path) if path is not None else (unquote(urlparse(doc.uri).path or "") or "untitled")
    if language_of(name):
        return name
    suffix = _SUFFIX_FOR_LANGUAGE.get(doc.language_id or "")
    if suffix:
        return f"{name}{suffix}"
    return None


class ChangeLog:
    """The client's edits of each open document, version by version, as LSP ranges: what a lint
    worker is sent instead of the whole text when it holds an earlier version (lint_worker's
    `Revision`). Each opening of a document is a generation of its own (`key`): a document closed
    and opened again at version 1 with other text is never taken for the old one. The last
    KEEP_VERSIONS changes are kept; a worker further behind is sent the text."""

    KEEP_VERSIONS = 64

    def __init__(self):
        # uri -> [key, version, [(from_version, to_version, edits)]]
        self._docs: dict[str, list] = {}

    def opened(self, uri: str, version: int | None) -> None:
        self._docs[uri] = [object(), version, []]

    def changed(self, uri: str, version: int | None, changes) -> None:
        """Record a didChange's content changes (whole-text ones too) that made `version`."""
        doc = self._docs.get(uri)
        if doc is None:   # a change with no open before it: nothing to build on
            self.opened(uri, version)
            return
        edits = []
        for change in changes:
            r = getattr(change, "range", None)
            if r is None:
                edits.append((None, 0, 0, 0, change.text))
            else:
                edits.append((r.start.line, r.start.character, r.end.line, r.end.character, change.text))
        log = doc[2]
        log.append((doc[1], version, tuple(edits)))
        del log[:-self.KEEP_VERSIONS]
        doc[1] = version

    def closed(self, uri: str) -> None:
        self._docs.pop(uri, None)

    def key(self, uri: str) -> object | None:
        doc = self._docs.get(uri)
        return doc[0] if doc is not None else None

    def edits(self, uri: str, key: object, since: int | None, until: int | None) -> list | None:
        """The edits from version `since` to version `until` of generation `key` of `uri`, in
        order (empty when they are the same version), or None when they are not all kept."""
        doc = self._docs.get(uri)
        if doc is None or doc[0] is not key:
            return None
        if since == until:
            return []
        log = doc[2]
        for start in range(len(log) - 1, -1, -1):   # the last change that started from `since`
            if log[start][0] == since:
                break
        else:
            return None
        out: list = []
        for from_version, to_version, edits in log[start:]:
            out.extend(edits)
            if to_version == until:
                return out
        return None
