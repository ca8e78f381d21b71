"""End-to-end through pytest-lsp, on one server shared by the whole module (each test uses
documents of its own): diagnostics on open / change (debounced, stale versions dropped) / close,
code actions and applying them, hover, code lens, requests about unknown documents.

Tests that need their own settings or capabilities are in test_lsp_features.py.
"""
from __future__ import annotations

import asyncio
import time

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.server.conftest import (KERNEL, SERVER, TANH_LINE, apply_text_edits, capabilities, change_doc, codes,
                                   install_client_helpers, open_doc, wait_diagnostics)

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), scope="module")
async def shared(lsp_client: LanguageClient, tmp_path_factory):
    install_client_helpers(lsp_client)
    root = tmp_path_factory.mktemp("shared")
    lsp_client.init_result = await lsp_client.initialize_session(types.InitializeParams(
        capabilities=capabilities(resolve=True, document_changes=True), root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)]))
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), 10)


def _pos(line, character):
    return types.Position(line=line, character=character)


def _range(line, start, end=None):
    return types.Range(start=_pos(line, start), end=_pos(line, start if end is None else end))


def edits_of(action):
    """The text edits of a single-document WorkspaceEdit, in either of its two shapes."""
    if action.edit.document_changes:
        return list(action.edit.document_changes[0].edits)
    (edits,) = action.edit.changes.values()
    return list(edits)


async def _actions(client, uri, rng, only=None, diagnostics=()):
    result = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=rng,
        context=types.CodeActionContext(diagnostics=list(diagnostics), only=only)))
    assert all(isinstance(a, types.CodeAction) for a in result or [])
    return list(result or [])


async def test_initialize_advertises_every_feature(shared, workspace):
    result = shared.init_result
    caps = result.capabilities
    assert result.server_info.name == "tritonify"
    assert caps.hover_provider
    assert caps.code_lens_provider is not None
    kinds = caps.code_action_provider.code_action_kinds
    assert "quickfix" in kinds and "source.fixAll.tritonify" in kinds
    assert caps.code_action_provider.resolve_provider is True
    assert {"tritonify.benchmark", "tritonify.profile"} <= set(caps.execute_command_provider.commands)
    assert caps.text_document_sync.save is not None and caps.text_document_sync.open_close


async def test_diagnostics_on_open_carry_code_source_link_and_fix(shared, workspace):
    uri = (workspace / "kernel.py").as_uri()
    open_doc(shared, uri, KERNEL)
    diags = [d for d in await wait_diagnostics(shared, uri, version=1) if d.code == "TRI001"]
    assert len(diags) == 1
    d = diags[0]
    assert d.source == "tritonify"
    assert d.range.start == _pos(TANH_LINE, KERNEL.splitlines()[TANH_LINE].index("libdevice"))
    assert d.code_description.href.endswith("/references/rules/TRI001.md")
    fix = d.data["fixes"][0]
    assert fix["applicability"] == "safe" and "2 * tl.sigmoid(2 * x) - 1" in fix["edits"][0]["newText"]
    assert fix["edits"][0]["range"]["start"] == {"line": d.range.start.line, "character": d.range.start.character}


async def test_typing_publishes_the_newest_version_and_never_an_older_one_after_it(shared, workspace):
    """Each lint that ends while its version is still the newest is shown at once (no debounce
    wait); a lint of a version the next key superseded is stopped or dropped, never shown."""
    uri = (workspace / "kernel.py").as_uri()
    open_doc(shared, uri, KERNEL)
    await wait_diagnostics(shared, uri, version=1)
    mark = len(shared.published)
    text = KERNEL
    for version in range(2, 8):   # six quick edits, 30 ms apart
        text = text.replace("0.5 * x", f"0.{version} * x") if version % 2 else text + "\n"
        change_doc(shared, uri, text, version)
        await asyncio.sleep(0.03)
    sent = time.monotonic()
    diags = await wait_diagnostics(shared, uri, version=7, after=mark)
    assert time.monotonic() - sent < 3.0
    await asyncio.sleep(0.3)
    versions = [p.version for p in shared.published[mark:] if p.uri == uri]
    assert versions == sorted(versions) and versions[-1] == 7   # nothing older after something newer
    assert "TRI001" in codes(diags)


async def test_stale_results_are_dropped_when_the_text_moves_on(shared, workspace):
    uri = (workspace / "kernel.py").as_uri()
    open_doc(shared, uri, KERNEL)
    await wait_diagnostics(shared, uri, version=1)
    mark = len(shared.published)
    change_doc(shared, uri, KERNEL + "\n# v2\n", 2)
    await asyncio.sleep(0.35)    # v2's lint is due about now ...
    change_doc(shared, uri, KERNEL.replace("libdevice.tanh(x)", "tl.sigmoid(x)"), 3)
    diags = await wait_diagnostics(shared, uri, version=3, after=mark)
    assert "TRI001" not in codes(diags)
    await asyncio.sleep(0.2)
    last = [p for p in shared.published if p.uri == uri][-1]
    assert last.version == 3      # nothing about v2 arrived after v3


async def test_close_clears_the_diagnostics(shared, workspace):
    uri = (workspace / "kernel.py").as_uri()
    open_doc(shared, uri, KERNEL)
    await wait_diagnostics(shared, uri, version=1)
    mark = len(shared.published)
    shared.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    assert list(await wait_diagnostics(shared, uri, after=mark)) == []


async def test_syntax_errors_and_unknown_languages(shared, workspace):
    uri = (workspace / "half.py").as_uri()
    open_doc(shared, uri, KERNEL[: KERNEL.index("libdevice.tanh(") + 15])
    diags = await wait_diagnostics(shared, uri)
    assert codes(diags) == ["TRI000"] and "SyntaxError" in diags[0].message
    notes = (workspace / "notes.txt").as_uri()
    open_doc(shared, notes, "libdevice.tanh(x)", language="plaintext")
    hover = await shared.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=notes), position=_pos(0, 3)))
    assert hover is None


async def test_quick_fix_applied_removes_the_finding(shared, workspace):
    uri = (workspace / "kernel.py").as_uri()
    open_doc(shared, uri, KERNEL)
    diag = [d for d in await wait_diagnostics(shared, uri) if d.code == "TRI001"][0]
    actions = await _actions(shared, uri, diag.range, diagnostics=[diag])
    fix = [a for a in actions if a.kind == types.CodeActionKind.QuickFix and a.is_preferred]
    assert len(fix) == 1 and fix[0].title.startswith("TRI001: Replace with the sigmoid identity")
    new_text = apply_text_edits(KERNEL, edits_of(fix[0]))
    assert "libdevice.tanh" not in new_text.splitlines()[TANH_LINE]
    assert "2 * tl.sigmoid(2 * x) - 1" in new_text.splitlines()[TANH_LINE]
    mark = len(shared.published)
    change_doc(shared, uri, new_text, 2)
    assert "TRI001" not in codes(await wait_diagnostics(shared, uri, version=2, after=mark))
    unsafe = [a for a in actions if "tanh.approx" in a.title]
    assert unsafe and "review it" in unsafe[0].title and not unsafe[0].is_preferred


async def test_disable_for_this_line_writes_noqa(shared, workspace):
    uri = (workspace / "kernel.py").as_uri()
    open_doc(shared, uri, KERNEL)
    diag = [d for d in await wait_diagnostics(shared, uri) if d.code == "TRI001"][0]
    actions = await _actions(shared, uri, diag.range, only=[types.CodeActionKind.QuickFix])
    noqa = [a for a in actions if a.title == "Disable TRI001 for this line"]
    assert len(noqa) == 1
    new_text = apply_text_edits(KERNEL, edits_of(noqa[0]))
    assert new_text.splitlines()[TANH_LINE].endswith("  # noqa: TRI001")
    mark = len(shared.published)
    change_doc(shared, uri, new_text, 2)
    assert "TRI001" not in codes(await wait_diagnostics(shared, uri, version=2, after=mark))


async def test_fix_all_is_resolved_lazily_and_uses_versioned_edits(shared, workspace):
    uri = (workspace / "kernel.py").as_uri()
    open_doc(shared, uri, KERNEL, version=4)
    await wait_diagnostics(shared, uri)
    actions = await _actions(shared, uri, _range(0, 0), only=["source.fixAll.tritonify"])
    assert [a.kind for a in actions] == ["source.fixAll.tritonify"] and actions[0].edit is None
    resolved = await shared.code_action_resolve_async(actions[0])
    doc_edit = resolved.edit.document_changes[0]
    assert doc_edit.text_document.version == 4
    fixed = doc_edit.edits[0].new_text
    assert "libdevice.tanh" not in fixed and "2 * tl.sigmoid(2 * x) - 1" in fixed


async def test_benchmark_and_profile_actions_only_inside_kernels(shared, workspace):
    uri = (workspace / "kernel.py").as_uri()
    open_doc(shared, uri, KERNEL)
    await wait_diagnostics(shared, uri)
    inside = await _actions(shared, uri, _range(7, 4))
    run = [a for a in inside if a.command is not None]
    assert [a.title for a in run] == ["Benchmark this kernel (gelu_kernel)", "Profile this kernel (gelu_kernel)"]
    assert [a.command.command for a in run] == ["tritonify.benchmark", "tritonify.profile"]
    assert list(run[0].command.arguments) == [uri, "gelu_kernel"]
    outside = await _actions(shared, uri, _range(14, 4))
    assert not [a for a in outside if a.command is not None]


async def test_hover_on_diagnostic_code_and_libdevice_call(shared, workspace):
    uri = (workspace / "kernel.py").as_uri()
    text = KERNEL.replace("    return x\n", "    return x  # noqa: TRI001\n")
    open_doc(shared, uri, text)
    await wait_diagnostics(shared, uri)

    async def hover(line, character):
        return await shared.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=_pos(line, character)))

    on_diag = await hover(TANH_LINE, text.splitlines()[TANH_LINE].index("tanh"))
    # the page in short and its link, not the whole page; the message only when its row was cut
    value = on_diag.contents.value
    assert value.startswith("**TRI001 libdevice-tanh**") and "## What it detects" not in value
    assert "A call to `tanh` from libdevice" in value and "the whole page](file://" in value
    diag = next(d for d in (await wait_diagnostics(shared, uri)) if d.code == "TRI001")
    assert len(diag.message) <= 100
    assert (diag.message.rstrip("…") in value) == diag.message.endswith("…")   # the whole message when cut
    noqa_line = text.splitlines().index("    return x  # noqa: TRI001")
    on_code = await hover(noqa_line, text.splitlines()[noqa_line].index("TRI001") + 2)
    assert on_code.contents.value.startswith("**TRI001 libdevice-tanh**")
    assert len(on_code.contents.value) < 1500
    assert await hover(noqa_line, 2) is None                 # plain indentation: nothing
    # the import line names libdevice itself, not a call: no page; a tanh call in a kernel
    # with no finding (inside a noqa) still gets the TRI001 page through the API index
    quiet = text.replace("libdevice.tanh(x))", "libdevice.tanh(x))  # noqa")
    change_doc(shared, uri, quiet, 2)
    api = await hover(TANH_LINE, quiet.splitlines()[TANH_LINE].index("tanh") + 1)
    assert api is not None and api.contents.value.startswith("`triton.language.extra.libdevice.tanh`")
    assert "TRI001 libdevice-tanh" in api.contents.value


async def test_code_lens_above_each_kernel(shared, workspace):
    uri = (workspace / "kernel.py").as_uri()
    open_doc(shared, uri, KERNEL)
    lenses = await shared.text_document_code_lens_async(types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    assert [lens.command.title for lens in lenses] == ["Benchmark", "Profile"]
    assert lenses[0].range.start.line == 5            # the @triton.jit line
    assert list(lenses[0].command.arguments) == [uri, "gelu_kernel"]


async def test_requests_about_unknown_or_closed_documents_get_empty_answers(shared, workspace):
    for uri in ("file:///no/such/file.py", "untitled:Untitled-1", "weird:%%%", (workspace / "kernel.py").as_uri()):
        doc = types.TextDocumentIdentifier(uri=uri)
        assert await shared.text_document_hover_async(types.HoverParams(text_document=doc, position=_pos(0, 0))) is None
        assert list(await shared.text_document_code_lens_async(types.CodeLensParams(text_document=doc))) == []
        assert list(await _actions(shared, uri, _range(0, 0))) == []


