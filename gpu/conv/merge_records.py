"""Merge convolution benchmark records (``gpu/conv/bench.py``'s conv.jsonl) from several device runs into
the one file the README's tables read: for each row (kind, shape, batch) the record of the latest file that
has it. Rows from the files after ``--new`` (the device calls of the code the tables describe) are this
run's; a row taken only from a file before it (an earlier code's run) is marked ``carried_from`` with that
run's date (report.py shows §; a row already marked keeps its mark).

    python gpu/conv/merge_records.py OUT.jsonl OLD.jsonl ... --new CALL1.jsonl CALL2.jsonl ...

A run's date is its ``env`` record's; the last new file's env record heads the output."""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROW_KINDS = ("fwd", "train", "conv1d")


def _key(rec: dict):
    shape = rec.get("shape")
    return rec["kind"], tuple(shape) if isinstance(shape, list) else shape, rec.get("batch")


def _stamp(date: str | None) -> str | None:
    """"2026-12-03T11:44:56Z" -> "2026-12-03 11:44Z" (the form report.py prints)."""
    return f"{date[:10]} {date[11:16]}Z" if date and len(date) >= 16 and date[10] == "T" else date


def merge(old: list[Path], new: list[Path]) -> list[dict]:
    rows: dict = {}
    env = None
    for path in [*old, *new]:
        recs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        run_env = next((r for r in recs if r.get("kind") == "env"), None)
        for rec in recs:
            if rec.get("kind") in ROW_KINDS:
                rec = dict(rec)
                if path in new:
                    rec.pop("carried_from", None)
                elif not rec.get("carried_from"):
                    rec["carried_from"] = _stamp((run_env or {}).get("date"))
                rows[_key(rec)] = rec
        if path in new and run_env:
            env = run_env
    return ([env] if env else []) + list(rows.values())


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__)
        return 2
    if "--new" not in argv[1:]:
        print(__doc__)
        return 2
    split = argv.index("--new")
    out, old, new = Path(argv[0]), [Path(a) for a in argv[1:split]], [Path(a) for a in argv[split + 1:]]
    merged = merge(old, new)
    out.write_text("".join(json.dumps(r) + "\n" for r in merged))
    print(f"{out}: {len(merged)} records from {len(old) + len(new)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
