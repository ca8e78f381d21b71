"""`tritonify lineage [PATH]`: view a kernel's benchmark history; `--promote` / `--reject` a run.

PATH is a ``candidates.jsonl``, or a kernel file or folder (its ``candidates.jsonl`` beside it).
A run is named by its id (or a unique prefix of it) or by its candidate name (the latest such run).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

NAME = "lineage"
HELP = "view benchmark history (candidates.jsonl); promote or reject a run"
ORDER = 31


def add_arguments(p):
    p.add_argument("path", nargs="?", default=".", help="candidates.jsonl, or a kernel file or folder (default: .)")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--promote", metavar="RUN", help="mark a run (id or candidate name) promoted")
    group.add_argument("--reject", metavar="RUN", help="mark a run (id or candidate name) rejected")
    p.add_argument("--note", default="", help="why (recorded with --promote/--reject)")
    p.add_argument("--format", choices=["table", "json"], default="table")


def lineage_file(path: Path) -> Path:
    from tritonify.kernels.bench.lineage import FILE_NAME

    if path.suffix == ".jsonl":
        return path
    folder = path if path.is_dir() else path.parent
    return folder / FILE_NAME


def _row(run: dict) -> str:
    shapes = run.get("shapes") or []
    speed = ""
    if shapes and shapes[-1].get("speedup"):
        speed = " ".join(f"{v:.2f}x {k}" for k, v in shapes[-1]["speedup"].items())
    commit = (run.get("git") or {}).get("commit") or ""
    dirty = "+dirty" if (run.get("git") or {}).get("dirty") else ""
    gpu = (run.get("gpu") or {}).get("name") or "no GPU"
    return (f"{run['id']}  {run.get('time', '')}  {run.get('status', ''):<9}  {run.get('outcome', ''):<9}  "
            f"{run.get('name', '')}  parent={run.get('parent') or '-'}  {commit[:8]}{dirty}  {gpu}  {speed}").rstrip()


def run(args) -> int:
    from tritonify.kernels.bench import lineage

    path = lineage_file(Path(args.path))
    if not path.is_file():
        print(f"tritonify: error: no lineage file at {path} (tritonify bench writes one)", file=sys.stderr)
        return 2
    try:
        if args.promote or args.reject:
            ref = args.promote or args.reject
            rec = lineage.set_status(path, ref, "promoted" if args.promote else "rejected", args.note)
            print(f"run {rec['id']} is now {rec['status']}")
            return 0
    except lineage.LineageError as exc:
        print(f"tritonify: error: {exc}", file=sys.stderr)
        return 2
    runs = lineage.view(path)
    if args.format == "json":
        print(json.dumps(runs, indent=2, default=str))
    else:
        print("id          time                  status     outcome    name  parent  commit  gpu  speedups(last shape)")
        for r in runs:
            print(_row(r))
    return 0
