"""Run built TritonBench-T programs on a GPU and record how each one ends (the ground truth).

    python benchmarks/freshcode/run_programs.py BUILT_DIR OUT.jsonl [--workers 12] [--timeout 20]
                                                [--deadline 240]

BUILT_DIR is what build.py wrote (manifest.json, programs/). Torch and Triton are imported once in
this process (CUDA left uninitialised); each program then runs in its own forked process (its own
CUDA context), ``--workers`` at a time, killed after ``--timeout`` seconds. Programs are taken in a
fixed shuffled order (seed 0) until ``--deadline`` seconds minus one timeout have passed, so a run cut
short is still an unbiased sample; programs not started are not written. Programs with no
``triton.jit`` are not run (they cannot fail inside a kernel).

One JSON line per program: ``status`` is ``passed`` (the test ran to the end and the device
synchronised), ``exception`` (with the exception's type, message and traceback frames; a
``CompilationError`` also carries the failing function's name, its line relative to the function's
``def`` and the compiler's message), ``timeout`` or ``crashed`` (the process died on a signal).
The first line is the environment (Triton, torch, GPU, driver).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import select
import signal
import subprocess
import sys
import time
import traceback


def _short(filename: str) -> str:
    for marker in ("site-packages/", "dist-packages/"):
        if marker in filename:
            return filename.split(marker, 1)[1]
    return filename


def _describe(exc: BaseException, program_path: str) -> dict:
    from triton.compiler.errors import CompilationError

    frames = [{"file": "<program>" if f.filename == program_path else _short(f.filename),
               "line": f.lineno, "function": f.name}
              for f in traceback.extract_tb(exc.__traceback__)]
    record = {"status": "exception", "type": type(exc).__name__,
              "module": type(exc).__module__, "message": str(exc)[-2500:], "frames": frames[-30:]}
    chain = exc.__cause__ or exc.__context__
    if chain is not None:
        record["cause"] = {"type": type(chain).__name__, "message": str(chain)[-1500:]}
    if isinstance(exc, CompilationError):
        src = getattr(exc, "src", None) or ""
        found = re.search(r"def\s+(\w+)\s*\(", src)
        node = getattr(exc, "node", None)
        inner = exc.__cause__
        record["compile"] = {
            "function": found.group(1) if found else None,
            "function_first_line": src.splitlines()[0][:200] if src else None,
            "relative_line": getattr(node, "lineno", None),
            "column": getattr(node, "col_offset", None),
            "error_message": getattr(exc, "error_message", None),
            "inner": None if inner is None else {"type": type(inner).__name__,
                                                 "message": str(inner)[-1500:]},
        }
    return record


def _child(path: str, write_fd: int) -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    try:
        import torch

        with open(path, encoding="utf-8") as handle:
            code = compile(handle.read(), path, "exec")
        namespace = {"__name__": "__main__", "__file__": path}
        try:
            exec(code, namespace)
            if torch.cuda.is_initialized():
                torch.cuda.synchronize()
            record = {"status": "passed"}
        except SystemExit as exc:
            record = {"status": "passed" if exc.code in (None, 0) else "exception",
                      "type": "SystemExit", "message": str(exc.code)}
        except BaseException as exc:  # noqa: BLE001 - the program's failure is the measurement
            record = _describe(exc, path)
    except BaseException as exc:  # noqa: BLE001
        record = {"status": "harness_error", "message": repr(exc)[:500]}
    os.write(write_fd, json.dumps(record).encode())
    os.close(write_fd)
    os._exit(0)


def _environment() -> dict:
    import torch
    import triton

    env = {"triton": triton.__version__, "torch": torch.__version__, "python": sys.version.split()[0]}
    try:
        env["gpu"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        env["gpu"] = f"unknown ({exc})"
    assert not torch.cuda.is_initialized(), "the parent must not own a CUDA context before forking"
    return env


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("built")
    parser.add_argument("out")
    parser.add_argument("--workers", type=int, default=12)
    parser.add_argument("--timeout", type=float, default=20.0)
    parser.add_argument("--deadline", type=float, default=240.0)
    parser.add_argument("--only", help="file of program ids to run (one a line)")
    args = parser.parse_args()

    import triton.language  # noqa: F401 - imported once, shared by every fork

    started_at = time.monotonic()
    manifest = json.load(open(os.path.join(args.built, "manifest.json")))
    ids = []
    for entry in manifest["programs"]:
        path = os.path.join(args.built, "programs", entry["id"] + ".py")
        text = open(path, encoding="utf-8").read()
        if "jit" in text:
            ids.append(entry["id"])
    if args.only:
        wanted = set(open(args.only).read().split())
        ids = [i for i in ids if i in wanted]
    random.Random(0).shuffle(ids)

    out = open(args.out, "w")
    out.write(json.dumps({"environment": _environment(), "candidates": len(ids),
                          "workers": args.workers, "timeout_s": args.timeout}) + "\n")
    running: dict[int, tuple[str, float, int, bytearray]] = {}
    queue = list(ids)
    done = 0
    counts: dict[str, int] = {}

    def finish(pid: int, record: dict) -> None:
        nonlocal done
        program, began, fd, _ = running.pop(pid)
        os.close(fd)
        record.update(id=program, seconds=round(time.monotonic() - began, 2))
        out.write(json.dumps(record) + "\n")
        out.flush()
        done += 1
        key = record["status"] if record["status"] != "exception" else record.get("type", "?")
        counts[key] = counts.get(key, 0) + 1

    while queue or running:
        now = time.monotonic()
        while (queue and len(running) < args.workers
               and now - started_at < args.deadline - args.timeout):
            program = queue.pop(0)
            path = os.path.abspath(os.path.join(args.built, "programs", program + ".py"))
            read_fd, write_fd = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(read_fd)
                os.chdir("/tmp")
                _child(path, write_fd)
            os.close(write_fd)
            running[pid] = (program, now, read_fd, bytearray())
        if not running:
            break
        fds = {v[2]: pid for pid, v in running.items()}
        readable, _, _ = select.select(list(fds), [], [], 0.2)
        for fd in readable:
            chunk = os.read(fd, 1 << 16)
            running[fds[fd]][3].extend(chunk)
        for pid in list(running):
            program, began, fd, buffer = running[pid]
            waited, status = os.waitpid(pid, os.WNOHANG)
            if waited:
                try:
                    while True:
                        chunk = os.read(fd, 1 << 16)
                        if not chunk:
                            break
                        buffer.extend(chunk)
                except OSError:
                    pass
                if buffer:
                    finish(pid, json.loads(buffer.decode()))
                else:
                    finish(pid, {"status": "crashed", "signal": os.WTERMSIG(status)
                                 if os.WIFSIGNALED(status) else None})
            elif time.monotonic() - began > args.timeout:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                finish(pid, {"status": "timeout"})
    out.close()
    print(f"ran {done} of {len(ids)} in {time.monotonic() - started_at:.0f} s; not started: "
          f"{len(queue)}", flush=True)
    for key, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f"{n:6d}  {key}")


if __name__ == "__main__":
    main()
