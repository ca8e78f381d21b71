"""Turn a device run of the TritonBench-T programs into the committed ground truth.

    python benchmarks/freshcode/ground_truth.py RUNS.jsonl[.gz] BUILT_DIR OUT.json [--union EARLIER.json]

RUNS is what run_programs.py wrote on the GPU, BUILT_DIR what build.py wrote. Per program: how it
ended (``outcome``), and for a compile error the failing ``@triton.jit`` function, the failing line in
the program's own numbering and the compiler's message (its innermost part, without the source
excerpt Triton prints). No program text is kept.

``--union EARLIER.json`` adds this run's programs to a ground truth written before (a second device
call over programs the first did not start): the programs are the union (a program in both keeps the
earlier record), ``runs`` lists every run's header and ``run`` describes the union.

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
    args = sys.argv[1:]
    earlier = None
    if "--union" in args:
        at = args.index("--union")
        earlier = json.loads(Path(args[at + 1]).read_text())
        del args[at:at + 2]
    runs, built, out = args[0], Path(args[1]), Path(args[2])
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
    if earlier is not None:
        known = {p["id"] for p in earlier["programs"]}
        runs_before = earlier.get("runs") or [earlier["run"]]
        if header["environment"] != runs_before[0]["environment"]:
            sys.exit(f"{runs}: ran under {header['environment']}, the earlier ground truth under "
                     f"{runs_before[0]['environment']}; a union needs one environment")
        programs = sorted(earlier["programs"] + [p for p in programs if p["id"] not in known],
                          key=lambda p: p["id"])
        header = {**runs_before[0], "programs_run": len(programs), "device_calls": len(runs_before) + 1}
        all_runs = runs_before + [{**json.loads(_open(runs).readline()), "programs_run":
                                   len([p for p in programs if p["id"] not in known])}]
    else:
        all_runs = None
    out.parent.mkdir(parents=True, exist_ok=True)
    document = {"run": header, "programs": programs}
    if all_runs is not None:
        document = {"run": header, "runs": all_runs, "programs": programs}
    out.write_text(json.dumps(document, indent=0) + "\n")
    counts: dict[str, int] = {}
    for p in programs:
        counts[p["outcome"]] = counts.get(p["outcome"], 0) + 1
    print(len(programs), counts)


if __name__ == "__main__":
    main()
