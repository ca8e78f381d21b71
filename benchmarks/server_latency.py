"""How fast the language server answers (a benchmark, not a test).

Run: `python benchmarks/server_latency.py [--lines 3000] [--rounds 20]`. It starts
`python -m tritonify.server` as any editor does (stdio, Content-Length frames), and measures:

1. diagnostics latency for a ~3,000-line file of real Triton kernels: from a didChange until
   its publishDiagnostics, minus the 300 ms debounce (target: <= 50 ms);
2. request latency (hover, codeLens, codeAction on that file) with no job running, and while a
   long benchmark job runs in its child process (target: <= 50 ms). The job is a stand-in
   child (written to a temp folder) that prints progress for 10 s: what is measured is the
   server, not a kernel.

Prints one Markdown table. Numbers depend on the machine: quote them with its load.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEBOUNCE_S = 0.3

KERNEL = textwrap.dedent('''\
    @triton.jit
    def gelu_{i}(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        inner = 0.7978845608 * (x + 0.044715 * x * x * x)
        y = 0.5 * x * (1 + libdevice.tanh(inner))
        tl.store(y_ptr + offs, y, mask=mask)


    @triton.jit
    def rmsnorm_{i}(x_ptr, w_ptr, y_ptr, stride, n_cols, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        rms = tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        tl.store(y_ptr + row * stride + cols, x / rms * w, mask=mask)


    def launch_{i}(x, w, eps=1e-6):
        y = torch.empty_like(x)
        rows, cols = x.shape
        rmsnorm_{i}[(rows,)](x, w, y, x.stride(0), cols, eps, BLOCK=triton.next_power_of_2(cols))
        return y


''')
HEADER = "import torch\nimport triton\nimport triton.language as tl\nfrom triton.language.extra import libdevice\n\n\n"

FAKE_JOB = textwrap.dedent('''\
    import json, sys, time
    for i in range(100):
        print(json.dumps({"progress": f"step {i}", "percent": i}), file=sys.stderr, flush=True)
        time.sleep(0.1)
    print(json.dumps({"summary": "stand-in"}))
''')


def make_file(lines: int) -> str:
    text, i = HEADER, 0
    while text.count("\n") < lines:
        text += KERNEL.format(i=i)
        i += 1
    return text


class Client:
    """A plain stdio JSON-RPC client (no pygls)."""

    def __init__(self, command: list[str] | None = None):
        self.proc = subprocess.Popen(command or [sys.executable, "-m", "tritonify.server"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.cond = threading.Condition()
        self.responses: dict = {}
        self.published: list = []
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _send(self, msg):
        body = json.dumps(msg).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def _read(self):
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line == b"\r\n":
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            msg = json.loads(out.read(length))
            now = time.perf_counter()
            if "method" in msg and "id" in msg:       # a request from the server: answer null
                self._send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
                continue
            with self.cond:
                if msg.get("method") == "textDocument/publishDiagnostics":
                    self.published.append((now, msg["params"]))
                elif "id" in msg:
                    self.responses[msg["id"]] = (now, msg)
                self.cond.notify_all()

    def request(self, method, params, timeout=60):
        self.next_id += 1
        msg_id = self.next_id
        start = time.perf_counter()
        self._send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        with self.cond:
            if not self.cond.wait_for(lambda: msg_id in self.responses, timeout):
                raise TimeoutError(method)
            end, msg = self.responses.pop(msg_id)
        return end - start, msg

    def request_async(self, method, params):
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def notify(self, method, params):
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_published(self, uri, version, timeout=60):
        with self.cond:
            ok = self.cond.wait_for(lambda: any(p["uri"] == uri and p.get("version") == version for _, p in self.published), timeout)
            if not ok:
                raise TimeoutError(f"diagnostics for version {version}")
            return next(t for t, p in self.published if p["uri"] == uri and p.get("version") == version)


def stats(samples):
    ms = sorted(s * 1000 for s in samples)
    p95 = ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))]
    return f"{statistics.median(ms):.1f}", f"{p95:.1f}", f"{ms[-1]:.1f}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--select", help="lint only these codes (e.g. TRI001) to separate the server from the rules")
    args = ap.parse_args(argv)

    tmp = Path(tempfile.mkdtemp(prefix="tritonify-latency-"))
    kernel_file = tmp / "kernels.py"
    text = make_file(args.lines)
    kernel_file.write_text(text)
    fake = tmp / "fake_job.py"
    fake.write_text(FAKE_JOB)
    uri = kernel_file.as_uri()

    c = Client()
    # capabilities as VS Code and Neovim declare them for what is measured here: progress, and
    # code actions resolved lazily (fix-all's edit is computed on resolve, not for every list)
    c.request("initialize", {"processId": os.getpid(), "rootUri": tmp.as_uri(), "capabilities": {
        "window": {"workDoneProgress": True},
        "textDocument": {"codeAction": {"resolveSupport": {"properties": ["edit"]}, "dataSupport": True}}},
        "initializationOptions": {"interpreter": [sys.executable, str(fake)], "jobs": {"timeoutSeconds": 60},
                                  "lint": {"select": args.select.split(",") if args.select else [],
                                           "timeoutSeconds": 600}}})
    c.notify("initialized", {})
    c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
    c.wait_published(uri, 1)
    n_diags = len([p for _, p in c.published if p.get("version") == 1][0]["diagnostics"])

    # 0. what the engine alone takes on this text, in this process (no server)
    from tritonify.diagnostics.engine import lint_text
    from tritonify.diagnostics.settings import Settings

    engine_settings = Settings(select=tuple(args.select.split(","))) if args.select else Settings()
    engine = []
    for _ in range(3):
        t0 = time.perf_counter()
        lint_text(text, str(kernel_file), engine_settings)
        engine.append(time.perf_counter() - t0)

    # 1. diagnostics after the debounce
    after_debounce = []
    for r in range(args.rounds):
        version = r + 2
        edited = text + f"\nedit_{r} = {r}\n"
        sent = time.perf_counter()
        c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": edited}]})
        got = c.wait_published(uri, version)
        after_debounce.append(got - sent - DEBOUNCE_S)

    pos = {"line": text.splitlines().index("    y = 0.5 * x * (1 + libdevice.tanh(inner))"), "character": 30}
    requests = {
        "hover": ("textDocument/hover", {"textDocument": {"uri": uri}, "position": pos}),
        "codeLens": ("textDocument/codeLens", {"textDocument": {"uri": uri}}),
        "codeAction": ("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": {"start": pos, "end": pos},
                                                   "context": {"diagnostics": []}}),
    }

    def measure():
        out = {name: [] for name in requests}
        for _ in range(args.rounds):
            for name, (method, params) in requests.items():
                elapsed, msg = c.request(method, params)
                assert "result" in msg, msg
                out[name].append(elapsed)
            time.sleep(0.02)
        return out

    idle = measure()
    job_id = c.request_async("workspace/executeCommand", {"command": "tritonify.benchmark", "arguments": [uri, "gelu_0"]})
    time.sleep(0.5)                      # the child is running and reporting progress
    busy = measure()
    job_running = job_id not in c.responses
    c.request("shutdown", None)
    c.notify("exit", None)
    c.proc.wait(30)

    print(f"Tritonify language server latency ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}, Python {sys.version.split()[0]})")
    print(f"rules: {args.select or 'all'}; file: {text.count(chr(10))} lines, {len(text) // 1024} KiB, {n_diags} diagnostics; {args.rounds} rounds; "
          f"debounce {DEBOUNCE_S * 1000:.0f} ms (subtracted); job still running during the busy rounds: {job_running}")
    print()
    print("| what | median ms | p95 ms | max ms |")
    print("| --- | --- | --- | --- |")
    print(f"| the lint engine alone, in-process, no server ({args.select or 'all rules'}) | {' | '.join(stats(engine))} |")
    print(f"| diagnostics published after the debounce ends (3,000-line file) | {' | '.join(stats(after_debounce))} |")
    for name in requests:
        print(f"| {name}, no job running | {' | '.join(stats(idle[name]))} |")
    for name in requests:
        print(f"| {name}, while a benchmark job runs | {' | '.join(stats(busy[name]))} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
