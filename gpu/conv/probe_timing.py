"""Device probe: does the forward rows' timing method treat the template and cuDNN alike?

bench.py times each forward row with GpuTimer's graph mode: a CUDA graph of about 1 ms of calls, replayed under
``do_bench`` (an L2 flush before each replay). Until session 19 the graph was sized from an eager probe of the
call (``calls_per_graph(probe_ms)``): the template's eager call spends more on the host than cuDNN's, so its graph
held fewer calls, and what a replay costs beyond its kernels (the launch of the graph, the first call's cold L2)
was shared among fewer. ``GpuTimer.graph_calls`` now sizes it from a short graph's replay (GPU time only); the
probe records both sizings. The autotuner's own
timings (``do_bench_cudagraph``, no flush, about 20 ms of calls per graph) came out 1.0-1.7 us under the rows'
template times on the 1x1 layers at batch 32 (12:25Z of 2026-12-04).

For each layer (PROBE_SHAPES, at PROBE_BATCH), the template's plain forward and cuDNN's, each timed five ways in
the same process: bench.py's own ``timings``; GpuTimer with the same fixed calls per graph for both
(PROBE_CALLS); GpuTimer with the old eager-probe sizing; ``graph_ms`` (``do_bench_cudagraph``, the facts file's
"graph" timing); and the median of replays of a graph of PROBE_CALLS calls timed with events, no flush
(``graph_of_calls_us``). Each call's output is
checked against float64 first.

    python gpu/conv/probe_timing.py OUT_DIR        # records appended to OUT_DIR/probe_timing.jsonl
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench  # noqa: E402  (the benchmark's shapes, inputs and timer)

SHAPES = os.environ.get("PROBE_SHAPES", "s3.1x1b,s4.1x1b,s3.1x1a,s4.3x3,s1.3x3").split(",")
BATCH = int(os.environ.get("PROBE_BATCH", "32"))
CALLS = int(os.environ.get("PROBE_CALLS", "200"))


def main(argv):
    import torch
    import torch.nn.functional as F

    from tritonify.kernels.bench.timing import GpuTimer, calls_per_graph, graph_ms, graph_of_calls_us
    from tritonify.kernels.templates import conv2d as m

    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    timer = GpuTimer(**bench._TIMER_MS)
    m._CONV2D_FORWARD["mode"] = "template"
    for name in SHAPES:
        x, w, _, _, stride, pad = bench.conv_inputs(name, BATCH)
        xc, wc = x.permute(0, 3, 1, 2), w.permute(0, 3, 1, 2)
        calls = {"template": lambda: m.conv2d(x, w, stride=stride, padding=pad),
                 "cudnn": lambda: F.conv2d(xc, wc, stride=stride, padding=pad)}
        with torch.no_grad():
            ref = F.conv2d(xc.double(), wc.double(), stride=stride, padding=pad).permute(0, 2, 3, 1)
            rec = {"shape": name, "batch": BATCH, "calls": CALLS}
            for who, call in calls.items():
                y = call()
                y = y if who == "template" else y.permute(0, 2, 3, 1)
                rec[f"{who}_max_rel_err"] = ((y.double() - ref).abs().max() / ref.abs().max()).item()
                torch.cuda.synchronize()
                probe = timer.probe_ms(call)
                eager_sized = calls_per_graph(probe, 1)
                rec[who] = {
                    "probe_us": round(1e3 * probe, 2), "eager_sized_calls_per_graph": eager_sized,
                    "bench_calls_per_graph": timer.graph_calls(call),
                    "gputimer_bench_us": bench.timings(call, events=False)["graph_us"],
                    "gputimer_eager_sized_us": round(1e3 * timer.measure(call, graph=True,
                                                                         calls_per_graph=eager_sized).p50_ms, 2),
                    "gputimer_fixed_us": round(1e3 * timer.measure(call, graph=True, calls_per_graph=CALLS).p50_ms, 2),
                    "do_bench_cudagraph_us": round(1e3 * graph_ms(call, rep_ms=40), 2),
                    "graph_of_calls_us": round(graph_of_calls_us(call, calls=CALLS, replays=7), 2)}
        print(json.dumps(rec), flush=True)
        with out.joinpath("probe_timing.jsonl").open("a") as f:
            f.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
