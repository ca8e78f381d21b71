"""The real "Insert template" code action, end to end through the language server: every template
is offered on a blank module-level line, and resolving it gives edits that merge the imports
(never duplicating one) and insert the template, as text or as a snippet where the client takes one."""
from __future__ import annotations

import ast

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient
from tritonify.kernels.templates import list_templates

from tests.server.conftest import (
    SERVER,
    apply_text_edits,
    install_client_helpers,
    open_doc,
    wait_diagnostics,
)

TEXT = '''"""A model file."""
import torch
import triton.language as tl


def model(x):
    return torch.relu(x)

'''
BLANK_LINE = 8  # 0-based: the empty line after model()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient):
    install_client_helpers(lsp_client)
    yield
    await lsp_client.shutdown_session()


async def _start(client: LanguageClient, root, *, snippets: bool) -> None:
    caps = types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(workspace_edit=types.WorkspaceEditClientCapabilities(
            document_changes=snippets, snippet_edit_support=snippets)),
        text_document=types.TextDocumentClientCapabilities(code_action=types.CodeActionClientCapabilities(
            resolve_support=types.ClientCodeActionResolveOptions(properties=["edit"]))))
    await client.initialize_session(types.InitializeParams(capabilities=caps, root_uri=root.as_uri()))


async def _template_actions(client: LanguageClient, uri: str, line: int):
    pos = types.Position(line=line, character=0)
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=types.Range(start=pos, end=pos),
        context=types.CodeActionContext(diagnostics=[], only=["refactor"])))
    return [a for a in actions or [] if a.title.startswith("Insert template")]


async def test_every_template_is_inserted_by_its_code_action(client, tmp_path):
    await _start(client, tmp_path, snippets=False)
    uri = (tmp_path / "model.py").as_uri()
    open_doc(client, uri, TEXT)
    await wait_diagnostics(client, uri)
    actions = await _template_actions(client, uri, BLANK_LINE)
    assert [a.title for a in actions] == [f"Insert template: {t.title}" for t in list_templates()]
    for action, template in zip(actions, list_templates()):
        resolved = await client.code_action_resolve_async(action)
        edits = resolved.edit.changes[uri]
        out = apply_text_edits(TEXT, edits)
        tree = ast.parse(out)
        imports = [ast.unparse(s) for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
        assert imports.count("import torch") == 1 and imports.count("import triton.language as tl") == 1
        assert "import triton" in imports and len(imports) == len(set(imports))
        defined = {s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.ClassDef))}
        assert {template.name, f"{template.name}_reference", "model"} <= defined


async def test_a_snippet_capable_client_gets_a_snippet_edit(client, tmp_path):
    await _start(client, tmp_path, snippets=True)
    uri = (tmp_path / "model.py").as_uri()
    open_doc(client, uri, TEXT)
    await wait_diagnostics(client, uri)
    action = next(a for a in await _template_actions(client, uri, BLANK_LINE) if "RMSNorm (forward" in a.title)
    resolved = await client.code_action_resolve_async(action)
    (doc_edit,) = resolved.edit.document_changes
    *imports, body = doc_edit.edits
    assert all(isinstance(e, types.TextEdit) for e in imports)
    assert isinstance(body, types.SnippetTextEdit) and "${1:rms_norm}" in body.snippet.value


MOE_TEXT = '''"""A model file with a loop over experts."""
import torch
from torch import nn


class SparseMoeBlock(nn.Module):
    def forward(self, x, ids, weights):
        out = torch.zeros_like(x)
        for e in range(len(self.experts)):
            rows, slot = torch.where(ids == e)
            out.index_add_(0, rows, self.experts[e](x[rows]) * weights[rows, slot, None])
        return out
'''
MOE_LOOP_LINE = 8  # 0-based: the `for e in range(...)` line


async def test_the_moe_template_is_offered_inside_an_moe_block_and_inserted_above_it(client, tmp_path):
    """Inside a class or function whose name mentions MoE (where TRI037's loop over experts lives), the
    MoE template is the one "Insert template" offers; the body goes above the class, at module level."""
    await _start(client, tmp_path, snippets=False)
    uri = (tmp_path / "moe_model.py").as_uri()
    open_doc(client, uri, MOE_TEXT)
    await wait_diagnostics(client, uri)
    actions = await _template_actions(client, uri, MOE_LOOP_LINE)
    moe = next(t for t in list_templates() if t.name == "moe")
    assert [a.title for a in actions] == [f"Insert template: {moe.title}"]
    resolved = await client.code_action_resolve_async(actions[0])
    out = apply_text_edits(MOE_TEXT, resolved.edit.changes[uri])
    tree = ast.parse(out)
    names = [s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.ClassDef))]
    assert {"moe", "moe_experts", "moe_reference"} <= set(names)
    assert names.index("moe_experts") < names.index("SparseMoeBlock")


EXPERTS_TEXT = '''"""Experts run one by one, in a function whose name does not say MoE."""
import torch


def experts_forward(x, ids, w1, w2):
    out = torch.zeros_like(x)
    for e in range(w1.shape[0]):
        rows, slot = torch.where(ids == e)
        out.index_add_(0, rows, (x[rows] @ w1[e].t()).relu() @ w2[e].t())
    return out
'''


async def test_tri037s_finding_offers_the_moe_template_as_a_quick_fix(client, tmp_path):
    """Where TRI037 reports a loop over experts, the quick-fix menu on its diagnostic (only "quickfix",
    as Ctrl+. on the squiggle asks) offers "Insert template" for the MoE template, even in a function
    whose name does not mention MoE (where the refactoring menu offers none); resolving it inserts the
    template above the function, the result parses and still holds the user's function."""
    (tmp_path / "pyproject.toml").write_text('[tool.tritonify]\nextend-select = ["TRI037"]\n')
    await _start(client, tmp_path, snippets=False)
    uri = (tmp_path / "experts.py").as_uri()
    open_doc(client, uri, EXPERTS_TEXT)
    diagnostics = await wait_diagnostics(client, uri)
    (diag,) = [d for d in diagnostics if d.code == "TRI037"]
    assert diag.range.start.line == 6
    assert await _template_actions(client, uri, 6) == [], "no MoE name here: the refactoring menu offers none"
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=diag.range,
        context=types.CodeActionContext(diagnostics=[diag], only=[types.CodeActionKind.QuickFix])))
    moe = next(t for t in list_templates() if t.name == "moe")
    (action,) = [a for a in actions if "Insert template" in a.title]
    assert action.title == f"TRI037: Insert template: {moe.title}" and action.kind == types.CodeActionKind.QuickFix
    assert [d.code for d in action.diagnostics] == ["TRI037"]
    resolved = await client.code_action_resolve_async(action)
    out = apply_text_edits(EXPERTS_TEXT, resolved.edit.changes[uri])
    tree = ast.parse(out)
    names = [s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.ClassDef))]
    assert {"moe", "moe_experts", "moe_reference"} <= set(names)
    assert names.index("moe_experts") < names.index("experts_forward")
    imports = [ast.unparse(s) for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
    assert imports.count("import torch") == 1 and "import triton" in imports
