"""Diagnosis: the box kernel checks' backward (forward through the Gluon box kernel, dgrad and wgrad through
the template's kernels) gave a non-finite dweight on stride-2 cases at 2026-12-03 11:45Z. Replays that
sequence (kernel_checks' box cases in order, one box config at a time) with conv2d_wgrad wrapped: its inputs'
finiteness, its output's, and the same wgrad recomputed on copies of the same inputs afterwards; with
ALLOCATOR=null the device-descriptor allocator is reset before each backward.
    python gpu/conv/diag_box_backward.py on|off"""
from __future__ import annotations

import json
import os
import sys

import torch

from tritonify.kernels.templates import conv2d as m

CASES = [(2, 9, 16, 64, 40, 3, 1, "bias+residual+silu"), (2, 18, 32, 64, 40, 3, 2, "bias+residual+silu"),
         (3, 10, 10, 128, 72, 3, 1, ""), (2, 7, 9, 64, 40, 1, 1, "bias+residual+silu"),
         (2, 16, 12, 128, 72, 1, 2, "residual")]
SEEN = []
_wgrad = m.conv2d_wgrad


def wrapped(dz, x, weight_shape, stride=1, padding=0):
    dw = _wgrad(dz, x, weight_shape, stride, padding)
    torch.cuda.synchronize()
    again = _wgrad(dz.clone(), x.clone(), weight_shape, stride, padding)
    torch.cuda.synchronize()
    SEEN.append({"dz_finite": bool(torch.isfinite(dz).all()), "x_finite": bool(torch.isfinite(x).all()),
                 "dw_finite": bool(torch.isfinite(dw).all()), "again_finite": bool(torch.isfinite(again).all()),
                 "same": bool(torch.equal(dw, again))})
    return dw


def case_run(case):
    batch, H, W, c_in, c_out, R, stride, ep = case
    pad = R // 2
    oh, ow = m.conv2d_out_size(H, R, stride, pad), m.conv2d_out_size(W, R, stride, pad)
    x = torch.randn(batch, H, W, c_in, device="cuda").bfloat16().requires_grad_()
    w = (torch.randn(c_out, R, R, c_in, device="cuda") / (R * R * c_in) ** 0.5).bfloat16().requires_grad_()
    b = (0.1 * torch.randn(c_out, device="cuda")).bfloat16().requires_grad_() if "bias" in ep else None
    r = torch.randn(batch, oh, ow, c_out, device="cuda").bfloat16().requires_grad_() if "residual" in ep else None
    y = m.conv2d(x, w, b, r, stride, pad, "silu" if "silu" in ep else None)
    if os.environ.get("ALLOCATOR") == "null":
        from triton.runtime import _allocation
        _allocation._allocator.set(_allocation._NULL_ALLOCATOR)
    y.backward(torch.randn_like(y))
    torch.cuda.synchronize()
    return {"case": list(case[:7]), "dx_finite": bool(torch.isfinite(x.grad).all()),
            "dw_finite": bool(torch.isfinite(w.grad).all()), "wgrad": SEEN[-1] if SEEN else None}


def main(mode):
    m._CONV2D_BACKWARD["mode"] = "template"
    m._CONV2D_BOX["mode"] = mode
    m.conv2d_wgrad = wrapped
    configs = list(m._CONV2D_BOX_CONFIGS)
    for config in configs[: int(os.environ.get("CONFIGS", "2"))]:
        m._CONV2D_BOX_CONFIGS[:] = [config]
        for case in CASES:
            try:
                print(json.dumps({"mode": mode, "config": list(config), **case_run(case)}), flush=True)
            except Exception as exc:  # noqa: BLE001
                print("ERR", case, type(exc).__name__, str(exc)[:300], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "on"))
