"""The editor's own floor for the typing-latency measurement (issue 31): a language server that does
no analysis at all.

It answers every didOpen/didChange at once with one TRI022-coded warning per line that holds a
whole `device_print(...)` call (a line scan, microseconds) and gives the lenses the driver looks for (Benchmark,
Profile above each `@triton.jit`), so tests/e2e/typing_latency.js can run against it unchanged.
Whatever latency remains with it is the editor's (code-server, Chromium, the extension host,
vscode-languageclient) on this machine at that load: no server can show the Problems row sooner.

Run through scripts/e2e_typing.sh with the interpreter replaced by benchmarks/e2e_floor_python.sh:

    E2E_PYTHON=benchmarks/e2e_floor_python.sh bash scripts/e2e_typing.sh

It needs pygls and lsprotocol (the .vsix's bundled libraries, on PYTHONPATH as the extension starts
its server). It is a measuring instrument, not part of Tritonify: nothing imports it.
"""
from __future__ import annotations

import re

from lsprotocol import types
from pygls.lsp.server import LanguageServer

server = LanguageServer("tritonify-floor", "0")
_PRINT = re.compile(r"device_print\(.*\)\s*$")   # a whole call: the row comes with its last key, as TRI022's
_JIT = re.compile(r"^\s*@triton\.jit")


def _publish(uri: str) -> None:
    doc = server.workspace.get_text_document(uri)
    diagnostics = []
    for number, line in enumerate(doc.source.splitlines()):
        match = _PRINT.search(line)
        if match:
            diagnostics.append(types.Diagnostic(
                range=types.Range(types.Position(number, match.start()), types.Position(number, len(line))),
                message="device_print left in a Triton kernel", severity=types.DiagnosticSeverity.Warning,
                code="TRI022", source="tritonify"))
    server.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=doc.version))


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(params: types.DidOpenTextDocumentParams) -> None:
    _publish(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(params: types.DidChangeTextDocumentParams) -> None:
    _publish(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_CODE_LENS)
def code_lens(params: types.CodeLensParams) -> list[types.CodeLens]:
    doc = server.workspace.get_text_document(params.text_document.uri)
    lenses = []
    for number, line in enumerate(doc.source.splitlines()):
        if _JIT.match(line):
            where = types.Range(types.Position(number, 0), types.Position(number, 0))
            for title in ("Benchmark", "Profile"):
                lenses.append(types.CodeLens(range=where, command=types.Command(title=title, command="tritonify.benchmarkKernel")))
    return lenses


if __name__ == "__main__":
    server.start_io()
