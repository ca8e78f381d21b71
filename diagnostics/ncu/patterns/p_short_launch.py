"""Short launch: the kernel runs for less than 10 us, so the launch's ramp-up and tail (the first
blocks arriving, the last ones draining) are a large part of its time, and averages over the launch
(achieved occupancy under the theory, latency stalls, waves) describe the ramp, not the kernel.

Condition: `gpu__time_duration.sum` < 10 us. Impact: 1 - duration / 10 us (a 6.5 us launch: 0.35).
It explains A (partial wave), B, E and J found on the same launch: those are what a launch this
short looks like. Seen on real kernels (H200, 2026-12-02): vLLM's decode-attention stage 2 (6.3-8.2
us, 1024 programs merging 8 splits, 42 % achieved occupancy against 100 % in theory, 14 % of the
DRAM roof) and Inductor's RoPE kernel for the 4 KV heads of a TinyLlama block (5.6 us, 18 % of the
DRAM roof). The fix is outside the kernel: fuse it with its neighbour, give a launch more work, or
replay the sequence as a CUDA graph. Same names on sm_80 and sm_100. Line: the kernel's `def` line.
"""
from tritonify.diagnostics.ncu.context import Context, Hit, Pattern

PATTERN = Pattern("P", "Short launch", (),
                  "fuse this kernel with its producer or consumer (one launch instead of two), give each launch "
                  "more work (batch the calls), or replay the sequence as a CUDA graph; tuning inside a kernel "
                  "this short pays little")

DURATION = "gpu__time_duration.sum"
METRICS = (DURATION,)
EXPLAINS = ("A", "B", "E", "J")
SHORT_NS = 10_000.0


def detect(ctx: Context) -> Hit | None:
    ns = ctx.m(DURATION)
    if ns <= 0 or ns >= SHORT_NS:
        return None
    evidence = {DURATION: ns, "launch__grid_size": ctx.opt("launch__grid_size"),
                "launch__waves_per_multiprocessor": ctx.opt("launch__waves_per_multiprocessor")}
    return Hit(PATTERN, 1 - ns / SHORT_NS, {k: v for k, v in evidence.items() if v is not None},
               f"the launch runs {ns / 1000:.1f} us: its ramp-up and tail are a large part of that, so this kernel "
               "is limited by being short, not by what it does per element", ctx.def_line())
