"""Check on a GPU what TRI062 (varlen-offset-int32) claims.

Run on a CUDA machine: `python gpu/rules/varlen_offset_gpu.py [out.md]`. Prints a Markdown table
(and writes it to out.md when given). Each case runs in a child process, because an illegal memory
access poisons the CUDA context of the process that made it.

A packed varlen batch `x` of shape [total_tokens, H, K] (bf16, H = 32, K = 128: 4,096 elements per
token) holds two sequences: a short one and one that starts at token 600,000, past the 524,288
tokens where `bos * H * K` reaches 2**31. A kernel in the gated-delta-rule shape copies each
sequence's rows through `x + (bos * H + i_h) * K`, with `bos` loaded from `cu_seqlens` and cast
`.to(tl.int32)` (the form TRI062 reports) or `.to(tl.int64)` (its fix). The copy of the second
sequence is compared element for element with `x` (exact: a copy). A third case times both forms
on an ordinary batch (8 sequences of 4,096 tokens) to show what the fix costs.
"""
from __future__ import annotations

import json
import subprocess
import sys

import torch
import triton
import triton.language as tl

H, K, BT = 32, 128, 64
SHORT, START_LONG, LONG = 1024, 600_000, 2048


@triton.jit
def copy_varlen(x, y, cu_seqlens, H: tl.constexpr, K: tl.constexpr, BT: tl.constexpr, WIDE: tl.constexpr):
    i_t, i_n, i_h = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    if WIDE:
        bos = tl.load(cu_seqlens + i_n).to(tl.int64)
        eos = tl.load(cu_seqlens + i_n + 1).to(tl.int64)
    else:
        bos = tl.load(cu_seqlens + i_n).to(tl.int32)
        eos = tl.load(cu_seqlens + i_n + 1).to(tl.int32)
    T = (eos - bos).to(tl.int32)
    if i_t * BT >= T:
        return
    p_x = tl.make_block_ptr(x + (bos * H + i_h) * K, (T, K), (H * K, 1), (i_t * BT, 0), (BT, K), (1, 0))
    p_y = tl.make_block_ptr(y + (bos * H + i_h) * K, (T, K), (H * K, 1), (i_t * BT, 0), (BT, K), (1, 0))
    tl.store(p_y, tl.load(p_x, boundary_check=(0, 1)), boundary_check=(0, 1))


def _case_large(wide: bool) -> dict:
    total = START_LONG + LONG
    x = torch.randn(total, H, K, device="cuda", dtype=torch.bfloat16)
    y = torch.zeros_like(x)
    # tokens SHORT..START_LONG are padding between the two sequences (not copied)
    cu = torch.tensor([0, SHORT, START_LONG, total], device="cuda", dtype=torch.int32)
    # the padding "sequence" (SHORT..START_LONG) is skipped by giving it no programs past its start
    grid = (triton.cdiv(max(SHORT, LONG), BT), 3, H)
    try:
        copy_varlen[grid](x, y, cu, H=H, K=K, BT=BT, WIDE=wide)
        torch.cuda.synchronize()
    except Exception as exc:  # noqa: BLE001 - reported as observed
        return {"wide": wide, "elements": x.numel(), "result": f"error: {str(exc).splitlines()[0][:120]}"}
    long_ok = torch.equal(y[START_LONG:START_LONG + LONG], x[START_LONG:START_LONG + LONG])
    short_ok = torch.equal(y[:SHORT], x[:SHORT])
    return {"wide": wide, "elements": x.numel(),
            "result": f"short sequence copied: {short_ok}; sequence at token {START_LONG:,} copied: {long_ok}"}


def _case_speed() -> dict:
    n_seq, per = 8, 4096
    x = torch.randn(n_seq * per, H, K, device="cuda", dtype=torch.bfloat16)
    y = torch.empty_like(x)
    cu = torch.arange(0, n_seq * per + 1, per, device="cuda", dtype=torch.int32)
    grid = (triton.cdiv(per, BT), n_seq, H)
    out = {}
    for wide in (False, True):
        ms = triton.testing.do_bench(lambda: copy_varlen[grid](x, y, cu, H=H, K=K, BT=BT, WIDE=wide))
        out["int64" if wide else "int32"] = round(ms * 1000, 1)
    return out


def _child(case: str) -> None:
    if case == "speed":
        print(json.dumps(_case_speed()))
    else:
        print(json.dumps(_case_large(case == "wide")))


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        _child(sys.argv[2])
        return
    rows = []
    for case in ("narrow", "wide", "speed"):
        run = subprocess.run([sys.executable, __file__, "--child", case], capture_output=True, text=True, timeout=300)
        lines = [ln for ln in run.stdout.splitlines() if ln.startswith("{")]
        rows.append((case, json.loads(lines[-1]) if lines else {"result": f"child failed: {run.stderr.strip().splitlines()[-1:]}"}))
    head = (f"# TRI062 on {torch.cuda.get_device_name()} (torch {torch.__version__}, Triton {triton.__version__})\n\n"
            f"Packed batch [{START_LONG + LONG:,}, {H}, {K}] bf16 ({(START_LONG + LONG) * H * K:,} elements); "
            f"second sequence starts at token {START_LONG:,} (bos * H * K = {START_LONG * H * K:,} > 2**31).\n\n"
            "| case | offsets loaded as | result |\n| --- | --- | --- |\n")
    body = ""
    for case, r in rows:
        if case == "speed":
            body += (f"| 8 x 4,096 tokens, copy time (do_bench, us) | int32 / int64 | "
                     f"{r.get('int32')} / {r.get('int64')} |\n")
        else:
            body += f"| large batch | {'int64 (fix)' if case == 'wide' else 'int32 (reported)'} | {r.get('result')} |\n"
    text = head + body
    print(text)
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
