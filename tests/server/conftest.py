"""Shared pieces of the server tests: a kernel that TRI001 fires on, a workspace on disk,
and a pytest-lsp client connected to `python -m tritonify.server`."""
from __future__ import annotations

import asyncio
import os
import sys
import textwrap
from pathlib import Path
from typing import Union

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

# The servers these tests start compile nothing unless a test turns compile-time insight on
# (tests/server/test_lsp_inspect.py): a compile per opened kernel would slow every test and add
# code lenses the other tests do not expect.
os.environ["TRITONIFY_INSPECT"] = "0"

HERE = Path(__file__).parent
FAKE_ENGINE = HERE / "fake_engine.py"
SERVER = [sys.executable, "-m", "tritonify.server"]

KERNEL = textwrap.dedent('''\
    import triton
    import triton.language as tl
    from triton.language.extra import libdevice


    @triton.jit
    def gelu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        for _ in range(4):
            x = 0.5 * x * (1 + libdevice.tanh(x))
        tl.store(y_ptr + offs, x, mask=offs < n)


    def host(x):
        return x
''')
TANH_LINE = 10  # 0-based line of the libdevice.tanh call


@pytest.fixture
def workspace(tmp_path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "kernel.py").write_text(KERNEL)
    return root


def capabilities(*, resolve: bool = True, progress: bool = True, configuration: bool = True,
                 document_changes: bool = False, lens_refresh: bool = True,
                 create_files: bool = False) -> types.ClientCapabilities:
    return types.ClientCapabilities(
        window=types.WindowClientCapabilities(work_done_progress=progress),
        workspace=types.WorkspaceClientCapabilities(
            configuration=configuration,
            workspace_edit=types.WorkspaceEditClientCapabilities(
                document_changes=document_changes or create_files,
                resource_operations=[types.ResourceOperationKind.Create] if create_files else None),
            code_lens=types.CodeLensWorkspaceClientCapabilities(refresh_support=lens_refresh)),
        text_document=types.TextDocumentClientCapabilities(
            code_action=types.CodeActionClientCapabilities(
                resolve_support=types.ClientCodeActionResolveOptions(properties=["edit"]) if resolve else None),
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True)),
    )


def install_client_helpers(lsp_client: LanguageClient) -> None:
    """Record every publishDiagnostics, read code actions as the spec says, answer
    workspace/codeLens/refresh (pytest-lsp's client does none of these by itself)."""
    features = lsp_client.protocol.fm.features
    handler = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]
    lsp_client.published = []

    def recording(params):
        lsp_client.published.append(params)
        return handler(params)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = recording

    # lsprotocol's converter reads any code action that has a `command` key as a bare
    # Command, even when that key holds a Command object (a CodeAction with a command, as
    # the spec allows): read it as the spec says.
    converter = lsp_client.protocol._converter

    def code_action_or_command(obj, _):
        if isinstance(obj.get("command"), str):
            return converter.structure(obj, types.Command)
        return converter.structure(obj, types.CodeAction)

    converter.register_structure_hook(Union[types.Command, types.CodeAction], code_action_or_command)

    lsp_client.lens_refreshes = 0

    @lsp_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def code_lens_refresh(params):
        lsp_client.lens_refreshes += 1


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient):
    install_client_helpers(lsp_client)
    yield
    try:
        await asyncio.wait_for(lsp_client.shutdown_session(), 10)
    except Exception:
        pass


async def start(client: LanguageClient, root: Path, options: dict | None = None, **caps) -> types.InitializeResult:
    return await client.initialize_session(types.InitializeParams(
        capabilities=capabilities(**caps), root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
        initialization_options=options))


def open_doc(client: LanguageClient, uri: str, text: str, version: int = 1, language: str = "python") -> None:
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id=language, version=version, text=text)))


def change_doc(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


async def wait_diagnostics(client: LanguageClient, uri: str, timeout: float = 10.0, version: int | None = None,
                           after: int = 0):
    """The first publishDiagnostics for `uri` (of `version` if given) among those received
    after the first `after` ones, waiting for it if needed."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        for params in client.published[after:]:
            if params.uri == uri and (version is None or params.version == version):
                return params.diagnostics
        if loop.time() > deadline:
            raise TimeoutError(f"no diagnostics for {uri} (version {version}); got {[(p.uri, p.version) for p in client.published]}")
        await asyncio.sleep(0.01)


def codes(diagnostics) -> list[str]:
    return [d.code for d in diagnostics]


def apply_text_edits(text: str, edits) -> str:
    """Apply LSP TextEdits (UTF-16 positions, plain ASCII here) as a client would."""
    lines = text.split("\n")

    def offset(pos):
        return sum(len(line) + 1 for line in lines[:pos.line]) + pos.character

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text
