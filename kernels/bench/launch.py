"""Launch a kernel once through its benchmark contract, for a profiler to watch.

`tritonify profile FILE::KERNEL` with no `-- COMMAND` (and the editor's Profile code lens, which
passes none) needs something that runs the kernel. A kernel with a benchmark contract already says
how: the contract's `inputs` and `entry`. This module is that launcher:

    python -m tritonify.kernels.bench.launch FILE::KERNEL [--shape 16384x4096] [--warmup 3]

It builds the contract's inputs for one shape (the largest the contract lists, unless `--shape`),
calls the entry `--warmup` times (compilation and autotuning happen there, outside the profiled
range), then once more inside the NVTX range `tritonify`, which the profiler is told to watch.
It runs in the profiler's child process, never in the editor's server.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

NVTX_RANGE = "tritonify"


def profile_command(file: str, kernel: str) -> list[str] | None:
    """The argv that launches `kernel` through its contract, or None when no contract file is beside it.

    Looked for statically (nothing is imported here): the caller is the profile command itself."""
    from tritonify.kernels.bench.discovery import static_contracts

    path = Path(file)
    refs = static_contracts(path)
    if not any(ref.name == kernel for ref in refs) and len(refs) != 1:
        return None
    return [sys.executable, "-m", "tritonify.kernels.bench.launch", f"{path.resolve()}::{kernel}"]


def contract_launcher(file: str, kernel: str) -> tuple[list[str], str] | None:
    """(argv, NVTX range) for `tritonify.tools.ncu.profile_run.run_profile(..., launcher=)`:
    the contract's launcher and the range its measured call runs in; None without a contract."""
    argv = profile_command(file, kernel)
    return (argv, NVTX_RANGE) if argv else None


def parse_shape(text: str) -> tuple[int, ...]:
    try:
        shape = tuple(int(part) for part in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a shape such as 16384x4096") from None
    if not shape or min(shape) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a shape such as 16384x4096")
    return shape


def largest(shapes) -> tuple:
    return max((tuple(s) for s in shapes), key=lambda s: math.prod(int(d) for d in s if isinstance(d, int)) or 0)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tritonify.kernels.bench.launch", description=__doc__.splitlines()[0])
    p.add_argument("target", metavar="FILE::KERNEL")
    p.add_argument("--shape", type=parse_shape, help="the shape to launch (default: the contract's largest)")
    p.add_argument("--warmup", type=int, default=3, help="calls before the profiled one (default 3)")
    p.add_argument("--device", default="cuda")
    args = p.parse_args(argv)

    from tritonify.kernels.bench.discovery import load_contracts, parse_target, select_contract

    file, kernel = parse_target(args.target)
    try:
        contract = select_contract(load_contracts(Path(file)), kernel)
    except (LookupError, OSError, SyntaxError) as exc:
        print(f"tritonify launch: {exc}", file=sys.stderr)
        return 2
    import torch

    from tritonify.kernels.bench.inputs import dtype_of

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("tritonify launch: no CUDA GPU is visible to this Python", file=sys.stderr)
        return 2
    shape = args.shape or largest(contract.shapes)
    torch.manual_seed(0)
    inputs = contract.inputs(shape, dtype_of(contract.dtype), args.device)
    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    for _ in range(max(0, args.warmup)):
        contract.entry(*inputs)
    sync = torch.cuda.synchronize if args.device.startswith("cuda") else (lambda: None)
    sync()
    if args.device.startswith("cuda"):
        torch.cuda.nvtx.range_push(NVTX_RANGE)
    contract.entry(*inputs)
    sync()
    if args.device.startswith("cuda"):
        torch.cuda.nvtx.range_pop()
    print(f"launched {contract.name} at {'x'.join(map(str, shape))} ({contract.dtype})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
