"""End-to-end through pytest-lsp: a real client, `python -m tritonify.server` in a subprocess.

Covers: initialize, diagnostics on open / change (debounced, stale versions dropped) / save /
close, settings (initialization options, workspace/configuration, [tool.tritonify] per
folder), code actions and applying them, hover, code lens, shutdown.
"""
from __future__ import annotations

import asyncio
import time

import pytest
from lsprotocol import types

from tests.server.conftest import (KERNEL, TANH_LINE, apply_text_edits, change_doc, codes, open_doc, start,
                                   wait_diagnostics)


def _pos(line, character):
    return types.Position(line=line, character=character)


def _range(line, start, end=None):
    return types.Range(start=_pos(line, start), end=_pos(line, start if end is None else end))


async def test_initialize_advertises_every_feature(client, workspace):
    result = await start(client, workspace)
    caps = result.capabilities
    assert result.server_info.name == "tritonify"
    assert caps.hover_provider
    assert caps.code_lens_provider is not None
    kinds = caps.code_action_provider.code_action_kinds
    assert "quickfix" in kinds and "source.fixAll.tritonify" in kinds
    assert caps.code_action_provider.resolve_provider is True
    assert {"tritonify.benchmark", "tritonify.profile"} <= set(caps.execute_command_provider.commands)
    assert caps.text_document_sync.save is not None and caps.text_document_sync.open_close


async def test_diagnostics_on_open_carry_code_source_link_and_fix(client, workspace):
    await start(client, workspace)
    uri = (workspace / "kernel.py").as_uri()
    open_doc(client, uri, KERNEL)
    diags = [d for d in await wait_diagnostics(client, uri, version=1) if d.code == "TRI001"]
    assert len(diags) == 1
    d = diags[0]
    assert d.source == "tritonify"
    assert d.range.start == _pos(TANH_LINE, KERNEL.splitlines()[TANH_LINE].index("libdevice"))
    assert d.code_description.href.endswith("/references/rules/TRI001.md")
    fix = d.data["fixes"][0]
    assert fix["applicability"] == "safe" and fix["edits"][0]["newText"] == "2 * tl.sigmoid(2 * x) - 1"


async def test_typing_is_debounced_and_only_the_latest_version_is_published(client, workspace):
    await start(client, workspace)
    uri = (workspace / "kernel.py").as_uri()
    open_doc(client, uri, KERNEL)
    await wait_diagnostics(client, uri, version=1)
    mark = len(client.published)
    text = KERNEL
    for version in range(2, 8):   # six quick edits, 30 ms apart: one lint at the end
        text = text.replace("0.5 * x", f"0.{version} * x") if version % 2 else text + "\n"
        change_doc(client, uri, text, version)
        await asyncio.sleep(0.03)
    sent = time.monotonic()
    diags = await wait_diagnostics(client, uri, version=7, after=mark)
    waited = time.monotonic() - sent
    assert 0.2 < waited < 3.0            # waited for the debounce, then published
    assert {p.version for p in client.published[mark:] if p.uri == uri} == {7}
    assert "TRI001" in codes(diags)


async def test_stale_results_are_dropped_when_the_text_moves_on(client, workspace):
    await start(client, workspace)
    uri = (workspace / "kernel.py").as_uri()
    open_doc(client, uri, KERNEL)
    await wait_diagnostics(client, uri, version=1)
    mark = len(client.published)
    change_doc(client, uri, KERNEL + "\n# v2\n", 2)
    await asyncio.sleep(0.35)    # v2's lint is due about now ...
    change_doc(client, uri, KERNEL.replace("libdevice.tanh(x)", "tl.sigmoid(x)"), 3)
    diags = await wait_diagnostics(client, uri, version=3, after=mark)
    assert "TRI001" not in codes(diags)
    await asyncio.sleep(0.2)
    last = [p for p in client.published if p.uri == uri][-1]
    assert last.version == 3      # nothing about v2 arrived after v3


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


async def test_close_clears_the_diagnostics(client, workspace):
    await start(client, workspace)
    uri = (workspace / "kernel.py").as_uri()
    open_doc(client, uri, KERNEL)
    await wait_diagnostics(client, uri, version=1)
    mark = len(client.published)
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    assert list(await wait_diagnostics(client, uri, after=mark)) == []


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


async def test_syntax_errors_and_unknown_languages(client, workspace):
    await start(client, workspace)
    uri = (workspace / "half.py").as_uri()
    open_doc(client, uri, KERNEL[: KERNEL.index("libdevice.tanh(") + 15])
    diags = await wait_diagnostics(client, uri)
    assert codes(diags) == ["TRI000"] and "SyntaxError" in diags[0].message
    notes = (workspace / "notes.txt").as_uri()
    open_doc(client, notes, "libdevice.tanh(x)", language="plaintext")
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=notes), position=_pos(0, 3)))
    assert hover is None


async def _actions(client, uri, rng, only=None, diagnostics=()):
    result = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=rng,
        context=types.CodeActionContext(diagnostics=list(diagnostics), only=only)))
    assert all(isinstance(a, types.CodeAction) for a in result or [])
    return list(result or [])


async def test_quick_fix_applied_removes_the_finding(client, workspace):
    await start(client, workspace)
    uri = (workspace / "kernel.py").as_uri()
    open_doc(client, uri, KERNEL)
    diag = [d for d in await wait_diagnostics(client, uri) if d.code == "TRI001"][0]
    actions = await _actions(client, uri, diag.range, diagnostics=[diag])
    fix = [a for a in actions if a.kind == types.CodeActionKind.QuickFix and a.is_preferred]
    assert len(fix) == 1 and fix[0].title.startswith("TRI001: Replace with the sigmoid identity")
    new_text = apply_text_edits(KERNEL, fix[0].edit.changes[uri])
    assert "1 + 2 * tl.sigmoid(2 * x) - 1)" in new_text
    mark = len(client.published)
    change_doc(client, uri, new_text, 2)
    assert "TRI001" not in codes(await wait_diagnostics(client, uri, version=2, after=mark))
    unsafe = [a for a in actions if "tanh.approx" in a.title]
    assert unsafe and "review it" in unsafe[0].title and not unsafe[0].is_preferred


async def test_disable_for_this_line_writes_noqa(client, workspace):
    await start(client, workspace)
    uri = (workspace / "kernel.py").as_uri()
    open_doc(client, uri, KERNEL)
    diag = [d for d in await wait_diagnostics(client, uri) if d.code == "TRI001"][0]
    actions = await _actions(client, uri, diag.range, only=[types.CodeActionKind.QuickFix])
    noqa = [a for a in actions if a.title == "Disable TRI001 for this line"]
    assert len(noqa) == 1
    new_text = apply_text_edits(KERNEL, noqa[0].edit.changes[uri])
    assert new_text.splitlines()[TANH_LINE].endswith("  # noqa: TRI001")
    mark = len(client.published)
    change_doc(client, uri, new_text, 2)
    assert "TRI001" not in codes(await wait_diagnostics(client, uri, version=2, after=mark))


async def test_fix_all_is_resolved_lazily_and_uses_versioned_edits(client, workspace):
    await start(client, workspace, resolve=True, document_changes=True)
    uri = (workspace / "kernel.py").as_uri()
    open_doc(client, uri, KERNEL, version=4)
    await wait_diagnostics(client, uri)
    actions = await _actions(client, uri, _range(0, 0), only=["source.fixAll.tritonify"])
    assert [a.kind for a in actions] == ["source.fixAll.tritonify"] and actions[0].edit is None
    resolved = await client.code_action_resolve_async(actions[0])
    doc_edit = resolved.edit.document_changes[0]
    assert doc_edit.text_document.version == 4
    fixed = doc_edit.edits[0].new_text
    assert "libdevice.tanh" not in fixed and "2 * tl.sigmoid(2 * x) - 1" in fixed


async def test_fix_all_inline_without_resolve_support(client, workspace):
    await start(client, workspace, resolve=False)
    uri = (workspace / "kernel.py").as_uri()
    open_doc(client, uri, KERNEL)
    await wait_diagnostics(client, uri)
    actions = await _actions(client, uri, _range(0, 0), only=["source"])
    fix_all = [a for a in actions if a.kind == "source.fixAll.tritonify"]
    assert fix_all and "libdevice.tanh" not in fix_all[0].edit.changes[uri][0].new_text
    assert not [a for a in actions if a.kind == types.CodeActionKind.QuickFix]   # `only` respected


async def test_benchmark_and_profile_actions_only_inside_kernels(client, workspace):
    await start(client, workspace)
    uri = (workspace / "kernel.py").as_uri()
    open_doc(client, uri, KERNEL)
    await wait_diagnostics(client, uri)
    inside = await _actions(client, uri, _range(7, 4))
    run = [a for a in inside if a.command is not None]
    assert [a.title for a in run] == ["Benchmark this kernel (gelu_kernel)", "Profile this kernel (gelu_kernel)"]
    assert [a.command.command for a in run] == ["tritonify.benchmark", "tritonify.profile"]
    assert list(run[0].command.arguments) == [uri, "gelu_kernel"]
    outside = await _actions(client, uri, _range(14, 4))
    assert not [a for a in outside if a.command is not None]


async def test_hover_on_diagnostic_code_and_libdevice_call(client, workspace):
    await start(client, workspace)
    uri = (workspace / "kernel.py").as_uri()
    text = KERNEL.replace("    return x\n", "    return x  # noqa: TRI001\n")
    open_doc(client, uri, text)
    await wait_diagnostics(client, uri)

    async def hover(line, character):
        return await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=_pos(line, character)))

    on_diag = await hover(TANH_LINE, text.splitlines()[TANH_LINE].index("tanh"))
    assert on_diag.contents.value.startswith("**TRI001**") and "## What it detects" in on_diag.contents.value
    noqa_line = text.splitlines().index("    return x  # noqa: TRI001")
    on_code = await hover(noqa_line, text.splitlines()[noqa_line].index("TRI001") + 2)
    assert on_code.contents.value.startswith("# TRI001")
    assert await hover(noqa_line, 2) is None                 # plain indentation: nothing
    # the import line names libdevice itself, not a call: no page; a tanh call in a kernel
    # with no finding (inside a noqa) still gets the TRI001 page through the API index
    quiet = text.replace("libdevice.tanh(x))", "libdevice.tanh(x))  # noqa")
    change_doc(client, uri, quiet, 2)
    api = await hover(TANH_LINE, quiet.splitlines()[TANH_LINE].index("tanh") + 1)
    assert api is not None and api.contents.value.startswith("`triton.language.extra.libdevice.tanh`")
    assert "TRI001 libdevice-tanh" in api.contents.value


async def test_code_lens_above_each_kernel(client, workspace):
    await start(client, workspace)
    uri = (workspace / "kernel.py").as_uri()
    open_doc(client, uri, KERNEL)
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    assert [lens.command.title for lens in lenses] == ["Benchmark", "Profile"]
    assert lenses[0].range.start.line == 5            # the @triton.jit line
    assert list(lenses[0].command.arguments) == [uri, "gelu_kernel"]


async def test_requests_about_unknown_or_closed_documents_get_empty_answers(client, workspace):
    await start(client, workspace)
    for uri in ("file:///no/such/file.py", "untitled:Untitled-1", "weird:%%%", (workspace / "kernel.py").as_uri()):
        doc = types.TextDocumentIdentifier(uri=uri)
        assert await client.text_document_hover_async(types.HoverParams(text_document=doc, position=_pos(0, 0))) is None
        assert list(await client.text_document_code_lens_async(types.CodeLensParams(text_document=doc))) == []
        assert list(await _actions(client, uri, _range(0, 0))) == []


async def test_shutdown_then_exit_ends_the_process_cleanly(client, workspace):
    await start(client, workspace)
    await client.shutdown_async(None)
    client.exit(None)
    code = await asyncio.wait_for(client._server.wait(), 10)
    assert code == 0
