"""Does Liger's `llama4_rope` compute what the corpus kernel TRI003 reports as Llama-4 RoPE computes?

TRI003 calls sglang's vision-tower `_fused_qk_complex_rope_kernel` (kernels/ops/attention/vision_rope.py
in the corpus) a re-implementation of `liger_kernel.ops.llama4_rope`. This script runs both on the
same fresh random q, k and unit-modulus complex frequencies and compares each with a float64
complex multiply: `x.view(complex) * freqs_cis`, the definition of the op. The corpus file is
imported from the corpus (not copied); its kernel is launched directly with the arguments its host
wrapper passes (the wrapper itself insists on CUDA). Runs on CPU under the Triton interpreter
(`TRITON_INTERPRET=1`, set here) or on a GPU with `--device cuda`.

    python benchmarks/realworld/llama4_rope_parity.py [--corpus DIR] [--device cpu|cuda]

Needs torch, triton and liger-kernel 0.8.5 (`scripts/install.sh`).

Run 2026-12-02 ~14:50Z (CPU interpreter, torch 2.13.0+cpu, triton 3.9.0, liger-kernel 0.8.5, seed 0): fp32 and
bf16, three shapes; worst 1.02 eps of the dtype against float64 for either kernel; in bf16 the corpus
kernel and Liger give identical outputs, in fp32 they differ by at most 4.8e-7 (FMA order).
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from corpus import default_dest  # noqa: E402

KERNEL_FILE = "sglang/sglang/kernels/ops/attention/vision_rope.py"
TOLERANCE = 4.0   # in eps of the output dtype (relative, values below 1 counted as 1): |freqs| = 1, fp32 math, one final rounding


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=default_dest())
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.device == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"
    import torch
    from liger_kernel.transformers.llama4_rope import (
        liger_llama4_text_rotary_pos_emb, liger_llama4_vision_rotary_pos_emb,
    )

    spec = importlib.util.spec_from_file_location("corpus_vision_rope", args.corpus / KERNEL_FILE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)

    g = torch.Generator().manual_seed(args.seed)
    worst = 0.0
    cases = [(dt, shape) for dt in (torch.float32, torch.bfloat16) for shape in ((37, 4, 64), (130, 3, 80), (9, 16, 128))]
    for dtype, (tokens, heads, head_dim) in cases:
        q = torch.randn(tokens, heads, head_dim, generator=g).to(args.device, dtype)
        k = torch.randn(tokens, heads, head_dim, generator=g).to(args.device, dtype)
        angle = torch.rand(tokens, head_dim // 2, generator=g, dtype=torch.float64) * 6.283185307179586
        freqs_cis = torch.polar(torch.ones_like(angle), angle).to(torch.complex64).to(args.device)

        freqs = torch.view_as_real(freqs_cis).view(-1, head_dim // 2, 2)
        q_out, k_out = torch.empty_like(q), torch.empty_like(k)
        n_pairs = q.numel() // 2
        mod._fused_qk_complex_rope_kernel[((n_pairs + 127) // 128,)](
            q, k, freqs, q_out, k_out, n_pairs, heads, head_dim,
            q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2),
            freqs.stride(0), freqs.stride(1), freqs.stride(2), BLOCK=128)
        # the two calls TRI003's message names, with the [tokens, heads, head_dim] -> one-batch
        # unsqueeze it tells the user to do (clones: Liger rotates contiguous inputs in place)
        lq, lk = liger_llama4_vision_rotary_pos_emb(q.clone().unsqueeze(0), k.clone().unsqueeze(0), freqs_cis)
        tq, tk = liger_llama4_text_rotary_pos_emb(q.clone().unsqueeze(0), k.clone().unsqueeze(0), freqs_cis)
        assert torch.equal(lq, tq) and torch.equal(lk, tk)   # one kernel behind both

        def reference(x):
            z = torch.view_as_complex(x.double().cpu().reshape(tokens, heads, head_dim // 2, 2).contiguous())
            return torch.view_as_real(z * freqs_cis.cpu().to(torch.complex128)[:, None, :]).reshape(x.shape)

        # error in units of the output dtype's rounding at each value: |out - ref| / (eps(dtype) * max(|ref|, 1))
        unit = torch.finfo(dtype).eps

        def err(out, x):
            r = reference(x)
            return ((out.double().cpu() - r).abs() / (unit * r.abs().clamp(min=1.0))).max().item()

        errs = {"corpus q": err(q_out, q), "corpus k": err(k_out, k), "liger q": err(lq[0], q), "liger k": err(lk[0], k)}
        between = max((q_out.float() - lq[0].float()).abs().max().item(), (k_out.float() - lk[0].float()).abs().max().item())
        worst = max(worst, *errs.values())
        print(f"{str(dtype)[6:]} [{tokens}, {heads}, {head_dim}] max error vs float64 (in eps of the dtype): "
              + ", ".join(f"{n} {e:.2f}" for n, e in errs.items()) + f"; corpus vs liger max |diff| {between:.2e}")
    ok = worst <= TOLERANCE
    print(f"{'OK' if ok else 'FAIL'}: worst {worst:.2f} eps (tolerance {TOLERANCE}); torch {torch.__version__}, device {args.device}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
