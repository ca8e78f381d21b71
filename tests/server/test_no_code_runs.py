"""Opening, editing, hovering and saving a file runs none of its code, for every client.

The file's module level writes a marker through `os.system` and through an imported workspace
module. With compile-time insight on, each client shape opens it, edits it, hovers, asks for
code lenses, saves and asks for an Inspect (the only thing that compiles); no marker may appear. Where the workspace is trusted the kernels are
still compiled (from their source alone), so the lens shows the registers: the test proves the
insight ran, not only that nothing did. Before the fix, a client that did not state trust was
trusted, and the compile worker ran the file's imports and `_ = os.system(...)`.
"""
from __future__ import annotations

import textwrap
import time

import pytest

from tests.server.rawclient import RawClient

pytest.importorskip("triton")

EVIL_MODULE = textwrap.dedent('''\
    import os
    open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "MARKER_IMPORT"), "w").write("ran")
    VALUE = 1.0
''')

KERNEL_FILE = textwrap.dedent('''\
    import os
    import triton
    import triton.language as tl
    import evil_helpers

    _ = os.system("touch ROOT/MARKER_SYSTEM")
    SCALE = tl.constexpr(2)


    @triton.autotune(configs=[triton.Config({"BLOCK": 1024}, num_warps=4)], key=["n"])
    @triton.jit
    def scaled_copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n)
        tl.store(y_ptr + offs, x * SCALE, mask=offs < n)


    @triton.jit
    def uses_the_module(x_ptr):
        tl.store(x_ptr, evil_helpers.VALUE)
''')

INSPECT_ON = {"enabled": True, "target": "sm_90"}
CLIENTS = {
    # name: (clientInfo.name, initializationOptions, compiles?)
    "states-trust": ("Neovim", {"trusted": True, "inspect": INSPECT_ON}, True),
    "does-not-state-trust": ("Neovim", {"inspect": INSPECT_ON}, False),
    "no-client-name": ("", {"inspect": INSPECT_ON}, False),
    "vscode-trusted": ("Visual Studio Code", {"lint": {"run": "onType"}, "trusted": True, "inspect": INSPECT_ON}, True),
    "vscode-untrusted": ("Visual Studio Code", {"lint": {"run": "onType"}, "trusted": False, "inspect": INSPECT_ON}, False),
}


def _lens_titles(c: RawClient, uri: str) -> list[str]:
    return [lens["command"]["title"] for lens in c.request("textDocument/codeLens", {"textDocument": {"uri": uri}},
                                                              timeout=30)["result"]]


@pytest.mark.parametrize("shape", list(CLIENTS))
def test_opening_editing_and_saving_runs_none_of_the_file(tmp_path, shape, monkeypatch):
    monkeypatch.setenv("TRITONIFY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton-cache"))
    name, options, compiles = CLIENTS[shape]
    root = tmp_path / "ws"
    root.mkdir()
    (root / "evil_helpers.py").write_text(EVIL_MODULE)
    text = KERNEL_FILE.replace("ROOT", str(root))
    path = root / "kernels.py"
    path.write_text(text)
    uri = path.as_uri()
    c = RawClient()
    try:
        c.initialize(root, capabilities={"window": {"workDoneProgress": True}}, options=options,
                     client_name=name)
        c.open(uri, text)
        c.diagnostics(uri, timeout=30)
        c.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 3, "character": 10}})
        edited = text + f"\n_ = os.system('touch {root}/MARKER_EDIT')\n"
        c.change(uri, edited, 2)
        c.diagnostics(uri, version=2, timeout=30)
        c.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
        # compile-time insight runs only when asked (its Inspect lens), trusted or not
        asked = c.request("workspace/executeCommand", {"command": "tritonify.inspect", "arguments": [uri]},
                          timeout=120)["result"]
        assert asked["ok"] is compiles, asked
        deadline = time.monotonic() + (120 if compiles else 5)
        titles = _lens_titles(c, uri)
        while time.monotonic() < deadline and not (compiles and any("regs" in t for t in titles)
                                                   and any("not inspected" in t for t in titles)):
            time.sleep(0.5)
            titles = _lens_titles(c, uri)
        assert c.shutdown_and_exit() == 0
    finally:
        c.kill()
    leftovers = sorted(p.name for p in root.iterdir() if p.name.startswith("MARKER"))
    assert leftovers == [], f"{shape}: the file's code ran ({leftovers})"
    if compiles:
        # the kernel was compiled from its source; the one that needs the module is not
        assert any(t.startswith("sm_90 · ") and "regs" in t for t in titles), titles
        assert any("not inspected: needs evil_helpers" in t for t in titles), titles
    else:
        assert not any(t.startswith("sm_90") for t in titles), titles


ASKED = textwrap.dedent('''\
    import triton
    import triton.language as tl


    def make_configs():
        open("ROOT/MARKER_ASKED", "w").write("ran")
        return [triton.Config({"BLOCK": 256}, num_warps=4)]


    @triton.autotune(configs=make_configs(), key=["n"])
    @triton.jit
    def generated(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, 1.0, mask=offs < n)
''')


@pytest.mark.parametrize("trusted", [True, False])
def test_the_definitions_run_only_when_the_user_asks_in_a_trusted_workspace(tmp_path, monkeypatch, trusted):
    """Asked to inspect, a kernel whose configs come from a call gets the lens "not inspected:
    needs ..."; its command (the user's click) compiles it running the file's definitions, and
    only then do they run."""
    monkeypatch.setenv("TRITONIFY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton-cache"))
    root = tmp_path / "ws"
    root.mkdir()
    text = ASKED.replace("ROOT", str(root))
    path = root / "asked.py"
    path.write_text(text)
    uri = path.as_uri()
    c = RawClient()
    try:
        c.initialize(root, options={"trusted": True, "inspect": INSPECT_ON}, client_name="Neovim")
        c.open(uri, text)
        c.diagnostics(uri, timeout=30)
        c.request("workspace/executeCommand", {"command": "tritonify.inspect", "arguments": [uri]}, timeout=120)
        deadline = time.monotonic() + 60
        lens = None
        while lens is None and time.monotonic() < deadline:
            lens = next((item for item in c.request("textDocument/codeLens", {"textDocument": {"uri": uri}})["result"]
                         if "not inspected: needs the autotune configs" in item["command"]["title"]), None)
            time.sleep(0.3)
        assert lens is not None and lens["command"]["command"] == "tritonify.inspectWithDefinitions"
        assert not (root / "MARKER_ASKED").exists()            # opening ran nothing
        if not trusted:
            c.notify("workspace/didChangeConfiguration", {"settings": {"trusted": False}})
            time.sleep(0.5)
        answer = c.request("workspace/executeCommand", {"command": lens["command"]["command"],
                                                        "arguments": lens["command"]["arguments"]}, timeout=120)["result"]
        if trusted:
            assert answer["ok"] is True, answer
            assert (root / "MARKER_ASKED").exists()            # asked for: the definitions ran
            titles = [item["command"]["title"] for item in
                      c.request("textDocument/codeLens", {"textDocument": {"uri": uri}})["result"]]
            assert any(t.startswith("sm_90 · ") and "regs" in t for t in titles), titles
        else:
            assert answer["ok"] is False and "not trusted" in answer["error"]
            assert not (root / "MARKER_ASKED").exists()
        assert c.shutdown_and_exit() == 0
    finally:
        c.kill()
