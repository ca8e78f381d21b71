"""The templates' ``_Launcher`` without a GPU: a stand-in for Triton's launch records what the
launcher passes, so the plan it records on a first call and replays on later calls is checked
(arguments, constexpr tail from the autotune config and the heuristics, grid, launch hooks)."""
from __future__ import annotations

import importlib
import os

import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
if os.environ.get("TRITON_INTERPRET") == "1":
    pytest.skip("the launcher takes Triton's own path under the interpreter", allow_module_level=True)


class _Compiled:
    def __init__(self, calls):
        self.calls, self.function, self.packed_metadata = calls, "fn-handle", "packed"

    def run(self, *args):
        self.calls.append(("run", args))

    def launch_metadata(self, grid, stream, *args):
        return ("metadata", grid, args)


class _Kernel:
    """Stands in for an autotuned kernel: ``kernel[grid](*args, **kw)`` records the call."""

    def __init__(self, real, calls):
        self.real, self.calls, self.best_config = real, calls, real.configs[0]
        self.compiled = _Compiled(calls)

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            self.calls.append(("triton", grid, args, kwargs))
            return self.compiled
        return launch


@pytest.fixture
def launcher(monkeypatch):
    m = importlib.import_module("tritonify.kernels.templates.rms_norm")
    launch = m._Launcher(m._rms_norm_fwd_kernel)
    calls = []
    launch.kernel = _Kernel(m._rms_norm_fwd_kernel, calls)
    launch.direct, launch.runtime = True, triton.knobs.runtime
    launch.raw_stream = lambda device: 1234
    monkeypatch.setattr(torch._C, "_cuda_getDevice", lambda: 0, raising=False)
    return m, launch, calls


_ARGS = (*(object() for _ in range(4)), 6, 100, 128, 128, 1e-6, 0)  # x, w, y, rstd stand-ins, then scalars


def _args():
    return _ARGS


def test_the_first_call_goes_through_triton_and_later_calls_replay_the_plan(launcher):
    m, launch, calls = launcher
    config = launch.kernel.best_config
    grid = lambda meta: (-(-6 // meta["ROWS"]),)
    first = launch(("key",), grid, *_args(), BLOCK_N=128, STORE_RSTD=True)
    assert calls == [("triton", grid, _args(), {"BLOCK_N": 128, "STORE_RSTD": True})]
    launch(("key",), grid, *_args(), BLOCK_N=128, STORE_RSTD=True)
    kind, args = calls[-1]
    # the constexpr tail in parameter order: BLOCK_N, STORE_RSTD, then the config's ROWS, PPS, STAGES and
    # PREFETCH (its default where the config leaves it out)
    tail = (128, True, config.kwargs["ROWS"], config.kwargs["PPS"], config.kwargs["STAGES"],
            config.kwargs.get("PREFETCH", 0))
    assert kind == "run" and args == ((6 // config.kwargs["ROWS"], 1, 1, 1234, "fn-handle", "packed", None, None, None)
                                      + _args() + tail)
    assert first is launch.kernel.compiled


def test_another_key_is_another_first_call(launcher):
    m, launch, calls = launcher
    launch(("a",), (3,), *_args(), BLOCK_N=128, STORE_RSTD=True)
    launch(("b",), (3,), *_args(), BLOCK_N=128, STORE_RSTD=False)
    assert [c[0] for c in calls] == ["triton", "triton"]
    launch(("b",), (3,), *_args(), BLOCK_N=128, STORE_RSTD=False)
    assert calls[-1][0] == "run" and calls[-1][1][9 + len(_args()) + 1] is False  # b's STORE_RSTD


def test_a_launch_hook_gets_the_metadata_triton_would_give_it(launcher, monkeypatch):
    m, launch, calls = launcher
    launch(("key",), (2,), *_args(), BLOCK_N=128, STORE_RSTD=True)
    hook = lambda metadata: None
    monkeypatch.setattr(triton.knobs.runtime, "launch_enter_hook", hook)
    launch(("key",), (2,), *_args(), BLOCK_N=128, STORE_RSTD=True)
    kind, args = calls[-1]
    assert kind == "run" and args[6][0] == "metadata" and args[6][1] == (2, 1, 1) and args[7] is hook


def test_the_interpreter_or_a_cpu_only_torch_always_takes_triton_s_path():
    m = importlib.import_module("tritonify.kernels.templates.swiglu")
    launch = m._Launcher(m._swiglu_fwd_kernel)
    if not hasattr(torch._C, "_cuda_getCurrentRawStream"):
        assert launch.direct is False   # nothing to launch on: no plan is ever recorded


def test_every_template_carries_the_same_launcher():
    """A template is inserted into the user's file whole, so each carries its own copy of the lean
    launcher (it must run without Tritonify installed). The copies are one concept: a fix to one is
    a fix to all, so they stay identical."""
    import ast
    from pathlib import Path

    import tritonify.kernels.templates as pkg

    copies = {}
    for path in sorted(Path(pkg.__file__).parent.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        for node in ast.parse(text).body:
            if isinstance(node, ast.ClassDef) and node.name == "_Launcher":
                copies[path.name] = ast.get_source_segment(text, node)
    assert len(copies) >= 10, sorted(copies)
    first = next(iter(copies.values()))
    assert [name for name, src in copies.items() if src != first] == []
