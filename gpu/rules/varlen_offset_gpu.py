"""Check on a GPU what TRI062 (varlen-offset-int32) claims.

Run on a CUDA machine: `python gpu/rules/varlen_offset_gpu.py [out.md]`. Prints a short Markdown
report (and writes it to out.md when given). Each case runs in a child process, because an illegal memory
access poisons the CUDA context of the process that made it.

A packed varlen batch `x` of shape [total_tokens, H, K] (bf16, H = 32, K = 128: 4,096 elements per
token) holds two sequences: a short one and one that starts at token 600,000, past the 524,288
tokens where `bos * H * K` reaches 2**31. A kernel in the gated-delta-rule shape copies each
sequence's rows through `(bos * H + i_h) * K + t * H * K + k`, with `bos` loaded from `cu_seqlens`
and cast `.to(tl.int32)` (the form TRI062 reports) or `.to(tl.int64)` (its fix). Both sequences' copies
are compared element for element with `x` (exact: a copy). A third case times both forms (median
us, through tritonify.kernels.bench.timing.events_ms) on an ordinary batch (8 sequences of 4,096 tokens) to show what the fix costs.
"""
from __future__ import annotations

import json
import subprocess
import sys

import torch
import triton
import triton.language as tl

H, K, BT = 32, 128, 64
SHORT, START, LONG = 1024, 600_000, 2048


@triton.jit
def copy_varlen(x, y, cu_seqlens, H: tl.constexpr, K: tl.constexpr, BT: tl.constexpr, WIDE: tl.constexpr):
    i_t, i_n, i_h = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    if WIDE:
        bos, eos = tl.load(cu_seqlens + i_n).to(tl.int64), tl.load(cu_seqlens + i_n + 1).to(tl.int64)
    else:
        bos, eos = tl.load(cu_seqlens + i_n).to(tl.int32), tl.load(cu_seqlens + i_n + 1).to(tl.int32)
    T = (eos - bos).to(tl.int32)
    o_t = i_t * BT + tl.arange(0, BT)
    off = (bos * H + i_h) * K + o_t[:, None] * (H * K) + tl.arange(0, K)[None, :]
    m = (o_t < T)[:, None]
    tl.store(y + off, tl.load(x + off, mask=m), mask=m)


def case(name):
    if name == "speed":  # 8 sequences of 4,096 tokens: what the fix costs
        x = torch.randn(8 * 4096, H, K, device="cuda", dtype=torch.bfloat16)
        y, cu = torch.empty_like(x), torch.arange(0, 8 * 4096 + 1, 4096, device="cuda", dtype=torch.int32)
        from tritonify.kernels.bench.timing import events_ms   # the project's one timer (events, L2 flushed)

        return {w: round(1000 * events_ms(lambda: copy_varlen[(64, 8, H)](x, y, cu, H, K, BT, w == "int64")), 1)
                for w in ("int32", "int64")}
    x = torch.randn(START + LONG, H, K, device="cuda", dtype=torch.bfloat16)
    y = torch.zeros_like(x)
    cu = torch.tensor([0, SHORT, START, START + LONG], device="cuda", dtype=torch.int32)
    try:
        copy_varlen[(LONG // BT, 3, H)](x, y, cu, H, K, BT, name == "int64")
        torch.cuda.synchronize()
    except Exception as exc:  # noqa: BLE001 - reported as observed
        return {"error": str(exc).splitlines()[0][:100]}
    return {"first sequence copied": torch.equal(y[:SHORT], x[:SHORT]),
            f"sequence at token {START} copied": torch.equal(y[START:], x[START:])}


def main():
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(case(sys.argv[2])))
        return
    text = f"# TRI062 on {torch.cuda.get_device_name()}, torch {torch.__version__}, Triton {triton.__version__}\n\n"
    text += f"x: [{START + LONG}, {H}, {K}] bf16, {(START + LONG) * H * K} elements; bos * H * K = {START * H * K}\n\n"
    for name in ("int32", "int64", "speed"):
        try:
            run = subprocess.run([sys.executable, __file__, "--child", name], capture_output=True, text=True, timeout=120)
            out = [ln for ln in run.stdout.splitlines() if ln.startswith("{")]
            text += f"- {name}: {out[-1] if out else run.stderr.strip()[-200:]}\n"
        except subprocess.TimeoutExpired:
            text += f"- {name}: no answer in 120 s (the child hung)\n"
        print(text, flush=True)
        if len(sys.argv) > 1:
            open(sys.argv[1], "w").write(text)


if __name__ == "__main__":
    main()
