"""The GPU's measured ceilings: copy bandwidth and bf16 matmul rate, once per machine, cached.

Datasheet rates are leads; every result is shown as a fraction of what this GPU measurably does:
* copy bandwidth: a 1 GiB device-to-device ``copy_`` of random bf16, counting bytes read + written;
* bf16 matmul rate: an 8192x8192x8192 ``torch.matmul`` on random data (2*M*N*K FLOPs).
Both are ``triton.testing.do_bench`` medians (``timing.events_ms``). The cache file (``$TRITONIFY_CACHE_DIR`` or
``~/.cache/tritonify``)/ceilings.json is keyed by GPU name and UUID, so a second machine measures again.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

from tritonify.kernels.bench.timing import events_ms

COPY_BYTES = 1 << 30
MATMUL_N = 8192


def cache_path() -> Path:
    base = os.environ.get("TRITONIFY_CACHE_DIR") or Path.home() / ".cache" / "tritonify"
    return Path(base) / "ceilings.json"


def machine_key(gpu: dict) -> str:
    return f"{gpu.get('name', 'unknown')}|{gpu.get('uuid') or 'no-uuid'}"


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _write_atomic(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True))
    os.replace(tmp, path)


def _copy_ms(torch) -> float:
    src = torch.randn(COPY_BYTES // 2, device="cuda", dtype=torch.bfloat16)
    dst = torch.empty_like(src)
    return events_ms(lambda: dst.copy_(src), warmup_ms=25, rep_ms=200, statistic="median")


def _matmul_ms(torch) -> float:
    a = torch.randn(MATMUL_N, MATMUL_N, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(MATMUL_N, MATMUL_N, device="cuda", dtype=torch.bfloat16)
    return events_ms(lambda: torch.matmul(a, b), warmup_ms=25, rep_ms=200, statistic="median")


def measure() -> dict:
    """Measure both ceilings on the current CUDA device (about two seconds)."""
    import torch

    copy_ms = _copy_ms(torch)
    mm_ms = _matmul_ms(torch)
    torch.cuda.empty_cache()
    return {
        "copy_gbps": 2 * COPY_BYTES / (copy_ms * 1e-3) / 1e9,
        "bf16_tflops": 2 * MATMUL_N ** 3 / (mm_ms * 1e-3) / 1e12,
        "copy_ms": copy_ms,
        "matmul_ms": mm_ms,
        "method": ("do_bench median; copy: 1 GiB bf16 device-to-device copy_, bytes read + written; "
                   f"matmul: {MATMUL_N}^3 bf16 torch.matmul on random data, 2*N^3 FLOPs"),
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def get(gpu: dict, *, refresh: bool = False, path: Path | None = None) -> dict:
    """The ceilings for this machine: from the cache, else measured now and cached."""
    path = path or cache_path()
    data = _read(path)
    key = machine_key(gpu)
    if not refresh and isinstance(data.get(key), dict) and "copy_gbps" in data[key]:
        return dict(data[key], cached=True)
    entry = measure()
    data[key] = entry
    try:
        _write_atomic(path, data)
    except OSError:
        pass  # a read-only home still gets its numbers, just not cached
    return dict(entry, cached=False)
