"""Compile-time insight through the language server, with real compiles (triton's compiler and
its bundled ptxas, for sm_90, no GPU needed): lenses per autotune config with the summary, CMP-K
on the spilling config next to the lint's TRI001, the SASS / PTX behind a lens, a stale result
dropped, compiling only on open and save, nothing compiled in an untrusted workspace, and one
log line (no diagnostics, no crash) when the interpreter has no triton.

The compiles are cached per test session in a temporary folder (TRITONIFY_CACHE_DIR,
TRITON_CACHE_DIR), set before any server of this module starts.
"""
from __future__ import annotations

import asyncio
import os
import re
import stat
import sys
import textwrap
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.server.conftest import (
    SERVER,
    capabilities,
    change_doc,
    install_client_helpers,
    open_doc,
    start,
    wait_diagnostics,
)

pytest.importorskip("triton")
EXACT = __import__("triton").__version__ == "3.9.0"   # figures read from triton 3.9.0's ptxas (tests/compile)

KERNELS = textwrap.dedent('''\
    import triton
    import triton.language as tl
    from triton.language.extra import libdevice


    @triton.autotune(
        configs=[
            triton.Config({"BLOCK": 4096}, num_warps=4),  # CLEAN
            triton.Config({"BLOCK": 65536}, num_warps=32),  # SPILLS
        ],
        key=["n_cols"],
    )
    @triton.jit
    def row_softmax(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
        # a 65536-wide row over 1024 threads caps registers at 64: the second config spills
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols)
        e = tl.exp(x - tl.max(x, 0))
        tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, 0))


    @triton.jit
    def gelu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        for _ in range(4):
            x = 0.5 * x * (1 + libdevice.tanh(x))  # TRI001
        tl.store(y_ptr + offs, x, mask=offs < n)


    def gelu(x, y):
        gelu_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
''')
ON = {"trusted": True, "inspect": {"enabled": True, "target": "sm_90"}}
COMPILE_WAIT_S = 60.0    # a cold compile of the file takes about 3 s here; CI's 2 cores are slower
ABSENT_WAIT_S = 3.0      # how long "nothing came" is watched for, where a cached compile takes < 1 s


def line_of(marker: str, text: str = KERNELS) -> int:
    """0-based line of `text` ending with `# MARKER`."""
    return next(i for i, line in enumerate(text.splitlines()) if line.rstrip().endswith(f"# {marker}"))


def def_line(name: str, text: str = KERNELS) -> int:
    return next(i for i, line in enumerate(text.splitlines()) if line.startswith(f"def {name}("))


@pytest.fixture(scope="module", autouse=True)
def compile_caches(tmp_path_factory):
    """Temporary Triton and Tritonify caches for the servers of this module (they inherit the
    environment), and compile-time insight on by default there."""
    root = tmp_path_factory.mktemp("inspect-caches")
    keys = ("TRITONIFY_CACHE_DIR", "TRITON_CACHE_DIR")
    saved = {k: os.environ.get(k) for k in keys}
    os.environ["TRITONIFY_CACHE_DIR"] = str(root / "tritonify")
    os.environ["TRITON_CACHE_DIR"] = str(root / "triton")
    yield root
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), scope="module")
async def insight(lsp_client: LanguageClient, tmp_path_factory):
    """One trusted server with compile-time insight on, for the tests that each open their own file."""
    install_client_helpers(lsp_client)
    root = tmp_path_factory.mktemp("inspect")
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=capabilities(), root_uri=root.as_uri(), initialization_options=ON,
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)]))
    lsp_client.root = root
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), 10)


def write(root: Path, name: str, text: str = KERNELS) -> str:
    path = root / name
    path.write_text(text)
    return path.as_uri()


async def wait_published(client, uri: str, predicate, timeout: float = COMPILE_WAIT_S):
    """The first publishDiagnostics for `uri` whose diagnostics satisfy `predicate`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        for params in client.published:
            if params.uri == uri and predicate(params.diagnostics):
                return params
        await asyncio.sleep(0.05)
    raise TimeoutError(f"no matching diagnostics for {uri}; got {[(p.version, [d.code for d in p.diagnostics]) for p in client.published if p.uri == uri]}")


async def wait_logged(client, text: str, timeout: float = COMPILE_WAIT_S) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not any(text in m.message for m in client.log_messages):
        if loop.time() > deadline:
            raise TimeoutError(f"nothing logged with {text!r}: {[m.message for m in client.log_messages]}")
        await asyncio.sleep(0.05)


def has(code: str):
    return lambda diagnostics: any(d.code == code for d in diagnostics)


def compiled_codes(client, uri: str) -> set[str]:
    return {d.code for p in client.published if p.uri == uri for d in p.diagnostics if str(d.code).startswith("CMP-")}


async def lenses(client, uri: str) -> list[types.CodeLens]:
    return list(await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))))


def insight_lenses(found: list[types.CodeLens]) -> list[types.CodeLens]:
    return [lens for lens in found if lens.command.title.startswith("sm_") or lens.command.title == "PTX"]


async def inspect(client, uri: str) -> dict:
    """The Inspect lens's command: compile the document's kernels (only this compiles anything)."""
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="tritonify.inspect", arguments=[uri]))


def inspect_lenses(found: list[types.CodeLens]) -> list[types.CodeLens]:
    return [lens for lens in found if lens.command.command == "tritonify.inspect"]


async def show(client, *arguments):
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="tritonify.showAssembly", arguments=list(arguments)))


@pytest.mark.asyncio(loop_scope="module")
async def test_inspect_compiles_and_each_config_gets_a_lens_with_its_summary(insight):
    uri = write(insight.root, "softmax.py")
    open_doc(insight, uri, KERNELS)
    await wait_published(insight, uri, has("TRI001"))
    before = await lenses(insight, uri)
    asked = inspect_lenses(before)   # opening compiles nothing: one Inspect lens per kernel, beside Benchmark's
    assert [lens.range.start.line for lens in asked] == [lens.range.start.line for lens in before
                                                         if lens.command.title == "Benchmark"]
    assert len(asked) == 2 and insight_lenses(before) == []
    assert {lens.command.title for lens in asked} == {"Inspect"} and list(asked[0].command.arguments) == [uri]
    answer = await inspect(insight, uri)
    assert answer["ok"] is True and answer["message"].startswith("compiled 2 of 2 kernel"), answer
    await wait_published(insight, uri, has("CMP-K"))
    found = await lenses(insight, uri)
    assert inspect_lenses(found) == []
    assert [lens.command.title for lens in found[:2]] == ["Benchmark", "Profile"]   # the kernel lenses stay
    by_line = {}
    for lens in insight_lenses(found):
        by_line.setdefault(lens.range.start.line, []).append(lens.command)
    assert sorted(by_line) == [line_of("CLEAN"), line_of("SPILLS"), def_line("gelu_kernel")]
    clean, pointer = by_line[line_of("CLEAN")]
    summary = re.compile(r"sm_90 · (\d+) regs · (no spills|spills \d+/\d+ B) · [\d.]+ (K?B) smem · occupancy [\d.]+% \(\w[\w ]*\)")
    assert summary.fullmatch(clean.title), clean.title
    assert "no spills" in clean.title and pointer.title == "PTX"
    assert clean.command == pointer.command == "tritonify.showAssembly"
    assert list(clean.arguments) == [uri, "row_softmax", 0, "sass"] and list(pointer.arguments) == [uri, "row_softmax", 0, "ptx"]
    spilling = by_line[line_of("SPILLS")][0]
    assert summary.fullmatch(spilling.title) and "spills" in spilling.title and "no spills" not in spilling.title
    assert list(spilling.arguments) == [uri, "row_softmax", 1, "sass"]
    assert "pointers are *fp32" in spilling.tooltip          # the assumptions go in the tooltip
    if EXACT:
        assert clean.title == "sm_90 · 48 regs · no spills · 1 KB smem · occupancy 62.5% (registers)"
        assert spilling.title.startswith("sm_90 · 64 regs · spills 212/216 B")
    # a config's lenses start at its triton.Config(...) call
    first = next(lens for lens in insight_lenses(found) if lens.range.start.line == line_of("CLEAN"))
    assert first.range.start.character == KERNELS.splitlines()[line_of("CLEAN")].index("triton.Config")


@pytest.mark.asyncio(loop_scope="module")
async def test_spilling_config_gets_cmp_k_on_its_line_next_to_the_lint_findings(insight):
    uri = write(insight.root, "spill.py")
    open_doc(insight, uri, KERNELS)
    await inspect(insight, uri)
    # the lint and the compile publish in either order; each publish carries the other's findings
    params = await wait_published(insight, uri, lambda ds: has("CMP-K")(ds) and has("TRI001")(ds))
    k = [d for d in params.diagnostics if d.code == "CMP-K"]
    assert len(k) == 1 and k[0].range.start.line == line_of("SPILLS")
    assert k[0].severity == types.DiagnosticSeverity.Warning and k[0].source == "tritonify"
    assert "num_warps=16" in k[0].data.get("message", k[0].message) and len(k[0].message) <= 100   # whole in the hover
    assert k[0].data["fixes"][0]["title"] == "Use num_warps=16"
    assert k[0].code_description is not None and k[0].code_description.href.endswith("CMP-K.md")
    assert [d.range.start.line for d in params.diagnostics if d.code == "TRI001"] == [line_of("TRI001")]
    assert not [d for d in params.diagnostics if d.range.start.line == line_of("CLEAN")]
    # its fix is a quick fix on that line, like a lint rule's
    actions = await insight.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=k[0].range,
        context=types.CodeActionContext(diagnostics=[k[0]], only=[types.CodeActionKind.QuickFix])))
    fix = [a for a in actions or [] if isinstance(a, types.CodeAction) and a.title.startswith("CMP-K: Use num_warps=16")]
    assert fix and fix[0].edit is not None
    # a relint (an edit) publishes the compile findings again with the lint's
    change_doc(insight, uri, KERNELS + "\n# an edit\n", version=2)
    relinted = await wait_diagnostics(insight, uri, version=2)
    assert {"TRI001", "CMP-K"} <= {d.code for d in relinted}


@pytest.mark.asyncio(loop_scope="module")
async def test_show_assembly_returns_the_sass_and_the_ptx_of_a_config(insight):
    uri = write(insight.root, "asm.py")
    open_doc(insight, uri, KERNELS)
    await inspect(insight, uri)
    await wait_published(insight, uri, has("CMP-K"))
    sass = await show(insight, uri, "row_softmax", 0, "sass")
    assert set(sass) >= {"title", "language", "content"}
    assert sass["title"] == "row_softmax [BLOCK=4096, num_warps=4, num_stages=3] SASS sm_90"
    assert sass["language"] == "plaintext"
    assert re.search(r"^\s+/\*[0-9a-f]{4}\*/\s+\w+", sass["content"], re.MULTILINE)   # /*0010*/  OPCODE ...
    assert "EXIT" in sass["content"] and "LDG" in sass["content"] and "ld.global" not in sass["content"]
    ptx = await show(insight, uri, "row_softmax", 1, "ptx")
    assert ptx["language"] == "ptx" and "BLOCK=65536" in ptx["title"]
    assert ".target sm_90" in ptx["content"] and ".entry row_softmax" in ptx["content"]
    # wrong arguments and unknown kernels are answered with a reason, never a traceback
    assert "error" in await show(insight, uri, "row_softmax", 0, "cubin")
    assert "error" in await show(insight, uri, "row_softmax", 7, "sass")
    assert "no compiled nope" in (await show(insight, uri, "nope", 0, "sass"))["error"]
    assert "error" in await show(insight, uri)


@pytest.mark.asyncio(loop_scope="module")
async def test_once_asked_compiles_on_save_not_on_change_and_drops_a_stale_result(insight):
    # version 1 is a text of its own (its definitions hash differently): its compile is not cached
    text = KERNELS.replace("# a 65536-wide row", "# (stale test) a 65536-wide row")
    uri = write(insight.root, "stale.py", text)
    open_doc(insight, uri, text, version=1)
    asked = asyncio.ensure_future(inspect(insight, uri))
    await asyncio.sleep(0.2)   # the compile of version 1 is under way
    # version 2 is the text the first test compiled: were a change compiled, the cache would
    # publish its result within a second
    change_doc(insight, uri, KERNELS, version=2)      # before the compile of version 1 can end
    await wait_logged(insight, f"{Path(uri[len('file://'):])}: compile result of version 1 dropped (stale)")
    answer = await asked
    assert answer["ok"] is False and "changed while" in answer["error"], answer
    await asyncio.sleep(ABSENT_WAIT_S)
    assert compiled_codes(insight, uri) == set(), "a stale result was published, or a change was compiled"
    assert insight_lenses(await lenses(insight, uri)) == []
    insight.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    params = await wait_published(insight, uri, has("CMP-K"))
    assert params.version == 2
    assert [d.range.start.line for d in params.diagnostics if d.code == "CMP-K"] == [line_of("SPILLS")]
    assert len(insight_lenses(await lenses(insight, uri))) == 6   # (summary, PTX) x (2 configs + gelu_kernel)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient):
    install_client_helpers(lsp_client)
    yield
    try:
        await asyncio.wait_for(lsp_client.shutdown_session(), 10)
    except Exception:
        pass


@pytest.mark.asyncio
async def test_untrusted_workspace_compiles_nothing_and_pushed_settings_cannot_trust_it(client, tmp_path):
    # the text the other tests compiled: a compile here would be a cache hit, published in < 1 s
    uri = write(tmp_path, "kernel.py")
    await start(client, tmp_path, {**ON, "trusted": False})
    open_doc(client, uri, KERNELS)
    await wait_published(client, uri, has("TRI001"))          # linting goes on
    await asyncio.sleep(ABSENT_WAIT_S)
    assert compiled_codes(client, uri) == set()
    assert insight_lenses(await lenses(client, uri)) == []
    assert "error" in await show(client, uri, "row_softmax", 0, "sass")
    assert inspect_lenses(await lenses(client, uri)) == []            # nothing to ask for
    refused = await inspect(client, uri)
    assert refused["ok"] is False and "not trusted" in refused["error"], refused
    said = [m.message for m in client.log_messages if "not trusted" in m.message and "compile" in m.message]
    assert len(said) == 1, said
    # settings pushed later (they may come from a file in the workspace) cannot grant trust: still nothing
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"trusted": True}))
    await wait_logged(client, "ignored \"trusted\": true from the workspace's configuration")
    await asyncio.sleep(ABSENT_WAIT_S)
    assert compiled_codes(client, uri) == set()
    assert insight_lenses(await lenses(client, uri)) == []


@pytest.mark.asyncio
async def test_interpreter_without_triton_gives_one_log_line_no_diagnostics_and_a_lens_saying_so(client, tmp_path):
    # the same Python, started without site-packages: it runs the worker but cannot import triton
    python = tmp_path / "python-without-triton"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" -I -S "$@"\n')
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    uri = write(tmp_path, "kernel.py")
    await start(client, tmp_path, {**ON, "interpreter": [str(python)]})
    open_doc(client, uri, KERNELS)
    await wait_published(client, uri, has("TRI001"))
    answer = await inspect(client, uri)
    assert answer["ok"] is False and f"needs triton in {python}" in answer["error"], answer
    assert answer["actions"] == ["chooseInterpreter", "openLog"]   # the next action, as a job's outcome offers it
    await wait_logged(client, "cannot import triton")
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    await asyncio.sleep(ABSENT_WAIT_S)
    said = [m.message for m in client.log_messages if "cannot import triton" in m.message]
    assert len(said) == 1 and str(python) in said[0] and "tritonify.interpreter" in said[0]
    assert compiled_codes(client, uri) == set()
    # the Inspect lens is there all the same, saying why, and its click chooses another interpreter
    shown = [lens for lens in await lenses(client, uri) if lens.command.title.startswith("Inspect:")]
    assert shown and {lens.command.title for lens in shown} == {f"Inspect: needs triton in {python}"}
    assert {lens.command.command for lens in shown} == {"tritonify.chooseInterpreter"}
    assert not [m for m in client.log_messages if m.type == types.MessageType.Error]


NEEDS_DEFINITIONS = textwrap.dedent('''\
    import triton
    import triton.language as tl

    SCALE = float("0.5")


    @triton.jit
    def scaled(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n)
        tl.store(x_ptr + offs, x * SCALE, mask=offs < n)
''')


@pytest.mark.asyncio
async def test_without_triton_a_kernel_that_needs_its_file_says_needs_triton_too(client, tmp_path):
    """One lens text per cause: a kernel whose source alone does not build ("needs SCALE") says
    "needs triton" like the others when the interpreter has no triton, and no finding shows."""
    python = tmp_path / "python-without-triton"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" -I -S "$@"\n')
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    uri = write(tmp_path, "needs.py", NEEDS_DEFINITIONS)
    await start(client, tmp_path, {**ON, "interpreter": [str(python)]})
    open_doc(client, uri, NEEDS_DEFINITIONS)
    await inspect(client, uri)   # opening compiles nothing: the user asks (issue 31)
    await wait_logged(client, "cannot import triton")
    shown = [lens for lens in await lenses(client, uri) if lens.command.title.startswith("Inspect:")]
    assert {lens.command.title for lens in shown} == {f"Inspect: needs triton in {python}"}
    assert {lens.command.command for lens in shown} == {"tritonify.chooseInterpreter"}
    assert compiled_codes(client, uri) == set()


@pytest.mark.asyncio
async def test_inspect_disabled_compiles_nothing(client, tmp_path):
    uri = write(tmp_path, "kernel.py")
    await start(client, tmp_path, {"trusted": True, "inspect": {"enabled": False, "target": "sm_90"}})
    open_doc(client, uri, KERNELS)
    await wait_published(client, uri, has("TRI001"))
    assert inspect_lenses(await lenses(client, uri)) == []
    refused = await inspect(client, uri)
    assert refused["ok"] is False and "inspect.enabled" in refused["error"], refused
    await asyncio.sleep(ABSENT_WAIT_S)
    assert compiled_codes(client, uri) == set()
    assert insight_lenses(await lenses(client, uri)) == []


@pytest.mark.asyncio
async def test_opening_and_saving_in_a_trusted_workspace_compile_nothing_until_asked(client, tmp_path):
    """Triton's compiler evaluates what a kernel's body calls (code_generator.call_Function calls
    any Python callable), so a compile runs code of the file: opening or saving it must not
    compile it, in a trusted workspace too; the Inspect request does, and after it each save."""
    text = KERNELS   # the text the other tests compiled: a compile here would be a cache hit, published in < 1 s
    uri = write(tmp_path, "kernel.py", text)
    await start(client, tmp_path, ON)
    open_doc(client, uri, text)
    await wait_published(client, uri, has("TRI001"))
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    await asyncio.sleep(ABSENT_WAIT_S)
    assert compiled_codes(client, uri) == set() and insight_lenses(await lenses(client, uri)) == []
    assert not [m for m in client.log_messages if "compiled" in m.message], "opening or saving compiled the file"
    assert len(inspect_lenses(await lenses(client, uri))) == 2
    answer = await inspect(client, uri)
    assert answer["ok"] is True, answer
    await wait_published(client, uri, has("CMP-K"))
    assert insight_lenses(await lenses(client, uri))
