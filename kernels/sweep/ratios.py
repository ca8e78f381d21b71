"""Ratios between sweep results, computed only where both were measured on the same GPU model.

A time on an H100 divided by a time on an H200 says more about the GPUs than about the kernels, so a
ratio across models is refused (with the two models named) rather than computed. Within one job the
harness's own speedups (baseline / kernel) are always same-GPU: they are measured in one process.
The model is the one the job's child reported (``result["gpu"]["name"]``), else its slot's.
"""
from __future__ import annotations

from tritonify.kernels.bench.runner import KERNEL

CPU = "cpu (no GPU)"


class MixedGpuError(ValueError):
    """Two results measured on different GPU models were asked to be compared."""


def gpu_model(result: dict) -> str:
    """The GPU model that measured ``result``; ``cpu (no GPU)`` for a CPU run."""
    name = (result.get("gpu") or {}).get("name") or (result.get("placement") or {}).get("gpu_model")
    return name or CPU


def kernel_medians(result: dict) -> dict[str, float]:
    """Shape label -> the kernel's median time (ms), for the shapes that were timed."""
    out = {}
    for s in result.get("shapes", []):
        timing = s.get("results", {}).get(KERNEL, {}).get("timing")
        if timing and timing.get("p50_ms"):
            out[s["label"]] = timing["p50_ms"]
    return out


def speedup(result: dict, reference: dict, label: str) -> float | None:
    """reference time / result time at ``label`` (> 1: ``result`` is faster); None where either is untimed.

    Raises MixedGpuError when the two were measured on different GPU models.
    """
    mine, theirs = gpu_model(result), gpu_model(reference)
    if mine != theirs:
        raise MixedGpuError(f"not compared: {result.get('job')} ran on {mine}, {reference.get('job')} on {theirs}")
    ms, ref_ms = kernel_medians(result).get(label), kernel_medians(reference).get(label)
    if ms is None or ref_ms is None:
        return None
    return ref_ms / ms


def compare(results: list[dict], reference: dict) -> list[dict]:
    """One row per (result, shape it shares with ``reference``): the speedup, or why it was not computed."""
    rows = []
    ref_labels = set(kernel_medians(reference))
    for result in results:
        if result is reference:
            continue
        for label in kernel_medians(result):
            if label not in ref_labels:
                continue
            row = {"job": result.get("job"), "target": result.get("target"), "shape": label,
                   "gpu_model": gpu_model(result), "reference": reference.get("job")}
            try:
                row["speedup"] = speedup(result, reference, label)
            except MixedGpuError as exc:
                row["speedup"], row["refused"] = None, str(exc)
            rows.append(row)
    return rows
