"""One conv2d layer's forward for a profiler: the template (its path forced or chosen as users get it) tuned
first, outside any range, then inside the NVTX range ``measure`` the template's forward once and cuDNN's
(``F.conv2d`` on the channels-last views, ``cudnn.benchmark`` on, its algorithm picked before the range) once,
so ``ncu --nvtx --nvtx-include measure/`` captures just those two launches' kernels.

    python gpu/conv/run_layer.py NAME BATCH [PATH]     PATH: auto (default), gemm, implicit, box (the box kernels on)
"""
from __future__ import annotations

import sys
from pathlib import Path

import torch
import torch.nn.functional as F

from tritonify.kernels.templates import conv2d as m

sys.path.insert(0, str(Path(__file__).parent))
import bench  # noqa: E402

PATHS = {"auto": {}, "gemm": {"gemm": "gemm", "box": "off"}, "implicit": {"gemm": "implicit", "box": "off"}, "box": {"box": "on"}}


def main(name: str, batch: int, path: str = "auto") -> int:
    if path not in PATHS:
        raise SystemExit(f"run_layer.py: path {path!r}: expected one of {', '.join(PATHS)}")
    torch.backends.cudnn.benchmark = True
    for table, mode in PATHS[path].items():
        {"gemm": m._CONV2D_GEMM, "box": m._CONV2D_BOX}[table]["mode"] = mode
    x, w, _, _, stride, pad = bench.conv_inputs(name, batch)
    xc, wc = x.permute(0, 3, 1, 2), w.permute(0, 3, 1, 2)
    with torch.no_grad():
        for _ in range(3):  # autotuning, the path choices, cuDNN's algorithm search: all before the range
            m.conv2d_forward(x, w, None, None, stride, pad)
            F.conv2d(xc, wc, None, stride, pad)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push("measure")
        m.conv2d_forward(x, w, None, None, stride, pad)
        F.conv2d(xc, wc, None, stride, pad)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
    print(f"{name} batch {batch} path {path}: gemm {m._CONV2D_GEMM['choices'] or '-'}; box {m._CONV2D_BOX['choices'] or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]), *sys.argv[3:4]))
