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
from tritonify.server.positions import UTF32, _units

_KEEPENDS = re.compile(r"(?<=\n)|(?<=\r)(?!\n)")

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
        """Splice the change into the lines it touches (a range past the end is clamped to the
        end; an end before the start is the start)."""
        if self._lines is None:
            self._lines = _KEEPENDS.split(self.source)   # the last item: the text after the last break
        lines = self._lines
        encoding = self._position_codec.encoding
        start_line, start = _line_offset(lines, change.range.start, encoding)
        end_line, end = _line_offset(lines, change.range.end, encoding)
        if (end_line, end) < (start_line, start):
            end_line, end = start_line, start
        piece = lines[start_line][:start] + change.text + lines[end_line][end:]
        first, last = start_line, end_line + 1
        # a `\r` and a `\n` that meet at the splice are one line break
        if piece.startswith("\n") and first > 0 and lines[first - 1].endswith("\r"):
            first -= 1
            piece = lines[first] + piece
        if piece.endswith("\r") and last < len(lines) and lines[last].startswith("\n"):
            piece += lines[last]
            last += 1
        new = _KEEPENDS.split(piece)
        if last < len(lines) and new[-1] == "":
            new.pop()   # the piece ended with its break: the next line follows it
        lines[first:last] = new

    @property
    def lines(self):
        parts = _KEEPENDS.split(self.source)
        if parts and parts[-1] == "":
            parts.pop()
        return tuple(parts)


def _line_offset(lines: list[str], position, encoding) -> tuple[int, int]:
    """(line, code-point offset into that line's text) of an LSP position in `lines` (each with
    its break, the last without), clamped: past a line's end is its end, past the last line is
    the end of the text."""
    if position.line >= len(lines):
        return len(lines) - 1, len(lines[-1])
    line = max(position.line, 0)
    text = lines[line].rstrip("\r\n") if line < len(lines) - 1 else lines[line]
    target = max(position.character, 0)
    if encoding == UTF32 or text.isascii():
        return line, min(target, len(text))
    units = 0
    for i, ch in enumerate(text):
        if units >= target:
            return line, i
        units += _units(ch, encoding)
    return line, len(text)


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
