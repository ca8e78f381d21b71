"""Which GPUs a sweep may use: discovery through nvidia-ml-py, busy GPUs skipped, models never mixed.

A measurement is only comparable with one taken on the same GPU model, so a selection that spans two
models is refused unless the caller asks for it (``allow_mixed``). A GPU that is already running
someone's work would slow every job placed on it, so busy GPUs are skipped unless ``allow_busy``.

Without NVML (no driver, no nvidia-ml-py) ``discover`` returns no devices and a reason, never raises:
the caller turns that into a message. ``cpu_slots`` gives slots for CPU-only runs (the Triton
interpreter, tests), which still get their own ``CUDA_VISIBLE_DEVICES``.
"""
from __future__ import annotations

import socket
from dataclasses import dataclass, field

from tritonify.infra.nvml import NvmlUnavailable, nvml_session, read

BUSY_UTILIZATION_PCT = 10


class SelectionError(ValueError):
    """The GPUs asked for cannot be used as asked (none found, all busy, mixed models); the message says why."""


@dataclass(frozen=True)
class Device:
    """One GPU as NVML sees it (or a simulated record in tests)."""
    index: int
    name: str | None
    uuid: str | None = None
    host: str = field(default_factory=socket.gethostname)
    memory_used_mib: int | None = None
    utilization_pct: int | None = None
    processes: int = 0
    busy: str | None = None          # why it counts as busy, None when idle

    def to_dict(self) -> dict:
        return {"index": self.index, "name": self.name, "uuid": self.uuid, "host": self.host, "busy": self.busy}


@dataclass(frozen=True)
class Slot:
    """One place a job may run: the environment that pins it (``CUDA_VISIBLE_DEVICES``) and what it is."""
    label: str
    env: dict
    model: str | None                # GPU model name; None for a CPU slot
    device: Device | None = None

    def placement(self) -> dict:
        """What every result measured here carries: which host, GPU and pinning measured it."""
        dev = self.device
        return {"slot": self.label, "host": dev.host if dev else socket.gethostname(), "gpu_model": self.model,
                "gpu_uuid": dev.uuid if dev else None, "gpu_index": dev.index if dev else None,
                "cuda_visible_devices": self.env.get("CUDA_VISIBLE_DEVICES")}


def _busy_reason(utilization: int | None, processes: int) -> str | None:
    if processes:
        return f"{processes} compute process(es) running"
    if utilization is not None and utilization >= BUSY_UTILIZATION_PCT:
        return f"{utilization}% utilised"
    return None


def discover(nvml=None) -> tuple[list[Device], str | None]:
    """Every GPU NVML lists, with its busy state; ``([], reason)`` when NVML cannot be used."""
    try:
        with nvml_session(nvml) as nv:
            devices = []
            for index in range(nv.nvmlDeviceGetCount()):
                handle = nv.nvmlDeviceGetHandleByIndex(index)
                util = read(nv.nvmlDeviceGetUtilizationRates, handle)
                mem = read(nv.nvmlDeviceGetMemoryInfo, handle)
                procs = read(nv.nvmlDeviceGetComputeRunningProcesses, handle, default=[]) or []
                utilization = getattr(util, "gpu", None)
                devices.append(Device(index=index, name=read(nv.nvmlDeviceGetName, handle),
                                      uuid=read(nv.nvmlDeviceGetUUID, handle),
                                      memory_used_mib=mem.used // 2**20 if mem is not None else None,
                                      utilization_pct=utilization, processes=len(procs),
                                      busy=_busy_reason(utilization, len(procs))))
            return devices, None
    except NvmlUnavailable as exc:
        return [], str(exc)


def parse_gpus(text: str) -> str | list[int] | int:
    """``all`` -> "all"; ``0,1`` -> [0, 1]; ``cpu:2`` -> 2 (CPU slots); ValueError naming the bad piece."""
    text = (text or "").strip().lower()
    if text == "all":
        return "all"
    if text.startswith("cpu:"):
        count = text[4:]
        if not count.isdigit() or int(count) < 1:
            raise ValueError(f"bad CPU slot count in {text!r}: write cpu:2")
        return int(count)
    indices = []
    for piece in text.split(","):
        piece = piece.strip()
        if not piece.isdigit():
            raise ValueError(f"bad GPU {piece!r}: write all or indices such as 0,1")
        indices.append(int(piece))
    if len(set(indices)) != len(indices):
        raise ValueError(f"GPU listed twice in {text!r}")
    return indices


def select(devices: list[Device], wanted: str | list[int], *, allow_busy: bool = False,
           allow_mixed: bool = False, reason: str | None = None) -> tuple[list[Device], list[str]]:
    """The devices to use and a note per device skipped; SelectionError when nothing usable remains."""
    if not devices:
        raise SelectionError(f"no GPU found: {reason or 'NVML lists none'}")
    by_index = {d.index: d for d in devices}
    if wanted == "all":
        chosen = list(devices)
    else:
        missing = [i for i in wanted if i not in by_index]
        if missing:
            raise SelectionError(f"no GPU {', '.join(map(str, missing))} on this host (it has {len(devices)})")
        chosen = [by_index[i] for i in wanted]
    notes = []
    if not allow_busy:
        notes = [f"GPU {d.index} ({d.name}) skipped: busy, {d.busy}" for d in chosen if d.busy]
        chosen = [d for d in chosen if not d.busy]
        if not chosen:
            raise SelectionError("every GPU asked for is busy: " + "; ".join(notes))
    models = sorted({d.name or "?" for d in chosen})
    if len(models) > 1 and not allow_mixed:
        listing = ", ".join(f"{d.index}: {d.name}" for d in chosen)
        raise SelectionError(f"the GPUs asked for are of {len(models)} models ({listing}); timings from different "
                             "models are not comparable. Pick GPUs of one model (--gpus 0,1), or allow mixing "
                             "explicitly (allow_mixed=True)")
    return chosen, notes


def gpu_slots(devices: list[Device]) -> list[Slot]:
    """One slot per GPU, pinned by its UUID when known (stable across renumbering), else its index."""
    return [Slot(label=f"gpu{d.index}", env={"CUDA_VISIBLE_DEVICES": d.uuid or str(d.index)}, model=d.name, device=d)
            for d in devices]


def cpu_slots(count: int) -> list[Slot]:
    """``count`` CPU slots (interpreter runs, tests); each still pinned to its own ``CUDA_VISIBLE_DEVICES``."""
    if count < 1:
        raise SelectionError("a sweep needs at least one slot")
    return [Slot(label=f"cpu{i}", env={"CUDA_VISIBLE_DEVICES": str(i)}, model=None) for i in range(count)]
