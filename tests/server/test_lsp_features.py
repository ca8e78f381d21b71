"""End-to-end through pytest-lsp: a real client, `python -m tritonify.server` in a subprocess.

Covers: initialize, diagnostics on open / change (debounced, stale versions dropped) / save /
close, settings (initialization options, workspace/configuration, [tool.tritonify] per
folder), code actions and applying them, hover, code lens, shutdown.
"""
from __future__ import annotations

import asyncio

from lsprotocol import types

from tests.server.conftest import (KERNEL, change_doc, codes, open_doc, start,
                                   wait_diagnostics)


def _pos(line, character):
    return types.Position(line=line, character=character)


def _range(line, start, end=None):
    return types.Range(start=_pos(line, start), end=_pos(line, start if end is None else end))


async def test_on_save_mode_lints_on_save_not_while_typing(client, workspace):
    await start(client, workspace, options={"lint": {"run": "onSave"}})
    uri = (workspace / "kernel.py").as_uri()
    open_doc(client, uri, KERNEL)
    await wait_diagnostics(client, uri, version=1)
    mark = len(client.published)
    fixed = KERNEL.replace("libdevice.tanh(x)", "tl.sigmoid(x)")
    change_doc(client, uri, fixed, 2)
    await asyncio.sleep(0.6)
    assert [p for p in client.published[mark:] if p.uri == uri] == []
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    diags = await wait_diagnostics(client, uri, version=2, after=mark)
    assert "TRI001" not in codes(diags)


async def test_select_ignore_and_severity_from_initialization_options(client, workspace):
    await start(client, workspace, options={"tritonify": {"lint": {"severity": {"TRI001": "error"}}}})
    uri = (workspace / "kernel.py").as_uri()
    open_doc(client, uri, KERNEL)
    diags = [d for d in await wait_diagnostics(client, uri) if d.code == "TRI001"]
    assert diags and diags[0].severity == types.DiagnosticSeverity.Error

    other = (workspace / "other.py").as_uri()
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"tritonify": {"lint": {"ignore": ["TRI001"]}}}))
    await asyncio.sleep(0.3)
    mark = len(client.published)
    open_doc(client, other, KERNEL)
    assert "TRI001" not in codes(await wait_diagnostics(client, other, after=mark))


async def test_workspace_configuration_is_read_and_refreshed(client, workspace):
    client.set_configuration({"lint": {"select": ["TRI002"]}}, section="tritonify")
    await start(client, workspace)
    uri = (workspace / "kernel.py").as_uri()
    await asyncio.sleep(0.2)   # the server asks for the configuration after `initialized`
    open_doc(client, uri, KERNEL)
    assert "TRI001" not in codes(await wait_diagnostics(client, uri, version=1))
    mark = len(client.published)
    client.set_configuration({"lint": {"select": ["TRI001"]}}, section="tritonify")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    assert codes(await wait_diagnostics(client, uri, after=mark)) == ["TRI001"]   # re-linted with the new settings


async def test_pyproject_is_honoured_per_workspace_folder(client, tmp_path):
    quiet, loud = tmp_path / "quiet", tmp_path / "loud"
    for folder in (quiet, loud):
        folder.mkdir()
        (folder / "k.py").write_text(KERNEL)
    (quiet / "pyproject.toml").write_text('[tool.tritonify]\nignore = ["TRI001"]\n')
    await client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        workspace_folders=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in (quiet, loud)]))
    for folder in (quiet, loud):
        open_doc(client, (folder / "k.py").as_uri(), KERNEL)
    assert "TRI001" not in codes(await wait_diagnostics(client, (quiet / "k.py").as_uri()))
    assert "TRI001" in codes(await wait_diagnostics(client, (loud / "k.py").as_uri()))


async def _actions(client, uri, rng, only=None, diagnostics=()):
    result = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=rng,
        context=types.CodeActionContext(diagnostics=list(diagnostics), only=only)))
    assert all(isinstance(a, types.CodeAction) for a in result or [])
    return list(result or [])


async def test_fix_all_inline_without_resolve_support(client, workspace):
    await start(client, workspace, resolve=False)
    uri = (workspace / "kernel.py").as_uri()
    open_doc(client, uri, KERNEL)
    await wait_diagnostics(client, uri)
    actions = await _actions(client, uri, _range(0, 0), only=["source"])
    fix_all = [a for a in actions if a.kind == "source.fixAll.tritonify"]
    assert fix_all and "libdevice.tanh" not in fix_all[0].edit.changes[uri][0].new_text
    assert not [a for a in actions if a.kind == types.CodeActionKind.QuickFix]   # `only` respected


async def test_shutdown_then_exit_ends_the_process_cleanly(client, workspace):
    await start(client, workspace)
    await client.shutdown_async(None)
    client.exit(None)
    code = await asyncio.wait_for(client._server.wait(), 10)
    assert code == 0
