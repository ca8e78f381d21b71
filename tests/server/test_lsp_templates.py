""""Insert template ..." code actions: the plumbing only, with a stand-in templates package
(`fake_templates/sitecustomize.py` installs it in the server process); the real templates
package is tested by its own tests."""
from __future__ import annotations

import os

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.server.conftest import HERE, SERVER, install_client_helpers, open_doc, start, wait_diagnostics

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE / "fake_templates"), os.environ.get("PYTHONPATH", "")])}

TEXT = '''import triton
import triton.language as tl


@triton.jit
def rms_norm_fwd(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs))


def unrelated(x):
    return x

'''


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, server_env=ENV))
async def tclient(lsp_client: LanguageClient):
    install_client_helpers(lsp_client)
    yield
    await lsp_client.shutdown_session()


async def _templates(client, uri, line):
    pos = types.Position(line=line, character=0)
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=types.Range(start=pos, end=pos),
        context=types.CodeActionContext(diagnostics=[], only=["refactor"])))
    return [a for a in actions or [] if a.title.startswith("Insert template")]


async def test_templates_that_fit_the_place_are_offered_and_resolved(tclient, workspace):
    await start(tclient, workspace)
    uri = (workspace / "t.py").as_uri()
    open_doc(tclient, uri, TEXT)
    await wait_diagnostics(tclient, uri)
    inside = await _templates(tclient, uri, 6)          # in rms_norm_fwd: the rms_norm template only
    assert [a.title for a in inside] == ["Insert template: RMSNorm forward"]
    blank = await _templates(tclient, uri, 13)          # a blank line at module level: all of them
    assert [a.title for a in blank] == ["Insert template: RMSNorm forward", "Insert template: SwiGLU"]
    assert await _templates(tclient, uri, 11) == []     # inside an unrelated function: none
    resolved = await tclient.code_action_resolve_async(blank[1])
    (edit,) = resolved.edit.changes[uri]
    assert edit.new_text == "# template swiglu: kernel, launcher, reference\n"
    assert edit.range.start == types.Position(line=13, character=0)
