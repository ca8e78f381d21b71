#!/usr/bin/env python3
"""A stand-in for `ncu` so the profile path can be tested without a GPU.

Behaviour is chosen by FAKE_NCU_MODE: ok (write the report, then on --import print the H200
fixture pages), perm (ERR_NVGPUCTRPERM), nogpu, nokernel, crash, hang (sleeps, with a child
process that writes its pid to FAKE_NCU_CHILD_PID so the test can check the group was killed),
childonly (the kernel is launched by a child of the command: nothing is profiled under
`--target-processes application-only`, the report is written under `all`). Every profiling
run's argument list is appended, one JSON list per line, to FAKE_NCU_ARGV_LOG when it is set.
"""
import json
import gzip
import os
import subprocess
import sys
import time
from pathlib import Path

FIX = Path(__file__).parent / "fixtures" / "h200"
mode = os.environ.get("FAKE_NCU_MODE", "ok")
argv = sys.argv[1:]


def page(name):
    return gzip.decompress((FIX / name).read_bytes()).decode()


if "--version" in argv:
    print("NVIDIA (R) Nsight Compute Command Line Profiler\nVersion 2025.3.1.0 (fake)")
    sys.exit(0)
if "--import" in argv:
    kernel = os.environ.get("FAKE_NCU_KERNEL", "planted_c_uncoalesced")
    if "raw" in argv:
        raw = page("raw_base.csv.gz").splitlines()
        keep = [ln for ln in raw[2:] if f'"{kernel}"' in ln]
        print("\n".join(raw[:2] + keep))
    elif "details" in argv:
        print(page("details.csv.gz"))
    elif "source" in argv:
        print(page(f"source/{kernel}.csv.gz"))
    sys.exit(0)

out = argv[argv.index("-o") + 1] if "-o" in argv else None
if os.environ.get("FAKE_NCU_ARGV_LOG"):
    with open(os.environ["FAKE_NCU_ARGV_LOG"], "a") as log:
        log.write(json.dumps(argv) + "\n")
if mode == "childonly" and argv[argv.index("--target-processes") + 1] == "application-only":
    print("launcher ran\n==WARNING== No kernels were profiled.")
    sys.exit(0)
if mode == "perm":
    print("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters")
    sys.exit(1)
if mode == "nogpu":
    print("==ERROR== cudaErrorNoDevice: no CUDA-capable device is detected")
    sys.exit(1)
if mode == "nokernel":
    print("launcher ran\n==WARNING== No kernels were profiled.")
    sys.exit(0)
if mode == "crash":
    print("Traceback (most recent call last):\nValueError: shapes do not match\n==ERROR== The application returned an error code (1).")
    sys.exit(1)
if mode == "hang":
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    Path(os.environ["FAKE_NCU_CHILD_PID"]).write_text(str(child.pid))
    time.sleep(300)
    sys.exit(0)
print('==PROF== Connected to process 1')
print('==PROF== Profiling "planted_c_uncoalesced" - 0: 0%....50%....100% - 35 passes')
Path(out + ".ncu-rep").write_bytes(b"fake report")
print("==PROF== Report: " + out + ".ncu-rep")
