"""Capture `tools/ncu/sass_warmup.ncu-rep`: the report the `ncu_report` child reads first.

    python3 gpu/ncu/warmup_report.py OUT.ncu-rep     # on a machine with a GPU and ncu

The first SASS lookup in a process starts ncu_report's disassembler (~0.7 s on the H200), in
any report; the reader child does it on this small report while the profiled run is going
(`report_reader.warm_up`). One launch of a 1,024-element copy kernel, SourceCounters only
(its per-instruction counters give the PCs), no source imported.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path


def launch() -> None:
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def tritonify_warmup_copy(x, y, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)

    x = torch.rand(1024, device="cuda")
    y = torch.empty_like(x)
    tritonify_warmup_copy[(1,)](x, y, 1024, BLOCK=1024)
    torch.cuda.synchronize()


def main(argv: list[str]) -> int:
    if argv[:1] == ["--launch"]:
        launch()
        return 0
    out = Path(argv[0] if argv else "sass_warmup.ncu-rep")
    ncu = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    cmd = [ncu, "--target-processes", "application-only", "--section", "SourceCounters", "--import-source", "no",
           "-k", "regex:^tritonify_warmup_copy$", "-c", "1", "-f", "-o", str(out.with_suffix("")),
           sys.executable, __file__, "--launch"]
    code = subprocess.run(cmd).returncode
    print(out, out.stat().st_size if out.is_file() else "missing", "bytes")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
