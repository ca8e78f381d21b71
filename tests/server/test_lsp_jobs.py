"""Long jobs through workspace/executeCommand, end to end: progress, result and code lens,
cancel, timeout, crash / out-of-memory / garbage output, trust, the missing-engine message.

The child is `fake_engine.py` (see its docstring) except in the missing-engine test: these
tests check the server's plumbing, never a measurement.
"""
from __future__ import annotations

import asyncio
import importlib.util
import sys
import time
from pathlib import Path

import pytest
from lsprotocol import types

import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.server.conftest import FAKE_ENGINE, KERNEL, SERVER, capabilities, install_client_helpers, open_doc, start
from tests.server.test_child_process import _alive

FAKE = {"interpreter": [sys.executable, str(FAKE_ENGINE)], "trusted": True}


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), scope="module")
async def jobs(lsp_client: LanguageClient, tmp_path_factory):
    """One server for the tests that all run the stand-in engine (each with its own file)."""
    install_client_helpers(lsp_client)
    root = tmp_path_factory.mktemp("jobs")
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=capabilities(), root_uri=root.as_uri(), initialization_options=FAKE,
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)]))
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), 10)


async def run_command(client, command, uri, kernel, token=None):
    if token is not None:
        client.progress_reports.setdefault(token, [])   # a client-chosen token needs no create
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=command, arguments=[uri, kernel], work_done_token=token))


@pytest.mark.asyncio(loop_scope="module")
async def test_benchmark_reports_progress_and_its_summary_reaches_the_code_lens(jobs, workspace):
    path = workspace / "kernel.py"
    uri = path.as_uri()
    open_doc(jobs, uri, KERNEL)
    tokens_before, refreshes_before = set(jobs.progress_reports), jobs.lens_refreshes
    result = await run_command(jobs, "tritonify.benchmark", uri, "gelu_kernel")
    assert result["ok"] is True and result["summary"] == "0.41 ms, 3.1 TB/s, 1.8x eager"
    assert result["result"]["argv"] == ["-m", "tritonify", "bench", f"{path}::gelu_kernel", "--format", "json"]
    (token,) = set(jobs.progress_reports) - tokens_before     # the server created one token
    reports = jobs.progress_reports[token]
    kinds = [type(r).__name__ for r in reports]
    assert kinds[0] == "WorkDoneProgressBegin" and kinds[-1] == "WorkDoneProgressEnd"
    assert reports[0].cancellable is True
    assert [r.percentage for r in reports if isinstance(r, types.WorkDoneProgressReport)] == [10, 50, 90]
    lenses = await jobs.text_document_code_lens_async(types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    assert [lens.command.title for lens in lenses] == ["Benchmark", "Profile", "bench: 0.41 ms, 3.1 TB/s, 1.8x eager"]
    assert jobs.lens_refreshes == refreshes_before + 1     # the client was told to ask again
    shown = await jobs.workspace_execute_command_async(types.ExecuteCommandParams(
        command="tritonify.showResult", arguments=[uri, "gelu_kernel", "benchmark"]))
    assert shown["summary"] == "0.41 ms, 3.1 TB/s, 1.8x eager"


@pytest.mark.asyncio(loop_scope="module")
async def test_profile_uses_the_clients_token(jobs, workspace):
    uri = (workspace / "kernel.py").as_uri()
    result = await run_command(jobs, "tritonify.profile", uri, "gelu_kernel", token="my-token")
    assert result["ok"] and result["summary"] == "memory-bound, 92% of DRAM peak"
    assert isinstance(jobs.progress_reports["my-token"][-1], types.WorkDoneProgressEnd)


@pytest.mark.asyncio(loop_scope="module")
async def test_cancel_through_the_progress_token_kills_the_process_group(jobs, workspace):
    path = workspace / "kernel.py"
    uri = path.as_uri()
    pids = Path(str(path) + ".pids")
    job = asyncio.ensure_future(run_command(jobs, "tritonify.benchmark", uri, "hang", token="hang-token"))
    for _ in range(200):
        if pids.exists():
            break
        await asyncio.sleep(0.02)
    parent, child = map(int, pids.read_text().split())
    # the server keeps answering while the job runs
    started = time.monotonic()
    await jobs.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=0)))
    assert time.monotonic() - started < 1.0
    jobs.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token="hang-token"))
    result = await asyncio.wait_for(job, 10)
    assert result["ok"] is False and result["status"] == "cancelled"
    deadline = time.monotonic() + 3
    while (_alive(parent) or _alive(child)) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert not _alive(parent) and not _alive(child)


@pytest.mark.parametrize("kernel,status,words", [
    ("crash", "crashed", "SIGSEGV"),
    ("oom", "out-of-memory", "out-of-memory killer"),
    ("garbage", "bad-output", "gave no JSON result"),
    ("usage", "missing-engine", "benchmark engine not installed in"),
])
@pytest.mark.asyncio(loop_scope="module")
async def test_bad_endings_give_clear_messages_and_the_server_carries_on(jobs, workspace, kernel, status, words):
    uri = (workspace / "kernel.py").as_uri()
    result = await run_command(jobs, "tritonify.benchmark", uri, kernel)
    assert result["ok"] is False and result["status"] == status and words in result["message"]
    assert result["summary"] is None and result["result"] is None      # never a made-up result
    assert any(words in m.message for m in jobs.messages)              # the user is told
    ok = await run_command(jobs, "tritonify.benchmark", uri, "gelu_kernel")
    assert ok["ok"] is True


async def test_a_hang_ends_at_the_timeout(client, workspace):
    await start(client, workspace, options={**FAKE, "jobs": {"timeoutSeconds": 1}})
    uri = (workspace / "kernel.py").as_uri()
    started = time.monotonic()
    result = await run_command(client, "tritonify.profile", uri, "hang")
    assert result["status"] == "timeout" and "within 1 s" in result["message"]
    assert time.monotonic() - started < 8


async def test_benchmark_settings_reach_the_bench_command_line(client, workspace):
    await start(client, workspace, options={**FAKE, "benchmark": {"baselines": "eager,liger", "shapes": "4096x4096, 64x64",
                                                                  "timeout": 45}})
    path = workspace / "kernel.py"
    result = await run_command(client, "tritonify.benchmark", path.as_uri(), "gelu_kernel")
    assert result["result"]["argv"] == ["-m", "tritonify", "bench", f"{path}::gelu_kernel", "--format", "json",
                                        "--baselines", "eager,liger", "--shapes", "4096x4096,64x64", "--timeout", "45"]
    profiled = await run_command(client, "tritonify.profile", path.as_uri(), "gelu_kernel")
    assert profiled["result"]["argv"][-2:] == ["--format", "json"]


async def test_untrusted_workspace_refuses_to_run_anything(client, workspace):
    await start(client, workspace, options={**FAKE, "trusted": False})
    path = workspace / "kernel.py"
    result = await run_command(client, "tritonify.benchmark", path.as_uri(), "gelu_kernel")
    assert result["status"] == "untrusted" and "not trusted" in result["message"]
    assert not Path(str(path) + ".ran").exists()


@pytest.mark.parametrize("client_name", ["Visual Studio Code", "Neovim", "helix", None])
async def test_a_client_that_does_not_state_trust_is_untrusted(client, workspace, client_name):
    """Trust defaults to false for every client (it was true for any client but VS Code)."""
    info = types.ClientInfo(name=client_name, version="1.0") if client_name else None
    await client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=workspace.as_uri(), client_info=info,
        initialization_options={"interpreter": FAKE["interpreter"]}))
    path = workspace / "kernel.py"
    result = await run_command(client, "tritonify.benchmark", path.as_uri(), "gelu_kernel")
    assert result["status"] == "untrusted" and '"trusted": true' in result["message"]
    assert "init_options" in result["message"] and "tritonify.trusted" not in result["message"]
    assert not Path(str(path) + ".ran").exists()


async def test_a_client_that_sends_its_workspace_trust_is_told_to_trust_the_workspace(client, workspace):
    """The VS Code extension's `trusted` is its workspace trust (client.statesWorkspaceTrust):
    the refusal names the editor's command, not a setting."""
    await start(client, workspace, options={**FAKE, "trusted": False, "client": {"statesWorkspaceTrust": True}})
    path = workspace / "kernel.py"
    result = await run_command(client, "tritonify.benchmark", path.as_uri(), "gelu_kernel")
    assert result["status"] == "untrusted" and result["message"].endswith("(trust the workspace: Manage Workspace Trust)")
    assert not Path(str(path) + ".ran").exists()


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("arguments", [[], ["file:///x.py"], [1, 2], ["file:///x.py", "not an identifier"], [None, "k"]])
async def test_bad_arguments_are_answered(jobs, workspace, arguments):
    result = await jobs.workspace_execute_command_async(types.ExecuteCommandParams(command="tritonify.benchmark", arguments=arguments))
    assert result["ok"] is False and result["status"] == "bad-arguments"


@pytest.mark.asyncio(loop_scope="module")
async def test_unsaved_documents_cannot_be_benchmarked(jobs, workspace):
    result = await run_command(jobs, "tritonify.benchmark", "untitled:Untitled-1", "k")
    assert result["status"] == "no-file"


def _engine_case(command: str, sub: str, engine: str):
    landed = importlib.util.find_spec(f"tritonify.cli.commands.{sub}") is not None
    return pytest.param(command, engine, id=sub, marks=pytest.mark.skipif(
        landed, reason=f"`tritonify {sub}` has landed; this checks the message given without it"))


@pytest.mark.parametrize("command,engine", [_engine_case("tritonify.benchmark", "bench", "benchmark engine"),
                                            _engine_case("tritonify.profile", "profile", "profile engine")])
async def test_without_the_engine_the_message_says_what_is_missing(client, workspace, command, engine):
    await start(client, workspace)        # the default interpreter: the one running the server
    result = await run_command(client, command, (workspace / "kernel.py").as_uri(), "gelu_kernel")
    assert result["ok"] is False and result["status"] == "missing-engine"
    assert result["message"].startswith(f"{engine} not installed in {sys.executable}")
