"""Metric names the detectors share, and the lookup of a metric's other names.

Detectors ask for a canonical sm_90 name (Nsight Compute 2025.3.1, checked on an H200). What to
try instead where the name differs (sm_80, sm_100, or a capture such as `--set full` that
collects a sibling metric) is declared by the pattern that reads the metric, in its module's
`FALLBACKS`; `candidates()` merges those declarations with the few shared ones below, in order
of preference.
"""
from __future__ import annotations

from functools import lru_cache

STALL = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"
CPI = "smsp__average_warp_latency_per_inst_issued.ratio"
# The busiest of these is "the memory roof" (% of peak).
MEMORY_UNITS = ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
                "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
                "lts__throughput.avg.pct_of_peak_sustained_elapsed",
                "l1tex__throughput.avg.pct_of_peak_sustained_active")
# Read by the context and the report itself (not by one pattern): the memory and compute roofs,
# the cycles per issued instruction that stall shares divide by, the duration, the SM count.
CONTEXT_METRICS = (*MEMORY_UNITS, CPI, "sm__throughput.avg.pct_of_peak_sustained_elapsed", "gpu__time_duration.sum",
                   "launch__sm_count", "launch__grid_size", "launch__block_size",
                   "device__attribute_compute_capability_major", "device__attribute_compute_capability_minor")
# Read by the context itself, not by one pattern.
SHARED_FALLBACKS: dict[str, tuple[str, ...]] = {
    "launch__sm_count": ("device__attribute_multiprocessor_count",),
}


@lru_cache(maxsize=1)
def _table() -> dict[str, tuple[str, ...]]:
    from tritonify.diagnostics.ncu.patterns import detectors

    table: dict[str, list[str]] = {k: list(v) for k, v in SHARED_FALLBACKS.items()}
    for mod in detectors():
        for name, alternatives in getattr(mod, "FALLBACKS", {}).items():
            have = table.setdefault(name, [])
            have += [a for a in alternatives if a not in have and a != name]
    return {k: tuple(v) for k, v in table.items()}


def candidates(name: str) -> tuple[str, ...]:
    return (name, *_table().get(name, ()))
