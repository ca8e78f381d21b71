"""vLLM 0.33.0's Triton decode attention (`vllm/v1/attention/ops/triton_decode_attention.py`), its
file loaded alone: vLLM itself needs its compiled extension, so the file's two vLLM imports
(`vllm.platforms.current_platform`, `vllm.triton_utils`'s `tl, triton`) are answered by a CUDA
platform object and `import triton`; nothing else of the file changes. Launched as vLLM's decode
step calls it: a paged KV cache (pages of 16 tokens, handed out in a shuffled order as a cache
allocator does after some churn), a block table per request, `num_kv_splits` = 8 as vLLM's test.

The file comes from `$RK_SRC` (the device's copy of the pinned wheel's file, made by sources.py) or
`$TRITONIFY_CORPUS/vllm`.
"""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

from benchmarks.realkernels.case import Candidate, Case, patched_copy

FILE = "vllm/v1/attention/ops/triton_decode_attention.py"
SMALL = os.environ.get("RK_SMALL") == "1"
DEV = os.environ.get("RK_DEVICE", "cuda")
# each replacement is one line, so the loaded file's line numbers are the pinned file's
IMPORTS = {
    "from vllm.platforms import current_platform\n":
        "current_platform = type('CudaPlatform', (), {'is_rocm': lambda self: False})()  # vLLM's answer on CUDA\n",
    "from vllm.triton_utils import tl, triton\n": "import triton; import triton.language as tl\n",
}


def source_path() -> Path:
    for root in (os.environ.get("RK_SRC") and os.path.join(os.environ["RK_SRC"], "vllm"), os.path.join(os.environ.get("TRITONIFY_CORPUS", "/work/corpus"), "vllm")):
        if root and (Path(root) / FILE).is_file():
            return Path(root) / FILE
    raise FileNotFoundError(f"{FILE}: not under $RK_SRC or $TRITONIFY_CORPUS/vllm (run benchmarks/realkernels/sources.py)")


_MODULE = []


def load():
    """The pinned file as a module of its own, written to `case.patch_dir()` (ncu's source page names
    that copy; its two import lines are replaced line for line, so its line numbers are the pinned
    file's)."""
    if _MODULE:
        return _MODULE[0]
    src = source_path()
    text = src.read_text()
    for old, new in IMPORTS.items():
        if old not in text:
            raise RuntimeError(f"{src}: the import {old.strip()!r} this loader replaces is not there")
        text = text.replace(old, new)
    from benchmarks.realkernels.case import patch_dir

    out = patch_dir() / "triton_decode_attention.py"   # same name, so the report names the file as vLLM does
    out.write_text(text)
    spec = importlib.util.spec_from_file_location("vllm_triton_decode_attention", out)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    _MODULE.append(module)
    return module


def _decode(hq, hkv, batch=32, seq=4096, hd=128, page=16, splits=8):
    import torch

    if SMALL:
        batch, seq, hq, hkv, hd = 2, 128, 4 if hq > hkv else 2, 1 if hq > hkv else 2, 64
    mod = load()
    dtype = torch.float32 if DEV == "cpu" else torch.bfloat16
    pages_per_req = seq // page
    n_pages = batch * pages_per_req
    k_cache = torch.randn(n_pages, page, hkv, hd, device=DEV).to(dtype)
    v_cache = torch.randn(n_pages, page, hkv, hd, device=DEV).to(dtype)
    block_table = torch.randperm(n_pages, device=DEV).to(torch.int32).view(batch, pages_per_req)
    seq_lens = torch.full((batch,), seq, device=DEV, dtype=torch.int32)
    q = torch.randn(batch, hq, hd, device=DEV).to(dtype)
    scale = hd ** -0.5

    def buffers(n_splits):
        return (torch.empty(batch, hq, hd, device=DEV, dtype=dtype),
                torch.empty(batch, hq, device=DEV, dtype=torch.float32),
                torch.empty(batch, hq, n_splits, hd + 1, device=DEV, dtype=torch.float32))

    o, lse, logits = buffers(splits)

    k_scale = torch.tensor(1.0, dtype=torch.float32, device=DEV)   # vLLM passes the layer's KV scales

    def original():
        mod.decode_attention_fwd(q, k_cache, v_cache, o, lse, block_table, seq_lens, logits, splits, scale, page,
                                 0.0, k_scale, k_scale)
        return o

    def reference():
        idx = (block_table.long()[:, :, None] * page + torch.arange(page, device=DEV)).reshape(batch, -1)
        k = k_cache.reshape(-1, hkv, hd)[idx].double()       # [batch, seq, hkv, hd]
        v = v_cache.reshape(-1, hkv, hd)[idx].double()
        group = hq // hkv
        k = k.repeat_interleave(group, dim=2)
        v = v.repeat_interleave(group, dim=2)
        s = torch.einsum("bhd,bshd->bhs", q.double(), k) * scale
        return torch.einsum("bhs,bshd->bhd", torch.softmax(s, dim=-1), v)

    def eager():   # what a decode step without the kernel does: gather the pages, then SDPA
        idx = (block_table.long()[:, :, None] * page + torch.arange(page, device=DEV)).reshape(batch, -1)
        k = k_cache.reshape(-1, hkv, hd)[idx].transpose(1, 2)
        v = v_cache.reshape(-1, hkv, hd)[idx].transpose(1, 2)
        return torch.nn.functional.scaled_dot_product_attention(
            q[:, :, None], k, v, scale=scale, enable_gqa=hq != hkv)[:, :, 0]

    cands = {}
    stage1 = mod._decode_grouped_att_m_fwd if hq != hkv else mod._decode_att_m_fwd
    for n_splits in (16, 32):
        o2, lse2, logits2 = buffers(n_splits)
        cands[f"kv_splits_{n_splits}"] = Candidate(
            "E", f"num_kv_splits {splits} -> {n_splits}: more programs, each with a shorter chain of dependent "
                 "page-table and KV loads",
            lambda n=n_splits, o2=o2, lse2=lse2, lg=logits2: (
                mod.decode_attention_fwd(q, k_cache, v_cache, o2, lse2, block_table, seq_lens, lg, n, scale, page,
                                         0.0, k_scale, k_scale), o2)[1])
    anchor = "num_stages = 2" if hq != hkv else "num_stages=2,"
    for stages in (3, 4):
        fixed = patched_copy(stage1, {anchor: anchor.replace("2", "STAGES")}, {"STAGES": stages})
        o3, lse3, logits3 = buffers(splits)

        def run(fixed=fixed, o3=o3, lse3=lse3, lg=logits3):
            args = (q, k_cache, v_cache, lg, block_table, seq_lens, splits, scale, page, 0.0, k_scale, k_scale)
            fixed(*args)
            mod._decode_softmax_reducev_fwd(lg, q, o3, lse3, v_cache, seq_lens, splits)
            return o3
        cands[f"num_stages_{stages}"] = Candidate(
            "E", f"num_stages 2 -> {stages} in the stage-1 launcher: the next blocks' page numbers and KV "
                 "loads issued while this block computes", run)
    kv_bytes = float(k_cache.numel() * k_cache.element_size() * 2)
    return Case(original, reference, eager, None, cands, tolerance=1e-2, bytes_moved=kv_bytes,
                notes="the whole decode call (stage 1 then stage 2) is checked and timed")


def decode_grouped():
    return _decode(hq=32, hkv=8)


def decode_mha():
    return _decode(hq=32, hkv=32)
