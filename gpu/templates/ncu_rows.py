"""Run chosen implementations of the sweep's groups once each inside a profiler range, for ncu.

    ncu --profile-from-start off --metrics ... python gpu/templates/ncu_rows.py GROUP=IMPL[,IMPL...] ...

Each implementation is warmed (autotuned, compiled) first, outside the range; then one call of each
runs between ``cudaProfilerStart`` and ``cudaProfilerStop``, in the order given, which is printed so the
report's launches can be named.
"""
from __future__ import annotations

import sys

import torch

import sweep_wide


def main(argv):
    plan = []
    for arg in argv:
        group, impls = arg.split("=", 1)
        make_inputs, _, table = sweep_wide.GROUPS[group]()
        args = make_inputs()
        buf = torch.empty_like(args[0])
        for label in impls.split(","):
            fn = table[label]
            for _ in range(3):
                fn(*args, buf)
            plan.append((group, label, fn, args, buf))
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    for group, label, fn, args, buf in plan:
        fn(*args, buf)
        torch.cuda.synchronize()
        print(f"profiled: {group} | {label}", flush=True)
    torch.cuda.profiler.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
