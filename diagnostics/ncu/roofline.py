"""A launch's roofline point, from the counters ncu's SpeedOfLight_RooflineChart section captures.

Why: the patterns say what is wrong; the roofline point says how far the kernel is from what the
GPU could do at its arithmetic intensity, and whether the memory roof or the compute roof is the
one in the way. Nothing is measured here: every number comes from the launch's raw-page metrics.

How the numbers are made (the same counters and formulas ncu's own roofline chart uses):

* achieved FLOP/s per precision = (add + mul + 2 * fma thread instructions) per elapsed SMSP cycle
  (`smsp__sass_thread_inst_executed_op_{d,f,h}{add,mul,fma}_pred_on.sum.per_cycle_elapsed`) times
  the SMSP clock (`smsp__cycles_elapsed.avg.per_second`); where only the `.sum` counts were
  captured, the counts divided by `gpu__time_duration.sum`;
* peak FLOP/s per precision = 2 * `sm__sass_thread_inst_executed_op_{d,f,h}fma_pred_on.sum.peak_sustained`
  (FMA thread instructions per cycle on the whole GPU) times the SM clock
  (`sm__cycles_elapsed.avg.per_second`); the `.avg` form is per SM, times the SM count;
* DRAM bytes/s = `dram__bytes.sum.per_second` (else read + write bytes over the duration); its peak
  = `dram__bytes.sum.peak_sustained` (bytes per DRAM cycle) times `dram__cycles_elapsed.avg.per_second`;
* intensity = FLOP/s / DRAM bytes/s of the precision that is nearest its own roof; ridge point =
  that precision's peak FLOP/s / peak bytes/s; below the ridge the kernel is memory-bound.

Tensor-core work (HMMA/GMMA) runs on the tensor pipe, which these counters do not count in FLOPs.
When the tensor pipe is busier (in % of its peak) than any FP pipe, the point is reported as
`precision: "tensor"`, with the tensor pipe's utilisation against DRAM's deciding the bound, and
`note` says so. A metric that is missing (a lean capture, another GPU) leaves its field None and
says why in `reason`; it never raises.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from tritonify.diagnostics.ncu.raw_page import Launch

PRECISIONS = {"fp32": "f", "fp64": "d", "fp16": "h"}
OPS = ("add", "mul", "fma")
SMSP_RATE = "smsp__sass_thread_inst_executed_op_{}{}_pred_on.sum.per_cycle_elapsed"
SMSP_COUNT = "smsp__sass_thread_inst_executed_op_{}{}_pred_on.sum"
SMSP_HZ = "smsp__cycles_elapsed.avg.per_second"
SM_HZ = "sm__cycles_elapsed.avg.per_second"
PEAK_FMA_SUM = "sm__sass_thread_inst_executed_op_{}fma_pred_on.sum.peak_sustained"
PEAK_FMA_AVG = "sm__sass_thread_inst_executed_op_{}fma_pred_on.avg.peak_sustained"
PEAK_FLOP_X2 = "derived__sm__sass_thread_inst_executed_op_{}fma_pred_on_x2"   # ncu's own, FLOP/cycle
SM_COUNT = ("launch__sm_count", "device__attribute_multiprocessor_count")
DURATION_NS = "gpu__time_duration.sum"
DRAM_RATE = "dram__bytes.sum.per_second"
DRAM_PEAK_PER_CYCLE = "dram__bytes.sum.peak_sustained"
DRAM_HZ = "dram__cycles_elapsed.avg.per_second"
DRAM_PCT = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"
TENSOR_PCT = ("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
              "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
              "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed",
              "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active")
# What a capture needs for the point (what `tritonify profile` asks ncu for by name).
METRICS = (*(SMSP_RATE.format(p, op) for p in PRECISIONS.values() for op in OPS), SMSP_HZ, SM_HZ,
           *(PEAK_FMA_SUM.format(p) for p in PRECISIONS.values()), DURATION_NS, DRAM_RATE, DRAM_PEAK_PER_CYCLE,
           DRAM_HZ, DRAM_PCT, TENSOR_PCT[0])
TENSOR_MIN_PCT = 1.0   # below this the tensor pipe is idle noise, never the kernel's work


@dataclass
class Roofline:
    """One launch's roofline point; None where the capture lacks what a field needs."""

    intensity_flop_per_byte: float | None = None
    achieved_flops: float | None = None
    achieved_bytes_per_s: float | None = None
    peak_flops: dict[str, float | None] = field(default_factory=lambda: dict.fromkeys(PRECISIONS))
    peak_bytes_per_s: float | None = None
    ridge_point: float | None = None
    bound: str | None = None            # "memory" | "compute"
    pct_of_roof: float | None = None    # achieved / the roof at this intensity, in %
    precision: str | None = None        # "fp32" | "fp64" | "fp16" | "tensor"
    flops_by_precision: dict[str, float | None] = field(default_factory=lambda: dict.fromkeys(PRECISIONS))
    tensor_pipe_pct: float | None = None
    note: str = ""
    reason: str | None = None           # why the point is incomplete, when it is

    @property
    def complete(self) -> bool:
        return self.bound is not None

    def summary(self) -> str:
        """One line: `X FLOP/byte, Y GB/s (Z% of DRAM roof), memory-bound`."""
        if not self.complete:
            return f"no roofline data: {self.reason}"
        parts = []
        if self.intensity_flop_per_byte is not None and self.precision != "tensor":
            parts.append(f"{_short(self.intensity_flop_per_byte)} FLOP/byte ({self.precision})")
        if self.achieved_bytes_per_s is not None:
            dram = (f" ({100 * self.achieved_bytes_per_s / self.peak_bytes_per_s:.0f}% of DRAM roof)"
                    if self.peak_bytes_per_s else "")
            parts.append(f"{_gbps(self.achieved_bytes_per_s)} GB/s{dram}")
        if self.precision == "tensor":
            parts.append(f"tensor pipe {self.tensor_pipe_pct:.0f}% busy")
        elif self.achieved_flops is not None:
            parts.append(f"{self.achieved_flops / 1e12:.3g} TFLOP/s")
        parts.append(f"{self.bound}-bound ({self.pct_of_roof:.0f}% of roof)")
        return ", ".join(parts)

    def to_dict(self) -> dict:
        return {
            "available": self.complete,
            "intensity_flop_per_byte": _round(self.intensity_flop_per_byte),
            "achieved_flops": _round(self.achieved_flops),
            "achieved_bytes_per_s": _round(self.achieved_bytes_per_s),
            "peak_flops": {k: _round(v) for k, v in self.peak_flops.items()},
            "peak_bytes_per_s": _round(self.peak_bytes_per_s),
            "ridge_point": _round(self.ridge_point),
            "bound": self.bound,
            "pct_of_roof": _round(self.pct_of_roof),
            "precision": self.precision,
            "flops_by_precision": {k: _round(v) for k, v in self.flops_by_precision.items()},
            "tensor_pipe_pct": _round(self.tensor_pipe_pct),
            "summary": self.summary(),
            "note": self.note,
            "reason": self.reason,
        }


def _round(value: float | None) -> float | None:
    return None if value is None else float(f"{value:.4g}")


def _short(value: float) -> str:
    return f"{value:.3g}"


def _gbps(bytes_per_s: float) -> str:
    gbps = bytes_per_s / 1e9
    return f"{gbps:,.0f}" if gbps >= 10 else f"{gbps:.3g}"


def achieved_flops(launch: Launch, letter: str) -> float | None:
    """FLOP/s of one precision (`f`, `d`, `h`): None when its counters were not captured."""
    hz = launch.get(SMSP_HZ)
    rates = [launch.get(SMSP_RATE.format(letter, op)) for op in OPS]
    if hz and all(r is not None for r in rates):
        return (rates[0] + rates[1] + 2 * rates[2]) * hz
    counts = [launch.get(SMSP_COUNT.format(letter, op)) for op in OPS]
    duration_ns = launch.get(DURATION_NS)
    if duration_ns and all(c is not None for c in counts):
        return (counts[0] + counts[1] + 2 * counts[2]) / (duration_ns * 1e-9)
    return None


def peak_flops(launch: Launch, letter: str) -> float | None:
    """Peak FLOP/s of one precision on the FP pipes (an FMA is two FLOPs), at the SM clock of the run."""
    hz = launch.get(SM_HZ)
    if not hz:
        return None
    per_cycle = launch.get(PEAK_FMA_SUM.format(letter))
    if per_cycle is not None:
        return 2 * per_cycle * hz
    per_sm, sms = launch.get(PEAK_FMA_AVG.format(letter)), launch.get(*SM_COUNT)
    if per_sm is not None and sms:
        return 2 * per_sm * sms * hz
    x2 = launch.get(PEAK_FLOP_X2.format(letter))
    return x2 * hz if x2 else None


def dram_bytes_per_s(launch: Launch) -> float | None:
    rate = launch.get(DRAM_RATE)
    if rate is not None:
        return rate
    duration_ns = launch.get(DURATION_NS)
    total = launch.get("dram__bytes.sum")
    if total is None:
        read, write = launch.get("dram__bytes_read.sum"), launch.get("dram__bytes_write.sum")
        total = read + write if read is not None and write is not None else None
    return total / (duration_ns * 1e-9) if total is not None and duration_ns else None


def peak_dram_bytes_per_s(launch: Launch) -> float | None:
    per_cycle, hz = launch.get(DRAM_PEAK_PER_CYCLE), launch.get(DRAM_HZ)
    return per_cycle * hz if per_cycle and hz else None


def roofline_point(launch: Launch) -> Roofline:
    """The launch's roofline point. Never raises: what cannot be computed is None, with a reason."""
    r = Roofline()
    r.achieved_bytes_per_s = dram_bytes_per_s(launch)
    r.peak_bytes_per_s = peak_dram_bytes_per_s(launch)
    for name, letter in PRECISIONS.items():
        r.flops_by_precision[name] = achieved_flops(launch, letter)
        r.peak_flops[name] = peak_flops(launch, letter)
    r.tensor_pipe_pct = launch.get(*TENSOR_PCT)

    missing = []
    if r.achieved_bytes_per_s is None:
        missing.append("DRAM bytes (dram__bytes.sum.per_second, or dram__bytes_read/write.sum with gpu__time_duration.sum)")
    if r.peak_bytes_per_s is None:
        missing.append(f"the DRAM peak ({DRAM_PEAK_PER_CYCLE} and {DRAM_HZ})")
    if r.flops_by_precision["fp32"] is None and r.flops_by_precision["fp64"] is None:
        missing.append("FP instruction counters (smsp__sass_thread_inst_executed_op_{f,d}{add,mul,fma}_pred_on)")
    if r.peak_flops["fp32"] is None and r.peak_flops["fp64"] is None:
        missing.append(f"the FP peaks ({PEAK_FMA_SUM.format('f')} and {SM_HZ})")
    if missing:
        r.reason = ("the capture lacks " + "; ".join(missing)
                    + " (capture the SpeedOfLight_RooflineChart section: `tritonify profile` and --set full do)")
        return r

    # The precision nearest its own roof is the one whose roof limits the kernel.
    usage = {name: flops / r.peak_flops[name] for name, flops in r.flops_by_precision.items()
             if flops is not None and r.peak_flops.get(name)}
    if not usage:
        r.reason = "no precision has both its FP instruction counters and its peak in this capture"
        return r
    precision = max(usage, key=usage.get) if max(usage.values()) > 0 else None
    tensor = r.tensor_pipe_pct or 0.0
    if tensor >= TENSOR_MIN_PCT and tensor / 100 > max(usage.values()):
        return _tensor_point(launch, r, precision)
    if precision is None:
        precision = "fp32" if "fp32" in usage else next(iter(usage))
        r.note = "no floating-point add, mul or fma was counted: the point sits at zero intensity"
    r.precision = precision
    r.achieved_flops = r.flops_by_precision[precision]
    peak = r.peak_flops[precision]
    bw = r.achieved_bytes_per_s
    r.ridge_point = peak / r.peak_bytes_per_s
    if bw > 0:
        r.intensity_flop_per_byte = r.achieved_flops / bw
        r.bound = "memory" if r.intensity_flop_per_byte < r.ridge_point else "compute"
        roof = min(peak, r.intensity_flop_per_byte * r.peak_bytes_per_s)
        # at zero intensity the memory roof is zero FLOP/s: say how near the DRAM roof the bytes are
        r.pct_of_roof = 100 * (r.achieved_flops / roof if roof > 0 else bw / r.peak_bytes_per_s)
    else:
        r.bound = "compute"     # no DRAM traffic at all: only the compute roof applies
        r.pct_of_roof = 100 * r.achieved_flops / peak
        r.note = (r.note + "; " if r.note else "") + "no DRAM traffic was counted: intensity is unbounded"
    if tensor >= TENSOR_MIN_PCT:
        r.note = (r.note + "; " if r.note else "") + (
            f"the tensor pipe was also {tensor:.0f}% busy; tensor-core FLOPs are not in these counters")
    return r


def _tensor_point(launch: Launch, r: Roofline, fp_precision: str | None) -> Roofline:
    """A tensor-core kernel: its FLOPs are not countable from the FP counters, so the bound is the
    busier of the tensor pipe and DRAM, each in % of its own peak (as ncu's Speed Of Light does)."""
    r.precision = "tensor"
    r.achieved_flops = r.flops_by_precision[fp_precision] if fp_precision else 0.0
    if r.achieved_bytes_per_s:
        r.intensity_flop_per_byte = r.achieved_flops / r.achieved_bytes_per_s
    dram_pct = launch.get(DRAM_PCT)
    if dram_pct is None:
        dram_pct = 100 * r.achieved_bytes_per_s / r.peak_bytes_per_s
    r.bound = "compute" if r.tensor_pipe_pct >= dram_pct else "memory"
    r.pct_of_roof = max(r.tensor_pipe_pct, dram_pct)
    r.note = (f"tensor-core work (HMMA/GMMA) is not counted in FLOPs by ncu's FP instruction counters: "
              f"the tensor pipe was {r.tensor_pipe_pct:.0f}% busy against DRAM at {dram_pct:.0f}% of its peak, "
              f"and intensity_flop_per_byte counts only the non-tensor FP work")
    return r
