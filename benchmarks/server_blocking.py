"""Does the language server answer while it has much to do? (issue 31's blocking cases; a
benchmark, not a test: tests/server/test_many_documents.py and test_document_edits.py count the
work instead of timing it.)

Run: `python benchmarks/server_blocking.py [--docs 100,400,10000] [--out results/server_blocking.md]`.
It starts `python -m tritonify.server` as an editor does (stdio, a plain JSON-RPC client) and,
for each case, asks for a hover on *another* document right after the burden arrives:
* open documents that are not on disk (file:///nowhere/...): N opened at once; the hover's answer
  time, the time until every one has its diagnostics, and how many lints the server ran;
* one didChange with 393 edits (a replace-all) in a 3,000-line file: the hover's answer time, and
  the time until that version's diagnostics;
* a kernel of 2,500 statements opened (each a masked load without `other=`: TRI014 follows each
  load through the rest of the kernel, so one lint takes tens of seconds here): the hover's answer
  time on a document linted before, and on one edited just before (its lint must not wait for the
  big one).
Every answer is timed from the request's send to its response's arrival.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from server_latency import Client  # noqa: E402 - the plain stdio client

SMALL = '''import triton
import triton.language as tl


@triton.jit
def k{i}(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, x * 2)
'''
HOVER_AT = {"line": 7, "character": 10}   # `tl.load` in SMALL


def big_kernel(statements: int) -> str:
    lines = ["import triton", "import triton.language as tl", "", "", "@triton.jit",
             "def big(x_ptr, y_ptr, n, BLOCK: tl.constexpr):",
             "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)",
             "    mask = offs < n"]
    lines += [f"    v{i} = tl.load(x_ptr + offs + {i}, mask=mask)" for i in range(statements)]
    lines.append("    tl.store(y_ptr + offs, v0, mask=mask)")
    return "\n".join(lines) + "\n"


def replace_all_file(lines: int) -> tuple[str, list[dict]]:
    rows = [f"    acc = acc + x{i}\n" if i % 8 == 0 else f"    y{i} = tl.load(p + {i})\n" for i in range(lines - 5)]
    text = "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(p, acc, " + \
        ", ".join(f"x{i}" for i in range(0, lines - 5, 8)) + "):\n" + "".join(rows)
    edits = []
    for n, line in reversed(list(enumerate(text.split("\n")))):
        if line.startswith("    acc = acc"):
            edits.append({"range": {"start": {"line": n, "character": 4}, "end": {"line": n, "character": 7}}, "text": "total"})
    return text, edits


class Session:
    def __init__(self):
        self.c = Client()
        self.c.request("initialize", {"processId": os.getpid(), "rootUri": None, "capabilities": {
            "workspace": {"configuration": True}, "textDocument": {"publishDiagnostics": {"versionSupport": True}}}})
        self.c.notify("initialized", {})

    def open(self, uri: str, text: str, version: int = 1) -> None:
        self.c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": version,
                                                               "text": text}})

    def hover_ms(self, uri: str, at=HOVER_AT) -> float:
        took, msg = self.c.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": at}, timeout=600)
        assert "error" not in msg, msg
        return took * 1000

    def published_uris(self) -> set[str]:
        with self.c.cond:
            return {p["uri"] for _, p in self.c.published}

    def close(self) -> None:
        self.c.proc.kill()
        self.c.proc.wait()


def many_documents(count: int, trace_dir: Path) -> dict:
    trace = trace_dir / f"trace-{count}.jsonl"
    os.environ["TRITONIFY_LATENCY_TRACE"] = str(trace)
    s = Session()
    other = "file:///nowhere/other.py"
    s.open(other, SMALL.format(i="other"))
    s.c.wait_published(other, 1)
    s.hover_ms(other)   # the hover's first-time imports, paid before the measurement
    start = time.perf_counter()
    for i in range(count):
        s.open(f"file:///nowhere/pkg/doc{i}.py", SMALL.format(i=i))
    sent = time.perf_counter()
    hover = s.hover_ms(other)
    deadline = time.perf_counter() + 1800
    while len(s.published_uris()) < count + 1 and time.perf_counter() < deadline:
        time.sleep(0.05)
    settled = time.perf_counter() - start
    time.sleep(0.5)
    s.close()
    del os.environ["TRITONIFY_LATENCY_TRACE"]
    lints = sum(1 for line in trace.read_text().splitlines() if '"ev": "s.lint"' in line)
    return {"docs": count, "send_s": sent - start, "hover_ms": hover, "settle_s": settled, "lints": lints}


def replace_all() -> dict:
    s = Session()
    other = "file:///nowhere/other.py"
    s.open(other, SMALL.format(i="other"))
    s.c.wait_published(other, 1)
    s.hover_ms(other)
    uri = "file:///nowhere/big_file.py"
    text, edits = replace_all_file(3000)
    s.open(uri, text)
    s.c.wait_published(uri, 1, timeout=600)
    start = time.perf_counter()
    s.c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": edits})
    hover = s.hover_ms(other)
    published = s.c.wait_published(uri, 2, timeout=600) - start
    s.close()
    return {"edits": len(edits), "hover_ms": hover, "diagnostics_s": published}


def big_kernel_case(statements: int) -> dict:
    s = Session()
    other, edited = "file:///nowhere/other.py", "file:///nowhere/edited.py"
    s.open(other, SMALL.format(i="other"))
    s.open(edited, SMALL.format(i="edited"))
    s.c.wait_published(other, 1)
    s.c.wait_published(edited, 1)
    s.hover_ms(other)
    uri = "file:///nowhere/huge_kernel.py"
    start = time.perf_counter()
    s.open(uri, big_kernel(statements))
    time.sleep(0.5)   # its lint is under way
    hover = s.hover_ms(other)
    s.c.notify("textDocument/didChange", {"textDocument": {"uri": edited, "version": 2},
                                          "contentChanges": [{"text": SMALL.format(i="edited") + "\n# edited\n"}]})
    time.sleep(0.15)   # past the typing pause a request waits out
    hover_edited = s.hover_ms(edited)
    published = s.c.wait_published(uri, 1, timeout=1800) - start
    s.close()
    return {"statements": statements, "hover_ms": hover, "hover_edited_ms": hover_edited, "big_lint_s": published}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", default="100,400,10000")
    ap.add_argument("--statements", type=int, default=2500)
    ap.add_argument("--out", help="write the Markdown table here")
    args = ap.parse_args(argv)
    load0 = os.getloadavg()[0]
    trace_dir = Path(tempfile.mkdtemp(prefix="tritonify-blocking-"))
    rows = []
    for n in [int(x) for x in args.docs.split(",") if x]:
        r = many_documents(n, trace_dir)
        print(r, flush=True)
        rows.append(f"| {n} documents not on disk, opened at once | {r['hover_ms']:.0f} | every one's diagnostics "
                    f"{r['settle_s']:.1f} s after the first open; {r['lints']} lints |")
    r = replace_all()
    print(r, flush=True)
    rows.append(f"| one didChange of {r['edits']} edits (replace-all) in a 3,000-line file | {r['hover_ms']:.0f} | "
                f"that version's diagnostics {r['diagnostics_s']:.2f} s after it |")
    r = big_kernel_case(args.statements)
    print(r, flush=True)
    rows.append(f"| a kernel of {r['statements']} statements opened (0.5 s into its lint) | {r['hover_ms']:.0f} "
                f"(another document edited just before: {r['hover_edited_ms']:.0f}) | its own diagnostics "
                f"{r['big_lint_s']:.1f} s after it opened |")
    load1 = os.getloadavg()[0]
    import pygls

    from tritonify.infra.version import __version__

    head = (f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {platform.machine()}, {os.cpu_count()} CPUs, load "
            f"average {load0:.1f} at the start, {load1:.1f} at the end (other jobs share the machine); tritonify "
            f"{__version__}, Python {platform.python_version()}, pygls {pygls.__version__ if hasattr(pygls, '__version__') else '2.x'}.")
    table = "\n".join(["| what the server was given | hover on another document, ms | and |", "| --- | --- | --- |", *rows])
    print(head)
    print(table)
    if args.out:
        Path(args.out).write_text(f"# The server answers while it is busy (benchmarks/server_blocking.py)\n\n{head}\n"
                                  f"`python benchmarks/server_blocking.py --docs {args.docs} --statements {args.statements}`: "
                                  "each answer timed from the request's send to its response.\n\n" + table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
