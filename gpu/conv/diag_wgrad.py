"""Diagnosis: the template's wgrad on the Gluon box kernel's stride-2 check cases (its dweight came out
non-finite in gpu/conv/run_box_ws_h200.sh's checks, 2026-12-03 11:45Z, while y and dx were right). Per case:
each wgrad config alone and the autotuned kernel on fresh inputs against float64; then each box config's
forward on the case with the input compared bit for bit before and after (a stray write would change it).
    python gpu/conv/diag_wgrad.py"""
from __future__ import annotations

import json

import torch
import torch.nn.functional as F

from tritonify.kernels.templates import conv2d as m

CASES = [(2, 18, 32, 64, 40, 3, 2), (2, 16, 12, 128, 72, 1, 2), (2, 9, 16, 64, 40, 3, 1), (2, 9, 7, 40, 36, 3, 2)]


def wgrad_error(x, dz, w_shape, stride, pad):
    dw = m.conv2d_wgrad(dz, x, w_shape, stride, pad)
    torch.cuda.synchronize()
    ref = torch.nn.grad.conv2d_weight(x.double().permute(0, 3, 1, 2), (w_shape[0], w_shape[3], w_shape[1], w_shape[2]),
                                      dz.double().permute(0, 3, 1, 2), stride, pad).permute(0, 2, 3, 1)
    return {"finite": bool(torch.isfinite(dw).all()), "err": float((dw.double() - ref).abs().max() / ref.abs().max())}


def main():
    torch.manual_seed(0)
    kernel = m._conv2d_wgrad_kernel
    all_configs = list(kernel.configs)
    for batch, H, W, c_in, c_out, R, stride in CASES:
        pad = R // 2
        oh, ow = m.conv2d_out_size(H, R, stride, pad), m.conv2d_out_size(W, R, stride, pad)
        x = torch.randn(batch, H, W, c_in, device="cuda").bfloat16()
        dz = torch.randn(batch, oh, ow, c_out, device="cuda").bfloat16()
        rec = {"case": [batch, H, W, c_in, c_out, R, stride], "configs": {}}
        for i, config in enumerate(all_configs):
            kernel.configs = [config]
            m._conv2d_wgrad_launch.plans.clear()
            kernel.cache.clear()
            rec["configs"][i] = wgrad_error(x, dz, (c_out, R, R, c_in), stride, pad)
        kernel.configs = all_configs
        m._conv2d_wgrad_launch.plans.clear()
        kernel.cache.clear()
        rec["autotuned"] = [wgrad_error(x, dz, (c_out, R, R, c_in), stride, pad) for _ in range(3)]
        if c_in % 64 == 0:
            w = (torch.randn(c_out, R, R, c_in, device="cuda") / (R * R * c_in) ** 0.5).bfloat16()
            y = x.new_empty(batch, oh, ow, c_out)
            for config in m._CONV2D_BOX_CONFIGS:
                before = x.clone()
                m._conv2d_box_forward(x, w, None, None, None, y, (stride,) * 2, (pad,) * 2, oh, ow, False, config)
                torch.cuda.synchronize()
                rec.setdefault("box_input_unchanged", []).append(bool(torch.equal(before, x)))
        print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
