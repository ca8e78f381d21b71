"""The GPU a report was taken on (name, driver, clocks, memory), read through nvidia-ml-py.

Recorded with every profile so a number can be traced to its machine, and used to warn when the
clocks were throttled (power cap, thermal slowdown): counters taken then are not comparable.
Without nvidia-ml-py or a driver, `gpu_info()` says so instead of failing.
"""
from __future__ import annotations

from tritonify.infra.nvml import NvmlUnavailable, device_state

# nvmlClocksEventReason bits (nvml.h); idle (0x1) and application-clock settings (0x2) are normal.
THROTTLE_REASONS = {
    0x4: "software power cap",
    0x8: "hardware slowdown",
    0x20: "software thermal slowdown",
    0x40: "hardware thermal slowdown",
    0x80: "hardware power brake",
    0x100: "display clock setting",
}


def throttle_warnings(reasons: int) -> list[str]:
    return [f"clocks throttled: {name}" for bit, name in THROTTLE_REASONS.items() if reasons & bit]


def gpu_info(index: int = 0) -> dict:
    """`infra.nvml.device_state` with `available` and the throttle warnings, or why there is none."""
    try:
        state = device_state(index)
    except NvmlUnavailable as exc:
        return {"available": False, "reason": str(exc)}
    except Exception as exc:  # noqa: BLE001 - a driver that starts but will not answer
        return {"available": False, "reason": f"NVML query failed: {exc}"}
    return {"available": True, **state, "warnings": throttle_warnings(state["clock_event_reasons"] or 0)}
