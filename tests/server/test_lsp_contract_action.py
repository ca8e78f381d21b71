""""Write a benchmark contract for KERNEL": offered inside a kernel that has no contract, as a new
`<stem>_contract.py` (CreateFile + its text), to a client that can create files; never over a file
that exists, never for a kernel that has a contract."""
from __future__ import annotations

import shutil
from pathlib import Path

from lsprotocol import types

from tests.server.conftest import KERNEL, apply_text_edits, open_doc, start, wait_diagnostics

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "bench"


async def _actions(client, uri, line, only=None, character=4):
    pos = types.Position(line=line, character=character)
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=types.Range(start=pos, end=pos),
        context=types.CodeActionContext(diagnostics=[], only=only)))
    return [a for a in actions or [] if isinstance(a, types.CodeAction)]


async def _contract_actions(client, uri, line, only=None):
    """The contract action as the Ctrl+. menu gets it (VS Code lists quickfix kinds there)."""
    found = [a for a in await _actions(client, uri, line, only) if a.title.startswith("Write a benchmark contract")]
    return [a for a in found if a.kind == "quickfix.tritonify.writeContract"]


async def test_a_kernel_without_a_contract_gets_one_written_as_a_new_file(client, workspace):
    await start(client, workspace, create_files=True)
    path = workspace / "kernel.py"
    uri = path.as_uri()
    open_doc(client, uri, KERNEL)
    await wait_diagnostics(client, uri)
    (action,) = await _contract_actions(client, uri, 7)
    assert action.title == "Write a benchmark contract for gelu_kernel (kernel_contract.py)"
    create, text_edit = action.edit.document_changes
    contract_uri = (workspace / "kernel_contract.py").as_uri()
    assert isinstance(create, types.CreateFile) and create.uri == contract_uri and create.options.ignore_if_exists
    assert text_edit.text_document.uri == contract_uri
    text = text_edit.edits[0].new_text
    compile(text, "kernel_contract.py", "exec")                         # valid Python
    assert "kernel='gelu_kernel'" in text and "from kernel import" in text and "Contract(" in text
    # the same action under Source Action, and only there when that is asked
    source = [a for a in await _actions(client, uri, 7, only=["source"]) if a.title.startswith("Write a benchmark")]
    assert [a.kind for a in source] == ["source.tritonify.runKernel"] and source[0].edit == action.edit
    assert [a.kind for a in await _contract_actions(client, uri, 7, only=["quickfix"])] == ["quickfix.tritonify.writeContract"]
    assert not await _contract_actions(client, uri, 14)                 # outside the kernel: nothing
    (workspace / "kernel_contract.py").write_text("# the user's own\n")
    assert not await _contract_actions(client, uri, 7)                  # never over an existing file


async def test_not_offered_for_a_kernel_that_has_a_contract(client, tmp_path):
    for name in ("rmsnorm.py", "rmsnorm_contract.py"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    await start(client, tmp_path, create_files=True)
    uri = (tmp_path / "rmsnorm.py").as_uri()
    open_doc(client, uri, (tmp_path / "rmsnorm.py").read_text())
    await wait_diagnostics(client, uri)
    assert not await _contract_actions(client, uri, 20)


async def test_not_offered_to_a_client_that_cannot_create_files(client, workspace):
    await start(client, workspace)
    uri = (workspace / "kernel.py").as_uri()
    open_doc(client, uri, KERNEL)
    await wait_diagnostics(client, uri)
    assert not await _contract_actions(client, uri, 7)


async def test_fix_all_is_in_the_ctrl_dot_menu_on_a_line_with_a_fix(client, workspace):
    await start(client, workspace)
    uri = (workspace / "kernel.py").as_uri()
    open_doc(client, uri, KERNEL)
    diagnostics = await wait_diagnostics(client, uri)
    tanh = next(d for d in diagnostics if d.code == "TRI001")
    here = await _actions(client, uri, tanh.range.start.line, only=["quickfix"], character=tanh.range.start.character)
    fix_all = [a for a in here if a.kind == "quickfix.tritonify.fixAll"]
    assert [a.title for a in fix_all] == ["Fix all Tritonify findings (safe fixes)"]
    resolved = await client.code_action_resolve_async(fix_all[0])
    (edits,) = resolved.edit.changes.values()
    assert edits and "libdevice.tanh" not in apply_text_edits(KERNEL, edits)
    # not on a line without a fix (no light bulb everywhere); Source Action still has it
    assert not [a for a in await _actions(client, uri, 0, only=["quickfix"], character=0) if "fixAll" in (a.kind or "")]
    assert [a.kind for a in await _actions(client, uri, 0, only=["source.fixAll"], character=0)] == ["source.fixAll.tritonify"]
