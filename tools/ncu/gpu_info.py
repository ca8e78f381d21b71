"""The GPU a report was taken on (name, driver, clocks, memory), read through nvidia-ml-py.

Recorded with every profile so a number can be traced to its machine, and used to warn when the
clocks were throttled (power cap, thermal slowdown): counters taken then are not comparable.
Without nvidia-ml-py or a driver, `gpu_info()` says so instead of failing.
"""
from __future__ import annotations

from tritonify.infra.nvml import NvmlUnavailable, nvml_session, text

# nvmlClocksEventReason bits (nvml.h); idle (0x1) and application-clock settings (0x2) are normal.
THROTTLE_REASONS = {
    0x4: "software power cap",
    0x8: "hardware slowdown",
    0x20: "software thermal slowdown",
    0x40: "hardware thermal slowdown",
    0x80: "hardware power brake",
    0x100: "display clock setting",
}


def _text(value) -> str:
    return str(text(value))


def throttle_warnings(reasons: int) -> list[str]:
    return [f"clocks throttled: {name}" for bit, name in THROTTLE_REASONS.items() if reasons & bit]


def gpu_info(index: int = 0) -> dict:
    try:
        with nvml_session() as nv:
            try:
                h = nv.nvmlDeviceGetHandleByIndex(index)
                info = {
                    "available": True,
                    "name": _text(nv.nvmlDeviceGetName(h)),
                    "driver": _text(nv.nvmlSystemGetDriverVersion()),
                    "sm_clock_mhz": nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM),
                    "sm_clock_max_mhz": nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_SM),
                    "memory_clock_mhz": nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM),
                    "memory_total_mib": nv.nvmlDeviceGetMemoryInfo(h).total // (1 << 20),
                }
                getter = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
                    getattr(nv, "nvmlDeviceGetCurrentClocksThrottleReasons", None)
                reasons = int(getter(h)) if getter else 0
            except Exception as exc:
                return {"available": False, "reason": f"NVML query failed: {exc}"}
    except NvmlUnavailable as exc:
        return {"available": False, "reason": str(exc)}
    info["clock_event_reasons"] = reasons
    info["warnings"] = throttle_warnings(reasons)
    return info
