"""Timers: how long one call takes, as the median with the p20/p80 spread, measured twice.

* ``GpuTimer`` (the only source of GPU numbers): ``triton.testing.do_bench`` (CUDA events, warm-up,
  the L2 flushed before every repetition), or, for calls shorter than ``graph_below_ms`` (0.5 ms),
  CUDA-graph replay: one graph holds about 1 ms of calls (rotating over the input sets), ``do_bench``
  times its replays (L2 flushed before each) and the time is divided by the calls per replay. Graphs
  keep the launcher's Python time out of the number: with plain events, a launcher that takes longer
  on the host than the flush takes on the GPU leaves the GPU idle inside the timed region. (Seen on the
  H200, 2026-11-29: Liger's RMSNorm at 16384x4096, about 65 us of GPU work, gave p20/p50/p80 of
  0.138/0.152/0.187 ms under do_bench in one run and 0.069/0.121/0.143 in the next, while graph-timed
  shapes stayed within 1%; graph replay then read 0.0645/0.0646/0.0647.)
* ``WallClockTimer``: ``time.perf_counter`` on the host. It exists so the harness can be exercised
  without a GPU; every result it produces is marked ``gpu_measurement: false``.

Noise check: each measurement is taken in two passes; the reported quantiles are the second pass's
(the first doubles as a warm-up). The spread is the larger of the pass-to-pass difference of medians
and the p20-p80 width over the median; a spread over ``NOISE_LIMIT`` (3%) flags the result as noisy.
"""
from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

NOISE_LIMIT = 0.03       # 3%: pass-to-pass difference of medians that flags a result
QUANTILES = [0.2, 0.5, 0.8]


class TimingUnavailable(RuntimeError):
    """Timing was asked for where it cannot be done (no CUDA GPU and no other timer chosen)."""


@dataclass
class Timing:
    p20_ms: float
    p50_ms: float
    p80_ms: float
    pass_medians_ms: list[float]
    method: str                    # "do_bench", "cuda_graph", "wallclock"
    gpu_measurement: bool
    calls_per_sample: int = 1      # calls in one timed sample (graph replays hold several)
    note: str = ""
    noisy: bool = field(init=False)
    pass_spread: float = field(init=False)       # |median1 - median2| / min
    quantile_spread: float = field(init=False)   # (p80 - p20) / p50

    def __post_init__(self) -> None:
        a, b = self.pass_medians_ms[0], self.pass_medians_ms[-1]
        low = min(a, b)
        self.pass_spread = abs(a - b) / low if low > 0 else 0.0
        self.quantile_spread = (self.p80_ms - self.p20_ms) / self.p50_ms if self.p50_ms > 0 else 0.0
        self.noisy = max(self.pass_spread, self.quantile_spread) > NOISE_LIMIT

    def to_dict(self) -> dict:
        return asdict(self)


class Timer:
    """Interface: ``measure(call, graph=False) -> Timing`` for a no-argument ``call``."""

    name = "abstract"
    gpu_measurement = False

    def measure(self, call: Callable[[], Any], *, graph: bool = False, calls_per_graph: int = 1) -> Timing:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


def as_list(value) -> list[float]:
    """do_bench's quantiles as a list: with a single quantile some Triton versions (3.6) return a float."""
    return [float(v) for v in value] if isinstance(value, (list, tuple)) else [float(value)]


def quantiles(samples: list[float]) -> tuple[float, float, float]:
    """p20, p50, p80 of samples (linear interpolation, like torch.quantile)."""
    xs = sorted(samples)
    if len(xs) == 1:
        return xs[0], xs[0], xs[0]
    cuts = statistics.quantiles(xs, n=10, method="inclusive")
    return cuts[1], statistics.median(xs), cuts[7]


class WallClockTimer(Timer):
    """Host wall-clock timer for runs without a GPU. Its numbers are never GPU measurements."""

    name = "wallclock"
    gpu_measurement = False

    def __init__(self, warmup: int = 2, reps: int = 10, clock: Callable[[], float] = time.perf_counter):
        self.warmup, self.reps, self.clock = warmup, reps, clock

    def _pass(self, call: Callable[[], Any]) -> list[float]:
        samples = []
        for _ in range(self.reps):
            t0 = self.clock()
            call()
            samples.append((self.clock() - t0) * 1e3)
        return samples

    def measure(self, call, *, graph=False, calls_per_graph=1) -> Timing:
        for _ in range(self.warmup):
            call()
        first = self._pass(call)
        second = self._pass(call)
        p20, p50, p80 = quantiles(second)
        return Timing(p20, p50, p80, [statistics.median(first), p50], "wallclock", False,
                      note="host wall clock: NOT a GPU measurement")

    def describe(self) -> str:
        return (f"host wall clock (time.perf_counter), {self.warmup} warm-up calls, 2 passes of {self.reps} calls; "
                "NOT a GPU measurement: use it only to exercise the harness")


class GpuTimer(Timer):
    """``triton.testing.do_bench`` with CUDA events and an L2 flush; CUDA graphs for short calls."""

    name = "gpu"
    gpu_measurement = True

    def __init__(self, warmup_ms: int = 25, rep_ms: int = 100, graph_below_ms: float = 0.5):
        import torch

        if not torch.cuda.is_available():
            raise TimingUnavailable("timing needs a CUDA GPU and none is visible here "
                                    "(correctness was still checked; --timer wallclock gives host times, "
                                    "which are not GPU measurements)")
        self.warmup_ms, self.rep_ms, self.graph_below_ms = warmup_ms, rep_ms, graph_below_ms

    def _do_bench(self, fn: Callable[[], Any]) -> list[float]:
        from triton.testing import do_bench

        return as_list(do_bench(fn, warmup=self.warmup_ms, rep=self.rep_ms, quantiles=QUANTILES))

    def probe_ms(self, call: Callable[[], Any]) -> float:
        """A quick median, used to decide between do_bench and graph replay."""
        from triton.testing import do_bench

        return as_list(do_bench(call, warmup=5, rep=20, quantiles=[0.5]))[0]

    def graph_calls(self, call: Callable[[], Any], sets: int = 1) -> int:
        """Calls to capture in one graph: about 1 ms of the call's GPU time, a whole number of input-set
        rotations. Sized from a short graph's replay, not from the eager probe: the eager median holds
        the launcher's host time, so a call with a slow launcher would get fewer calls per graph than a
        baseline of the same GPU time, and the fixed cost of each replay (its launch, the L2 flush
        before it) would weigh more on it. A call that cannot be captured is sized by the eager probe."""
        import torch

        try:
            per_call_ms = graph_of_calls_us(call, calls=math.ceil(8 / sets) * sets, replays=3) / 1e3
        except Exception:  # noqa: BLE001 - a host sync in the call: measure() says so when it falls back
            torch.cuda.synchronize()
            reset_rng_after_failed_capture()
            per_call_ms = self.probe_ms(call)
        return calls_per_graph(per_call_ms, sets)

    def _graph(self, call: Callable[[], Any], calls: int):
        import torch

        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):
                call()
        torch.cuda.current_stream().wait_stream(stream)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(calls):
                call()
        torch.cuda.synchronize()
        return graph

    def measure(self, call, *, graph=False, calls_per_graph=1) -> Timing:
        note = ""
        if graph:
            try:
                g = self._graph(call, calls_per_graph)
                passes = [self._do_bench(g.replay) for _ in range(2)]
                scaled = [[q / calls_per_graph for q in p] for p in passes]
                p20, p50, p80 = scaled[1]
                return Timing(p20, p50, p80, [scaled[0][1], p50], "cuda_graph", True, calls_per_graph)
            except Exception as exc:  # capture can fail (host syncs, allocations): fall back, say so
                note = f"CUDA-graph capture failed ({type(exc).__name__}: {exc}); timed with do_bench instead"
                import torch

                torch.cuda.synchronize()
                reset_rng_after_failed_capture()
        passes = [self._do_bench(call) for _ in range(2)]
        p20, p50, p80 = passes[1]
        return Timing(p20, p50, p80, [passes[0][1], p50], "do_bench", True, 1, note)

    def describe(self) -> str:
        return (f"triton.testing.do_bench (CUDA events; {self.warmup_ms} ms warm-up, {self.rep_ms} ms of repetitions, "
                "L2 flushed before each repetition); calls whose probe median is under "
                f"{self.graph_below_ms * 1e3:.0f} us are timed as CUDA-graph replays (about 1 ms of GPU time per "
                "graph, sized from a short graph's replay; time divided by the calls; keeps launcher overhead out); "
                "inputs rotate over enough sets to span 2x L2 when one set fits in it; quantiles p20/p50/p80 of the second of two passes; a pass-to-pass "
                f"median difference or a p20-p80 width over {NOISE_LIMIT:.0%} of the median is flagged as noisy")


def reset_rng_after_failed_capture() -> None:
    """A capture that fails inside ``torch.cuda.graph`` (a host sync in the call, seen with Liger's
    cross-entropy) leaves the CUDA generators marked as capturing, and every later random draw on the
    GPU fails with "Offset increment outside graph capture encountered unexpectedly": the next shape's
    inputs could not be made. Give each generator a copy of its state (same seed and offset) that is
    not marked, so the run goes on with the same random stream."""
    import torch

    for gen in torch.cuda.default_generators:
        try:
            gen.graphsafe_set_state(gen.clone_state())
        except (AttributeError, RuntimeError):  # an older torch without graph-safe states: nothing to reset
            pass


HOST_ROWS = 8          # the leading size of the input the host overhead is measured on
HOST_CALLS = 200


def host_shape(shape: tuple) -> tuple:
    """The shape the host overhead is measured at: the leading (row) dimension cut to a few rows, so
    the GPU work of one call (a few microseconds) is shorter than its launcher's Python."""
    return (min(HOST_ROWS, shape[0]), *shape[1:]) if shape else shape


def host_us_per_call(call: Callable[[], Any], synchronize: Callable[[], Any], calls: int = HOST_CALLS,
                     clock: Callable[[], float] = time.perf_counter) -> float:
    """Wall time per call of ``calls`` back-to-back calls (after 5 warm-up calls), synchronised at both
    ends: on a tiny input this is what the launcher costs on the host, the ceiling on how many calls
    per second an eager loop can issue whatever the kernel's speed."""
    for _ in range(5):
        call()
    synchronize()
    start = clock()
    for _ in range(calls):
        call()
    synchronize()
    return (clock() - start) / calls * 1e6


def host_issue_us_per_call(call: Callable[[], Any], synchronize: Callable[[], Any], calls: int = HOST_CALLS,
                           clock: Callable[[], float] = time.perf_counter) -> float:
    """Host time per call to *issue* ``calls`` back-to-back calls (synchronised before, the clock stopped
    before the final synchronisation): the launcher's cost even where the GPU work of a call is longer
    (a call that synchronises inside itself still waits for the GPU here)."""
    for _ in range(5):
        call()
    synchronize()
    start = clock()
    for _ in range(calls):
        call()
    elapsed = clock() - start
    synchronize()
    return elapsed / calls * 1e6


def calls_per_graph(probe_ms: float, sets: int, target_ms: float = 1.0, limit: int = 256) -> int:
    """Calls captured in one graph: about ``target_ms`` of work, a whole number of input-set rotations."""
    calls = max(sets, math.ceil(target_ms / max(probe_ms, 1e-4)))
    calls = math.ceil(calls / sets) * sets
    return int(min(max(calls, sets), max(limit, sets)))


# --------------------------------------------------------------------------- device scripts' timings
# The three timings of /work/shared/facts/h200.md, one recipe each, for the scripts under gpu/ (the
# harness above uses GpuTimer). Every GPU figure in results/ comes from here or from GpuTimer.
# do_bench and do_bench_cudagraph return the mean of their repetitions by default; `statistic`
# names what is returned.

def events_budget_ms(call: Callable[[], Any]) -> float:
    """A repetition budget of at least ten timed calls: do_bench times max(1, rep / estimate) calls, so
    with a fixed 40 ms a 41 ms call would be timed once. One call, timed with events, sizes it."""
    import torch

    call()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    call()
    end.record()
    end.synchronize()
    return max(40.0, 10 * start.elapsed_time(end))


def events_ms(call: Callable[[], Any], *, warmup_ms: float = 10, rep_ms: float | None = None,
              statistic: str = "mean") -> float:
    """What an eager loop sees: ``triton.testing.do_bench`` (CUDA events, the L2 flushed before every
    repetition), milliseconds per call; the budget grows with the call (``events_budget_ms``)."""
    from triton.testing import do_bench

    rep = events_budget_ms(call) if rep_ms is None else rep_ms
    if statistic not in ("mean", "median", "min"):
        raise ValueError(f"unknown statistic {statistic!r} (mean, median, min)")
    return float(do_bench(call, warmup=warmup_ms, rep=rep, return_mode=statistic))


def graph_ms(call: Callable[[], Any], *, rep_ms: float = 40) -> float:
    """The kernel's own time: ``triton.testing.do_bench_cudagraph`` (the mean of replays of a graph of
    back-to-back calls), milliseconds per call; the launcher's Python stays out. do_bench_cudagraph runs
    the call on a stream of its own that does not wait for the caller's: the caller's stream is drained
    first, so the call never sees inputs still being written."""
    import torch
    from triton.testing import do_bench_cudagraph

    torch.cuda.current_stream().synchronize()
    return float(do_bench_cudagraph(call, rep=rep_ms))


def graph_of_calls_us(call: Callable[[], Any], *, calls: int = 20, replays: int = 5) -> float:
    """Microseconds per call: the median over ``replays`` of one graph of ``calls`` back-to-back calls,
    each replay timed with events (no L2 flush between the calls: consecutive steps of a model)."""
    import torch

    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(2):
            call()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            call()
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(replays):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3 / calls)
    del graph
    return statistics.median(times)


def three_timings(call: Callable[[], Any], graph: bool = True) -> dict:
    """The events and graph timings of one call in microseconds, with the events budget used
    (``rep_ms``); a call that cannot be captured (a host sync inside it) gets ``graph_error``."""
    import torch

    rep = events_budget_ms(call)
    rec = {"events_us": 1e3 * events_ms(call, rep_ms=rep), "rep_ms": round(rep, 1)}
    if graph:
        try:
            rec["graph_us"] = 1e3 * graph_ms(call, rep_ms=rep)
        except Exception as exc:  # noqa: BLE001 - a host sync in the call (Liger's CE backward)
            torch.cuda.synchronize()
            reset_rng_after_failed_capture()
            rec["graph_error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
    return rec


def cuda_host_us(call: Callable[[], Any]) -> float:
    """``host_us_per_call`` synchronised with the current CUDA device."""
    import torch

    return host_us_per_call(call, torch.cuda.synchronize)


def cuda_issue_us(call: Callable[[], Any]) -> float:
    """``host_issue_us_per_call`` synchronised with the current CUDA device."""
    import torch

    return host_issue_us_per_call(call, torch.cuda.synchronize)


def make_timer(name: str) -> Timer:
    """The timer a job spec names: "gpu" (default) or "wallclock"."""
    if name == "gpu":
        return GpuTimer()
    if name == "wallclock":
        return WallClockTimer()
    raise ValueError(f"unknown timer {name!r} (gpu, wallclock)")
