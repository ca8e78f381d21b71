"""A stand-in for `python -m tritonify bench|profile FILE::KERNEL --format json`, for tests of
the server's job plumbing only (progress, cancel, timeout, crash, result parsing).

The real engines are other modules; these tests never pretend to measure anything. The
server is pointed at it with the setting `interpreter: [python, fake_engine.py]`, so it
receives `-m tritonify bench FILE::KERNEL --format json`. The kernel name picks a behaviour.
It leaves `<FILE>.ran` behind (so a test can tell it ran) and, for `hang`, writes its pid and
its child's pid to `<FILE>.pids`.
"""
import json
import os
import signal
import subprocess
import sys
import time

args = sys.argv[1:]
kind = args[2] if len(args) > 2 else "?"
target = args[3] if len(args) > 3 else "?::?"
kernel = target.rsplit("::", 1)[-1]
path = target.rsplit("::", 1)[0]
pidfile = path + ".pids"
with open(path + ".ran", "a") as marker:
    marker.write(f"{kind} {kernel}\n")


def progress(message, percent):
    print(json.dumps({"progress": message, "percent": percent}), file=sys.stderr, flush=True)


if kernel == "hang":
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    with open(pidfile + ".tmp", "w") as f:
        f.write(f"{os.getpid()} {child.pid}\n")
    os.replace(pidfile + ".tmp", pidfile)
    progress("warming up", 5)
    time.sleep(60)
elif kernel == "crash":
    progress("about to crash", 10)
    os.kill(os.getpid(), signal.SIGSEGV)
elif kernel == "oom":
    os.kill(os.getpid(), signal.SIGKILL)
elif kernel == "garbage":
    print("this is not json")
elif kernel == "usage":
    print("usage: tritonify [-h] COMMAND ...", file=sys.stderr)
    print(f"tritonify: error: argument COMMAND: invalid choice: '{kind}' (choose from 'check', 'rule')", file=sys.stderr)
    sys.exit(2)
else:
    for i, pct in enumerate((10, 50, 90)):
        progress(f"step {i + 1} of 3", pct)
        time.sleep(0.05)
    print("some log line on stderr", file=sys.stderr)
    summary = "0.41 ms, 3.1 TB/s, 1.8x eager" if kind == "bench" else "memory-bound, 92% of DRAM peak"
    print(json.dumps({"kernel": kernel, "summary": summary, "argv": args}))
