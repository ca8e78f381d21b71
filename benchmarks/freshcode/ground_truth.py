"""Turn a device run of the TritonBench-T programs into the committed ground truth.

    python benchmarks/freshcode/ground_truth.py RUNS.jsonl[.gz] BUILT_DIR OUT.json

RUNS is what run_programs.py wrote on the GPU, BUILT_DIR what build.py wrote. Per program: how it
ended (``outcome``), and for a compile error the failing ``@triton.jit`` function, the failing line in
the program's own numbering and the compiler's message (its innermost part, without the source
excerpt Triton prints). No program text is kept.

Outcomes: ``passed``; ``compile_error`` (``triton.compiler.errors.*``); ``in_triton`` (another
exception raised inside Triton's launcher or runtime, e.g. an argument the kernel signature does not
take, or out of resources); ``outside_kernel`` (the program failed in its own Python or in torch);
``timeout``; ``crashed``.
"""

from __future__ import annotations

import ast
import gzip
import json
import sys
from pathlib import Path


def _open(path: str):
    return gzip.open(path, "rt") if path.endswith(".gz") else open(path)


def innermost_message(message: str) -> tuple[str, str | None]:
    """(the compiler's own message, the source line it points at) from a CompilationError's text."""
    lines = message.split("\n")
    carets = [i for i, line in enumerate(lines) if line.strip() == "^"]
    if not carets:
        return message.strip(), None
    last = carets[-1]
    return "\n".join(lines[last + 1:]).strip(), lines[last - 1] if last > 0 else None


def _jit_spans(tree: ast.Module) -> dict[str, list[tuple[int, int]]]:
    spans: dict[str, list[tuple[int, int]]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            spans.setdefault(node.name, []).append((node.lineno, node.end_lineno))
    return spans


def locate(program: str, record: dict) -> dict:
    """The failing function's span and the failing line, in the program's own line numbers."""
    compile_info = record["compile"]
    message, pointed = innermost_message(record.get("message") or "")
    if not message and compile_info.get("inner"):
        inner = compile_info["inner"]
        # A failure inside a `triton.language` function (tl.zeros, tl.sum): the outer message is
        # only the call site; the cause is the inner error's own innermost message.
        message = innermost_message(inner["message"])[0] if inner["message"] else ""
        message = message or f"{inner['type']} with no message"
    lines = program.splitlines()
    tree = ast.parse(program)
    spans = _jit_spans(tree)
    function = compile_info.get("function")
    span = None
    first = compile_info.get("function_first_line") or ""
    for start, end in spans.get(function, []):
        if lines[start - 1].strip() == first.strip() or span is None:
            span = (start, end)
    outer_line = None
    if span and compile_info.get("relative_line"):
        outer_line = span[0] + compile_info["relative_line"] - 1
    line = outer_line
    if pointed is not None and pointed.strip():
        # The innermost error may sit in a helper the kernel calls: find the pointed-at source line.
        wanted = pointed.strip()
        hits = [i + 1 for i, text in enumerate(lines) if text.strip() == wanted]
        inside = [h for h in hits if span and span[0] <= h <= span[1]]
        if outer_line in hits:
            line = outer_line
        elif inside:
            line = inside[0]
        elif hits:
            line = hits[0]
    return {"function": function, "function_span": list(span) if span else None,
            "line": line, "call_site_line": outer_line if outer_line != line else None,
            "message": message[:400]}


def outcome(record: dict) -> str:
    status = record["status"]
    if status != "exception":
        return {"passed": "passed", "timeout": "timeout"}.get(status, "crashed")
    if record.get("module", "").startswith("triton.compiler"):
        return "compile_error"
    frames = record.get("frames") or []
    if frames and frames[-1]["file"].startswith("triton/"):
        return "in_triton"
    return "outside_kernel"


def main() -> None:
    runs, built, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    manifest = {p["id"]: p for p in json.load(open(built / "manifest.json"))["programs"]}
    with _open(runs) as handle:
        header = json.loads(handle.readline())
        records = [json.loads(line) for line in handle]
    programs = []
    for record in sorted(records, key=lambda r: r["id"]):
        entry = {"id": record["id"], "operator": manifest[record["id"]]["operator"],
                 "sources": manifest[record["id"]]["sources"], "outcome": outcome(record)}
        if entry["outcome"] == "compile_error":
            program = (built / "programs" / f"{record['id']}.py").read_text(encoding="utf-8")
            entry["error"] = {"type": record["type"], **locate(program, record)}
        elif entry["outcome"] in ("in_triton", "outside_kernel"):
            entry["error"] = {"type": record.get("type"), "message": (record.get("message") or "")[:300]}
        programs.append(entry)
    header.update(programs_run=len(programs),
                  method="benchmarks/freshcode: build.py, run_programs.py (one forked process per program)")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"run": header, "programs": programs}, indent=0) + "\n")
    counts: dict[str, int] = {}
    for p in programs:
        counts[p["outcome"]] = counts.get(p["outcome"], 0) + 1
    print(len(programs), counts)


if __name__ == "__main__":
    main()
