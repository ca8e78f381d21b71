"""On a GPU machine: Benchmark and Profile run from the kernel's code lenses, as the editor runs them.

The client asks for the code lenses of the example kernel and executes each lens's own command
with its own arguments (what VS Code does on a click), against the real engine: `tritonify bench`
on the GPU, and `tritonify profile` under ncu through the kernel's benchmark contract (no command
given, as from the lens). Then the lenses show both results. Skipped without CUDA (and, for the
profile, without ncu). Set TRITONIFY_GPU_RESULTS=DIR to keep what the server answered.
"""
from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest
from lsprotocol import types

from tests.server.conftest import open_doc, start
from tritonify.tools.ncu.ncu_tool import find_ncu

torch = pytest.importorskip("torch")

pytestmark = [pytest.mark.gpu, pytest.mark.timeout(900),
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "bench"


async def lenses_of(client, uri):
    return await client.text_document_code_lens_async(types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri)))


async def click(client, lens):
    """What the editor does when a lens is clicked: execute its command with its arguments."""
    return await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=lens.command.command, arguments=lens.command.arguments)), 800)


async def test_benchmark_and_profile_from_the_code_lens(client, tmp_path):
    if os.environ.get("TRITON_INTERPRET") == "1":
        pytest.skip("TRITON_INTERPRET=1 would run the kernel on the CPU")
    for name in ("rmsnorm.py", "rmsnorm_contract.py"):
        shutil.copy(EXAMPLE / name, tmp_path / name)
    kernel_file = tmp_path / "rmsnorm.py"
    uri = kernel_file.as_uri()
    await start(client, tmp_path, {"trusted": True, "jobs": {"timeoutSeconds": 780}})
    open_doc(client, uri, kernel_file.read_text())
    titles = {lens.command.title: lens for lens in await lenses_of(client, uri)}
    assert {"Benchmark", "Profile"} <= set(titles), titles

    answers = {}
    bench = answers["benchmark"] = await click(client, titles["Benchmark"])
    assert bench["ok"] is True, bench["message"]
    result = bench["result"]
    assert result["status"] == "ok" and result["gpu_measurement"] is True
    shapes = result["shapes"]
    assert shapes and all(s["results"]["kernel"]["correct"] is True for s in shapes)   # checked against float64
    assert all(s["results"]["kernel"]["timing"]["p50_ms"] > 0 for s in shapes)
    assert "ms" in bench["summary"]

    if find_ncu() is not None:
        prof = answers["profile"] = await click(client, titles["Profile"])
        assert prof["ok"] is True, prof["message"]
        doc = prof["result"]
        assert doc["schema"] == "tritonify.profile/1" and doc["status"] == "ok"
        (launch,) = doc["launches"]                      # the launcher's measured call only
        assert launch["kernel"] == "rmsnorm_kernel" and Path(doc["report"]).is_file()
        assert Path(launch["source_file"] or "").name == "rmsnorm.py"     # costs mapped to the kernel's lines
        assert prof["summary"].startswith(f"{launch['duration_ns'] / 1e6:.3f} ms") if launch.get("duration_ns") else prof["summary"]

    after = [lens.command.title for lens in await lenses_of(client, uri)]
    assert any(t.startswith("bench: ") for t in after), after
    if "profile" in answers:
        assert any(t.startswith("profile: ") for t in after), after

    keep = os.environ.get("TRITONIFY_GPU_RESULTS")
    if keep:
        Path(keep, "code_lens_jobs.json").write_text(json.dumps({"lenses_after": after, **answers}, indent=1, default=str))
