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

import re
from pathlib import Path
from urllib.parse import unquote, urlparse

from pygls.workspace import TextDocument, Workspace

from tritonify.diagnostics.engine import language_of
from tritonify.server.positions import LineIndex

_KEEPENDS = re.compile(r"(?<=\n)|(?<=\r)(?!\n)")

# languageId -> a suffix the engine recognises, for documents without a file name (untitled:)
_SUFFIX_FOR_LANGUAGE = {"python": ".py", "cuda": ".cu", "cuda-cpp": ".cu", "cpp": None}


class LspTextDocument(TextDocument):
    def _apply_incremental_change(self, change) -> None:
        """Splice the change in by offsets computed with LSP's line breaks and the
        negotiated encoding (a range past the end is clamped to the end)."""
        text = self.source
        index = LineIndex(text, self._position_codec.encoding)
        start, end = index.offset(change.range.start), index.offset(change.range.end)
        if end < start:
            end = start
        self._source = text[:start] + change.text + text[end:]

    @property
    def lines(self):
        parts = _KEEPENDS.split(self.source)
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
