"""Time every autotune config of the row and matmul templates one by one, beside Liger (one device run).

    python gpu/templates/tune.py OUT.json [NAME ...]

The autotuner picks one config per shape; this shows the whole spread, so the config lists can be
cut to the configs that win on the H200 (each template's autotune list is then the winners). Each
config is forced (`Autotuner.configs = [config]`), the entry called through the template's contract
inputs at the harness's shape, and timed with CUDA-graph replay (`triton.testing.do_bench_cudagraph`,
the method the harness uses). Bytes are the contract's (or the inputs' plus output) over the time.
"""
from __future__ import annotations

import importlib
import json
import sys
import time

import torch
import triton

from tritonify.kernels.bench import baselines as baselines_mod
from tritonify.kernels.bench.discovery import load_contracts
from tritonify.kernels.bench.inputs import dtype_of, nbytes
from tritonify.kernels.bench.timing import graph_ms

PLAN = {"rms_norm": (16384, 4096), "softmax": (16384, 4096), "cross_entropy": (8192, 128256),
        "linear_gelu": (8192, 4096, 14336), "swiglu": (16384, 4096), "add_rms_norm": (16384, 4096)}


def _name(tuner) -> str:
    fn = getattr(tuner, "base_fn", None) or tuner.fn
    while not hasattr(fn, "__name__") and hasattr(fn, "fn"):
        fn = fn.fn
    return getattr(fn, "__name__", "kernel")


def bench(fn) -> float:
    fn()
    torch.cuda.synchronize()
    return graph_ms(fn, rep_ms=60)


def main(argv: list[str]) -> int:
    out_path, names = argv[0], argv[1:] or list(PLAN)
    rows = []
    for name in names:
        module = importlib.import_module(f"tritonify.kernels.templates.{name}")
        (contract,) = load_contracts(module.__file__)
        shape = PLAN[name]
        args = contract.inputs(shape, dtype_of(contract.dtype), "cuda")
        out = contract.entry(*args)
        work = contract.bytes(shape, args, out) if callable(getattr(contract, "bytes", None)) else None
        moved = work or (nbytes(args) + nbytes([out]))
        flops = contract.flops(shape) if callable(getattr(contract, "flops", None)) else None
        tuners = [v for v in vars(module).values() if isinstance(v, triton.runtime.autotuner.Autotuner)]
        for base in baselines_mod.build(contract, ["liger"]) if contract.liger else []:
            if base.fn is None:
                rows.append({"template": name, "what": base.name, "error": base.skipped})
                continue
            try:
                ms = bench(lambda: base.fn(*args))
                rows.append({"template": name, "what": base.name, "ms": ms, "gbps": moved / ms / 1e6})
            except Exception as exc:  # noqa: BLE001 -- a baseline that fails is reported, the rest go on
                rows.append({"template": name, "what": "liger", "error": str(exc)[:200]})
        for tuner in tuners:
            every = list(tuner.configs)
            for cfg in every:
                tuner.configs = [cfg]
                tuner.cache.clear()
                try:
                    ms = bench(lambda: contract.entry(*args))
                    row = {"template": name, "kernel": _name(tuner), "what": str(cfg), "ms": ms,
                           "gbps": moved / ms / 1e6}
                    if flops:
                        row["tflops"] = flops / ms / 1e9
                except Exception as exc:  # noqa: BLE001 -- a config that does not compile is reported
                    row = {"template": name, "kernel": _name(tuner), "what": str(cfg), "error": str(exc)[:200]}
                rows.append(row)
                print(json.dumps(row), flush=True)
            tuner.configs = every
            tuner.cache.clear()
        args = out = None
        torch.cuda.empty_cache()
    with open(out_path, "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "gpu": torch.cuda.get_device_name(),
                   "torch": torch.__version__, "triton": triton.__version__, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
