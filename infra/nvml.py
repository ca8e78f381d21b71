"""One NVML session (nvidia-ml-py, imported as `pynvml`) for every part of Tritonify that reads the GPU:
the profiler's clock check, the compile inspector's default target, the sweep's device list and the
benchmark's environment record; and one reader of a GPU's identity and clock state (`device_state`),
which the profiler and the benchmark both record.

    with nvml_session() as nv:          # NvmlUnavailable(reason) when there is no NVML
        handle = nv.nvmlDeviceGetHandleByIndex(0)
        name = read(nv.nvmlDeviceGetName, handle)

NVML needs no CUDA context and imports no torch. The session is shut down when the block ends,
whatever happens in it.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

NOT_INSTALLED = "nvidia-ml-py is not installed (pip install nvidia-ml-py)"


class NvmlUnavailable(Exception):
    """NVML cannot be used here; the message says why (no nvidia-ml-py, no driver)."""


@contextmanager
def nvml_session(module: Any = None) -> Iterator[Any]:
    """The `pynvml` module (or `module`, e.g. a test double), initialised for the block."""
    if module is None:
        try:
            import pynvml as module
        except ImportError:
            raise NvmlUnavailable(NOT_INSTALLED) from None
    try:
        module.nvmlInit()
    except Exception as exc:  # NVMLError_LibraryNotFound / DriverNotLoaded on machines without a driver
        raise NvmlUnavailable(f"NVML is unavailable ({type(exc).__name__}: {exc}): "
                              "no NVIDIA driver on this machine?") from None
    try:
        yield module
    finally:
        try:
            module.nvmlShutdown()
        except Exception:  # noqa: S110 - nothing to do when NVML will not shut down cleanly
            pass


def text(value: Any) -> Any:
    """NVML returns bytes in older bindings and str in newer ones."""
    return value.decode() if isinstance(value, bytes) else value


def read(fn, *args, default: Any = None) -> Any:
    """`fn(*args)` as text where it is bytes, or `default` when this GPU or driver does not answer it."""
    try:
        return text(fn(*args))
    except Exception:  # noqa: BLE001 - NVMLError_NotSupported and friends: the field is unknown
        return default


def visible_handle(nv: Any, index: int) -> Any:
    """NVML's handle for the process's CUDA device `index`. NVML numbers every GPU of the machine while
    CUDA numbers only those in CUDA_VISIBLE_DEVICES, so a process pinned to GPU 3 sees it as cuda:0:
    map through the variable (indices or UUIDs) before asking NVML."""
    import os

    visible = [v.strip() for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip()]
    if index < len(visible):
        entry = visible[index]
        if entry.isdigit():
            return nv.nvmlDeviceGetHandleByIndex(int(entry))
        if entry.startswith(("GPU-", "MIG-")):
            return nv.nvmlDeviceGetHandleByUUID(entry)
    return nv.nvmlDeviceGetHandleByIndex(index)


def device_state(index: int = 0, module: Any = None) -> dict:
    """What the GPU is and how it is clocked now: name, UUID, driver, SM and memory clocks (and the SM
    maximum), total memory, temperature, power, and NVML's clock-event (throttle) reason bits. A field
    this GPU or driver does not answer is None. Raises NvmlUnavailable where there is no NVML."""
    with nvml_session(module) as nv:
        h = visible_handle(nv, index)
        memory = read(nv.nvmlDeviceGetMemoryInfo, h)
        milliwatts = read(nv.nvmlDeviceGetPowerUsage, h)
        reasons_fn = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
            getattr(nv, "nvmlDeviceGetCurrentClocksThrottleReasons", None)
        reasons = read(reasons_fn, h) if reasons_fn else None
        return {
            "name": read(nv.nvmlDeviceGetName, h),
            "uuid": read(nv.nvmlDeviceGetUUID, h),
            "driver": read(nv.nvmlSystemGetDriverVersion),
            "sm_clock_mhz": read(nv.nvmlDeviceGetClockInfo, h, nv.NVML_CLOCK_SM),
            "max_sm_clock_mhz": read(nv.nvmlDeviceGetMaxClockInfo, h, nv.NVML_CLOCK_SM),
            "mem_clock_mhz": read(nv.nvmlDeviceGetClockInfo, h, nv.NVML_CLOCK_MEM),
            "memory_total_mib": memory.total // (1 << 20) if memory is not None else None,
            "temperature_c": read(nv.nvmlDeviceGetTemperature, h, nv.NVML_TEMPERATURE_GPU),
            "power_w": milliwatts / 1000 if milliwatts is not None else None,
            "clock_event_reasons": int(reasons) if reasons is not None else None,
        }
