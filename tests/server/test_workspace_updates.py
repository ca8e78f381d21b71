"""The language server's worker keeps the workspace index: a document's text, as the editor
holds it, is what other files importing it see (didOpen/didChange/didSave lint it)."""
from __future__ import annotations

import asyncio
import textwrap

from tritonify.diagnostics.settings import Settings
from tritonify.server.lint_worker import LintWorker

COMPAT = "import triton\nimport triton.language as tl\nfrom triton.language.extra import libdevice\njit = triton.jit\n"
KERNEL = textwrap.dedent("""
    from .compat import jit, libdevice, tl


    @jit
    def k(x_ptr, n, ITERS: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        for _ in range(ITERS):
            x = libdevice.tanh(x)
        tl.store(x_ptr + offs, x, mask=offs < n)
""")


def test_worker_sees_an_edited_module_that_a_kernel_imports(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "compat.py").write_text(COMPAT)
    (pkg / "k.py").write_text(KERNEL)
    settings = Settings(select=("TRI001",))

    async def main():
        worker = LintWorker()
        try:
            first = await worker.lint(KERNEL, str(pkg / "k.py"), settings, 60)
            # the user opens compat.py and makes `jit` a plain function (not saved)
            await worker.lint("def jit(f):\n    return f\n", str(pkg / "compat.py"), settings, 60)
            second = await worker.lint(KERNEL, str(pkg / "k.py"), settings, 60)
            # and undoes it
            await worker.lint(COMPAT, str(pkg / "compat.py"), settings, 60)
            third = await worker.lint(KERNEL, str(pkg / "k.py"), settings, 60)
        finally:
            await worker.aclose()
        return first, second, third

    first, second, third = asyncio.run(main())
    assert [k.name for k in first[1]] == ["k"] and [f.code for f in first[0].findings] == ["TRI001"]
    assert second[1] == [] and second[0].findings == []
    assert [k.name for k in third[1]] == ["k"] and [f.code for f in third[0].findings] == ["TRI001"]


async def test_editing_a_module_relints_the_open_files_that_import_it(client, tmp_path):
    from tests.server.conftest import change_doc, codes, open_doc, start, wait_diagnostics

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "compat.py").write_text(COMPAT)
    (pkg / "k.py").write_text(KERNEL)
    await start(client, tmp_path, options={"tritonify": {"lint": {"select": ["TRI001"]}}})
    kernel_uri, compat_uri = (pkg / "k.py").as_uri(), (pkg / "compat.py").as_uri()
    open_doc(client, kernel_uri, KERNEL)
    assert codes(await wait_diagnostics(client, kernel_uri, version=1)) == ["TRI001"]
    open_doc(client, compat_uri, COMPAT)
    await wait_diagnostics(client, compat_uri, version=1)
    # `jit` stops being Triton's in the editor (not saved): k.py has no kernel any more
    mark = len(client.published)
    change_doc(client, compat_uri, COMPAT.replace("jit = triton.jit", "def jit(f):\n    return f"), 2)
    assert codes(await wait_diagnostics(client, kernel_uri, after=mark)) == []
    # a body-only edit of compat.py does not make the server lint k.py again
    mark = len(client.published)
    change_doc(client, compat_uri, COMPAT.replace("jit = triton.jit", "def jit(f):\n    return f  # x"), 3)
    await wait_diagnostics(client, compat_uri, version=3, after=mark)
    await asyncio.sleep(0.5)
    assert [p for p in client.published[mark:] if p.uri == kernel_uri] == []
    # undone: the kernel and its finding are back
    mark = len(client.published)
    change_doc(client, compat_uri, COMPAT, 4)
    assert codes(await wait_diagnostics(client, kernel_uri, after=mark)) == ["TRI001"]
