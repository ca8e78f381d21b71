"""GPU targets the compiler can be asked for, and the per-SM limits occupancy depends on.

Figures are the CUDA C++ Programming Guide's "Technical Specifications per Compute Capability"
table and the CUDA Occupancy Calculator's allocation rules (cuda_occupancy.h):

* registers: 64 K 32-bit registers per SM, split over 4 sub-partitions; a warp's registers are
  allocated in units of 256 (8 per thread); a thread may use at most 255;
* shared memory: the largest carve-out per SM (sm_80 164 KB, sm_90/sm_100 228 KB, sm_120 100 KB),
  allocated in 128-byte units, plus 1 KB the driver reserves per block (sm_80 and later);
* warps per SM: 64 (sm_80, sm_90, sm_100), 48 (sm_86, sm_89, sm_120); blocks per SM: 32 (24 on
  sm_86/sm_89/sm_120).
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Arch:
    """One compute capability as the occupancy calculator sees it."""

    capability: int            # 90 for sm_90
    name: str                  # "sm_90"
    example: str               # a GPU of that capability, for messages
    max_warps_per_sm: int
    max_blocks_per_sm: int
    smem_per_sm: int           # bytes, largest carve-out
    max_smem_per_block: int    # bytes a block may opt in to (dynamic + static)
    regs_per_sm: int = 65536
    reg_alloc_unit: int = 256  # registers per warp, per allocation
    max_regs_per_thread: int = 255
    sub_partitions: int = 4
    smem_alloc_unit: int = 128
    reserved_smem_per_block: int = 1024


ARCHS: dict[int, Arch] = {a.capability: a for a in (
    Arch(80, "sm_80", "A100", 64, 32, 167936, 166912),
    Arch(86, "sm_86", "RTX 3090 / A10", 48, 16, 102400, 101376),
    Arch(89, "sm_89", "L4 / RTX 4090", 48, 24, 102400, 101376),
    Arch(90, "sm_90", "H100 / H200", 64, 32, 233472, 232448),
    Arch(100, "sm_100", "B200", 64, 32, 233472, 232448),
    Arch(120, "sm_120", "RTX 5090", 48, 32, 102400, 101376),
)}

DEFAULT_CAPABILITY = 90

_ALIASES = {"a100": 80, "a10": 86, "l4": 89, "h100": 90, "h200": 90, "h800": 90, "b200": 100, "gb200": 100}


class TargetError(ValueError):
    """A target name that is not one of ARCHS."""


def parse_target(text: str | int) -> Arch:
    """`sm_90`, `sm_90a`, `90`, `9.0`, `cuda:90` or a GPU name (`h100`) -> Arch."""
    if isinstance(text, int):
        cap = text
    else:
        s = str(text).strip().lower()
        if s in _ALIASES:
            cap = _ALIASES[s]
        else:
            m = re.fullmatch(r"(?:cuda[:/])?(?:sm_?|compute_)?(\d+)(?:\.(\d))?[af]?", s)
            if not m:
                raise TargetError(f"unknown target {text!r}: use one of {', '.join(a.name for a in ARCHS.values())}")
            cap = int(m.group(1)) * 10 + int(m.group(2)) if m.group(2) else int(m.group(1))
    if cap not in ARCHS:
        raise TargetError(f"target sm_{cap} is not supported: use one of {', '.join(a.name for a in ARCHS.values())}")
    return ARCHS[cap]


def local_gpu_capability() -> int | None:
    """Compute capability of GPU 0 through NVML (nvidia-ml-py), or None when there is none.

    Only NVML is asked: it needs no CUDA context and does not import torch."""
    from tritonify.infra.nvml import NvmlUnavailable, nvml_session

    try:
        with nvml_session() as nv:
            major, minor = nv.nvmlDeviceGetCudaComputeCapability(nv.nvmlDeviceGetHandleByIndex(0))
            return int(major) * 10 + int(minor)
    except NvmlUnavailable:
        return None
    except Exception:  # noqa: BLE001 - no device, a broken install: no local GPU
        return None


def default_target() -> tuple[Arch, str]:
    """The local GPU's architecture when it is one of ARCHS, else sm_90; and why."""
    cap = local_gpu_capability()
    if cap in ARCHS:
        return ARCHS[cap], f"local GPU (sm_{cap})"
    if cap is not None:
        return ARCHS[DEFAULT_CAPABILITY], f"local GPU sm_{cap} is not supported; default sm_90"
    return ARCHS[DEFAULT_CAPABILITY], "no local GPU; default sm_90"
