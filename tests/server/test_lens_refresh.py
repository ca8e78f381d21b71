"""Code lenses answered before any lint of the document had ended come back by themselves.

A code lens request that comes while a document's first lint is still running (a slow first lint
on a loaded machine, or a version superseded while the request waited) is answered without
lenses; VS Code asks again only on the next edit, so the Benchmark/Profile lenses stayed away
until the user typed (seen in the real editor at load 4-6). The server now asks the client to
request them again (workspace/codeLens/refresh) once a lint of the document is published.
"""
from __future__ import annotations

import asyncio

from lsprotocol import types

from tests.server.conftest import KERNEL, change_doc, open_doc, start, wait_diagnostics

KERNELS = 80   # enough kernels that the first lint outlasts the request's typing pause


def _many_kernels() -> str:
    head, _, body = KERNEL.partition("@triton.jit")
    return head + "".join("@triton.jit" + body.replace("gelu_kernel", f"gelu_kernel_{i}") + "\n\n"
                          for i in range(KERNELS))


async def test_lenses_answered_before_the_first_lint_are_asked_for_again(client, workspace):
    await start(client, workspace)
    uri = (workspace / "kernel.py").as_uri()
    text = _many_kernels()
    open_doc(client, uri, text)
    # a key, the lenses asked for (the server waits for typing to pause), and another key within
    # that pause: the version the request was for is gone, and no lint of the document has ended
    change_doc(client, uri, text + "\n", 2)
    request = asyncio.ensure_future(client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))))
    await asyncio.sleep(0.02)
    change_doc(client, uri, text + "\n\n", 3)
    refreshes = client.lens_refreshes
    assert list(await request) == []
    await wait_diagnostics(client, uri, version=3, timeout=60)
    for _ in range(200):
        if client.lens_refreshes > refreshes:
            break
        await asyncio.sleep(0.05)
    assert client.lens_refreshes == refreshes + 1
    # asked again, the lenses are there
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    assert sum(lens.command.title == "Benchmark" for lens in lenses) == KERNELS


async def test_lenses_answered_with_an_analysis_owe_nothing(client, workspace):
    await start(client, workspace)
    uri = (workspace / "kernel.py").as_uri()
    open_doc(client, uri, KERNEL)
    await wait_diagnostics(client, uri, version=1)
    refreshes = client.lens_refreshes
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    assert [lens.command.title for lens in lenses] == ["Benchmark", "Profile"]
    change_doc(client, uri, KERNEL + "\n", 2)
    await wait_diagnostics(client, uri, version=2)
    await asyncio.sleep(0.3)
    assert client.lens_refreshes == refreshes   # no refresh per edit
