"""The Python side of each template's launcher, timed on the CPU with the kernel launch stubbed out.

    python benchmarks/templates_host_python.py [--calls N] [--profile NAME]

No GPU is needed: every ``_Launcher`` of every template gets a stand-in kernel whose "compiled
kernel" does nothing when run, so what is timed is everything a call does on the host *except*
the driver's launch (argument checks, reshapes, allocations on the CPU allocator, the launcher's
plan lookup, the autograd decision). The stub lives only here, never in product code. Numbers
are per call, after a first call that records the launcher's plan; on the H200 host add the real
launch (a few microseconds) and the CUDA allocator's cost per output.
"""
from __future__ import annotations

import argparse
import cProfile
import importlib
import io
import os
import pstats
import sys
import time

os.environ.pop("TRITON_INTERPRET", None)

import torch  # noqa: E402

NAMES = ["rms_norm", "add_rms_norm", "softmax", "swiglu", "tanh_glu", "relu2_glu", "geglu_sigmoid",
         "cross_entropy", "linear_gelu", "fused_linear_cross_entropy"]
HOST_SHAPES = {"rms_norm": (8, 4096), "add_rms_norm": (8, 4096), "softmax": (8, 4096), "swiglu": (8, 14336),
               "tanh_glu": (8, 14336), "relu2_glu": (8, 14336), "geglu_sigmoid": (8, 14336),
               "cross_entropy": (8, 128256),
               # the matmul templates run their cuBLAS part for real (on the CPU here): small shapes
               "linear_gelu": (8, 64, 128), "fused_linear_cross_entropy": (8, 64, 256)}


class _Compiled:
    """A compiled kernel that launches nothing."""
    function = 0
    packed_metadata = None

    @staticmethod
    def run(*args):
        return None

    @staticmethod
    def launch_metadata(*args):
        return None


class _StubKernel:
    """Stands in for ``kernel`` in ``kernel[grid](*args)``: records the first config, launches nothing."""

    def __init__(self, real):
        configs = getattr(real, "configs", None)
        self.best_config = configs[0] if configs else None

    def __getitem__(self, grid):
        return lambda *args, **kwargs: _Compiled()


def stub_launchers(module) -> int:
    count = 0
    for value in vars(module).values():
        if type(value).__name__ == "_Launcher":
            value.kernel = _StubKernel(value.kernel)
            value.raw_stream = lambda device: 0
            value.direct = True  # a CPU-only torch has no raw CUDA stream: the stub stands in for it
            value.runtime = __import__("triton").knobs.runtime
            count += 1
    torch._C._cuda_getDevice = lambda: 0  # the stub stream ignores it; a CPU-only torch has no CUDA device
    return count


def per_call_us(fn, calls: int) -> float:
    fn()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls * 1e6


def main(argv) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--calls", type=int, default=3000)
    p.add_argument("--profile", default="")
    a = p.parse_args(argv)
    print(f"torch {torch.__version__}; per call, Python side only (launch stubbed), CPU tensors, bf16")
    print(f"{'template':28s} {'no grad':>9s} {'requires_grad':>14s}")
    for name in NAMES:
        m = importlib.import_module(f"tritonify.kernels.templates.{name}")
        stub_launchers(m)
        contract = getattr(m, f"{name.upper()}_CONTRACT")
        shape = HOST_SHAPES[name]
        args = list(contract.inputs(shape, torch.bfloat16, "cpu"))
        gargs = [t.detach().requires_grad_() if isinstance(t, torch.Tensor) and t.is_floating_point() else t
                 for t in args]
        if name == "cross_entropy":  # the in-place gradient: a fresh leaf is not needed, the values are ignored
            gargs[0] = args[0].detach().clone().requires_grad_()
        fwd = per_call_us(lambda: contract.entry(*args), a.calls)
        try:
            grad = per_call_us(lambda: contract.entry(*gargs), a.calls)
        except RuntimeError as exc:   # e.g. an in-place gradient over a leaf
            grad = float("nan")
            print(f"  ({name} with requires_grad: {exc})")
        print(f"{name:28s} {fwd:9.1f} {grad:14.1f}")
        if name == a.profile:
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(a.calls):
                contract.entry(*args)
            prof.disable()
            text = io.StringIO()
            pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(18)
            print(text.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
