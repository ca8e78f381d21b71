"""Recall and false flags of TRI003 on the hand-labelled Liger file study.

`labels/liger_files.csv` holds, per corpus file, the Liger op it re-implements as a standalone
kernel (`op`, with whether Liger's op is a drop-in) or `none` for a file that implements no Liger
op. This script lints each file with TRI003 alone and counts:

* recall: positive files where TRI003 fires and its message names the labelled op;
* wrong op: positive files where TRI003 fires but names another op;
* false flags: negative files where TRI003 fires at all;
* Liger-Kernel's own package (`liger-kernel/` in the corpus): every TRI003/TRI023 finding there
  is a library told to use itself;
* providers: labelled files that TRI003's provider scope quiets (a package that registers its
  kernels as aten implementations, a copy adapted from Liger's source, vendored code:
  diagnostics/liger/scope.py) must get no finding at all.

Recall and false flags measure the recogniser: they are counted with the provider scope off (a
provider's re-implementation is still one; the scope, measured on its own, keeps it quiet), and so
with the NPU-backend scope (an Ascend twin of a GPU kernel re-implements the op too: TRI003 leaves
the advice to the GPU module, and labelled NPU files must get no finding either). A file
labelled `drop_in = no` (Liger ships another function: the exact-erf GeGLU against Liger's tanh
form) is not a positive: the policy reports only what Liger's op can replace.

    python benchmarks/realworld/liger_study.py [--corpus DIR] [-v]

The corpus is built by `corpus.py` (default `$TRITONIFY_CORPUS` or ~/.cache/tritonify-realworld).
"""
from __future__ import annotations

import argparse
import csv
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tritonify.diagnostics.engine import lint_text
from tritonify.diagnostics.liger.api import OPS
from tritonify.diagnostics.liger.scope import npu_backend_module, provider_reason
from tritonify.diagnostics.rules.triton import tri003_liger_reimplementation as tri003
from tritonify.diagnostics.settings import Settings

LABELS = Path(__file__).parent / "labels" / "liger_files.csv"
LIGER_PACKAGE = "liger-kernel"


def default_corpus() -> Path:
    return Path(os.environ.get("TRITONIFY_CORPUS", Path.home() / ".cache" / "tritonify-realworld"))


@dataclass
class Study:
    positives: int = 0
    found: list[str] = field(default_factory=list)        # fired naming the labelled op
    wrong_op: list[str] = field(default_factory=list)     # fired naming another op
    missed: list[str] = field(default_factory=list)
    negatives: int = 0
    false_flags: list[str] = field(default_factory=list)
    liger_files: int = 0
    liger_findings: list[str] = field(default_factory=list)
    provider_files: int = 0
    provider_findings: list[str] = field(default_factory=list)
    npu_files: int = 0
    npu_findings: list[str] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)       # labelled files not in this corpus

    @property
    def recall(self) -> float:
        return len(self.found) / self.positives if self.positives else 0.0

    @property
    def false_flag_rate(self) -> float:
        return len(self.false_flags) / self.negatives if self.negatives else 0.0


def _titles(op: str) -> tuple[str, ...]:
    """What a message says for this op: its title in the API table (an op the table does not
    have yet cannot be named)."""
    entry = OPS.get(op)
    return (f"re-implements {entry.title} ",) if entry else ()


def _findings(path: Path, codes: tuple[str, ...], scope: bool = True):
    text = path.read_bytes()
    if scope:
        result = lint_text(text, str(path), Settings(select=codes))
    else:
        saved = tri003.provider_reason, tri003.npu_backend_module
        tri003.provider_reason = lambda path, text: None
        tri003.npu_backend_module = lambda path: False
        try:
            result = lint_text(text, str(path), Settings(select=codes))
        finally:
            tri003.provider_reason, tri003.npu_backend_module = saved
    return [f for f in result.findings if f.code in codes]


def measure(corpus: Path, labels: Path = LABELS) -> Study:
    study = Study()
    with labels.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        path = corpus / row["path"]
        if not path.is_file():
            study.absent.append(row["path"])
            continue
        if provider_reason(str(path), path.read_text(encoding="utf-8", errors="replace")) is not None:
            study.provider_files += 1
            study.provider_findings += [f"{row['path']}:{f.line}" for f in _findings(path, ("TRI003",))]
        if npu_backend_module(str(path)):
            study.npu_files += 1
            study.npu_findings += [f"{row['path']}:{f.line}" for f in _findings(path, ("TRI003",))]
        if row["op"] != "none" and row.get("drop_in") == "no":
            continue   # Liger ships a different function: not a finding by the policy
        messages = [f.message for f in _findings(path, ("TRI003",), scope=False)]
        if row["op"] == "none":
            study.negatives += 1
            if messages:
                study.false_flags.append(f"{row['path']}: {messages[0][:120]}")
            continue
        study.positives += 1
        titles = _titles(row["op"])
        if any(t in m for m in messages for t in titles):
            study.found.append(row["path"])
        elif messages:
            study.wrong_op.append(f"{row['path']} ({row['op']}): {messages[0][:120]}")
        else:
            study.missed.append(f"{row['path']} ({row['op']})")
    liger_root = corpus / LIGER_PACKAGE
    if liger_root.is_dir():
        for path in sorted(liger_root.rglob("*.py")):
            study.liger_files += 1
            for f in _findings(path, ("TRI003", "TRI023")):
                study.liger_findings.append(f"{path.relative_to(corpus)}:{f.line} {f.code}")
    return study


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=default_corpus())
    ap.add_argument("-v", "--verbose", action="store_true", help="list misses, wrong ops and false flags")
    args = ap.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"no corpus at {args.corpus} (build it with benchmarks/realworld/corpus.py)", file=sys.stderr)
        return 2
    s = measure(args.corpus)
    print(f"recall: {len(s.found)}/{s.positives} = {s.recall:.2f}  (wrong op {len(s.wrong_op)}, missed {len(s.missed)})")
    print(f"false flags: {len(s.false_flags)}/{s.negatives} = {s.false_flag_rate:.1%}")
    print(f"liger-kernel's own package: {len(s.liger_findings)} TRI003/TRI023 findings in {s.liger_files} files")
    print(f"labelled files in a provider package: {len(s.provider_findings)} TRI003 findings in {s.provider_files} files")
    print(f"labelled files of an NPU backend (the GPU twin carries the advice): {len(s.npu_findings)} TRI003 findings in {s.npu_files} files")
    if s.absent:
        print(f"labelled files not in this corpus: {len(s.absent)}")
    if args.verbose:
        for title, items in (("wrong op", s.wrong_op), ("missed", s.missed), ("false flags", s.false_flags),
                             ("in liger-kernel", s.liger_findings), ("in a provider", s.provider_findings), ("in an NPU backend", s.npu_findings)):
            for item in items:
                print(f"  {title}: {item}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
