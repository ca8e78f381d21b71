"""What a result was measured on: GPU, driver, clocks, temperature, versions, git state.

A number without its machine is not a number: every result carries these. nvidia-ml-py (pynvml)
gives the driver, clocks and temperature; where NVML is missing the fields say so instead of failing.
"""
from __future__ import annotations

import importlib.metadata
import platform
from pathlib import Path

from tritonify.infra.child_process import run_process


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def versions() -> dict:
    out = {"python": platform.python_version(), "tritonify": None}
    try:
        from tritonify.infra.version import __version__

        out["tritonify"] = __version__
    except ImportError:  # pragma: no cover - the package imports itself
        pass
    for dist in ("torch", "triton", "liger-kernel", "nvidia-ml-py"):
        out[dist] = _version(dist)
    try:
        import torch

        out["cuda"] = torch.version.cuda
    except ImportError:
        out["cuda"] = None
    return out


def _nvml(index: int) -> dict:
    from tritonify.infra.nvml import NvmlUnavailable, device_state

    try:
        return device_state(index)
    except NvmlUnavailable as exc:
        return {"nvml": str(exc)}


def gpu_info(index: int = 0) -> dict:
    """Name, memory, L2, SMs (torch) and driver, clocks, temperature (NVML); ``{"name": None}`` without CUDA."""
    import torch

    if not torch.cuda.is_available():
        return {"name": None, "device": "cpu"}
    props = torch.cuda.get_device_properties(index)
    info = {
        "name": props.name,
        "device": f"cuda:{index}",
        "capability": f"{props.major}.{props.minor}",
        "sms": props.multi_processor_count,
        "memory_gib": round(props.total_memory / 2**30, 1),
        "l2_bytes": getattr(props, "L2_cache_size", None),
    }
    return {**_nvml(index), **info}


def clocks(index: int = 0) -> dict:
    """Clocks, temperature and power now (NVML): read again at the end of a run, under load."""
    keep = ("sm_clock_mhz", "mem_clock_mhz", "temperature_c", "power_w")
    return {k: v for k, v in _nvml(index).items() if k in keep}


def git_state(path: Path) -> dict:
    """Commit and dirty flag of the repository holding ``path`` (None outside git)."""
    folder = Path(path).resolve()
    folder = folder if folder.is_dir() else folder.parent

    def git(*args):
        return run_process(["git", "-C", str(folder), *args], what="git", timeout_s=10, kill_grace_s=0)

    head = git("rev-parse", "HEAD")
    if not head.ok:
        return {"commit": None, "dirty": None}
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": head.stdout.strip(), "dirty": bool(status.stdout.strip())}
