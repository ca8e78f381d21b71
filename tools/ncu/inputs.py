"""Read what `tritonify diagnose` is given: an `.ncu-rep`, or the CSV pages ncu exports.

A CSV is recognised by its first rows, not its name: the raw page starts with `"ID"` and has a
`"Kernel Name"` column, the details page has `"Rule Name"`, a source page starts with
`"File Path"`. `.gz` files are read transparently (reports copied from a cluster are often
compressed), never past `MAX_BYTES` of text (a gzip that inflates without bound is refused after
that many bytes, in bounded memory). A page that does not parse (truncated, an unterminated
quote, a cell over the csv module's limit) is refused with the file's name: no numbers are made
from half a row.
"""
from __future__ import annotations

import gzip
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from tritonify.diagnostics.ncu.errors import ProfileError
from tritonify.tools.ncu.ncu_tool import export_pages, find_ncu


@dataclass
class Pages:
    raw: str
    details: str | None = None
    sources: list[str] = field(default_factory=list)
    parsed: tuple | None = None     # (launches, rules by launch id, source pages) read through ncu_report

    def diagnose(self, roots: list[str] | None = None):
        from tritonify.diagnostics.ncu.diagnose import diagnose_pages, diagnose_parsed
        from tritonify.diagnostics.ncu.source_page import parse_source

        if self.parsed is None:
            return diagnose_pages(self.raw, self.details, self.sources, roots=roots)
        launches, rules, pages = self.parsed
        return diagnose_parsed(launches, rules, [*pages, *(parse_source(s) for s in self.sources)], roots=roots)


MAX_BYTES = 1 << 30   # 1 GiB of CSV text: far above any real export (a 2,240-column raw page of 1,000 launches is ~25 MB)


def read_text(path: str | Path) -> str:
    p = Path(path)
    try:
        with open(p, "rb") as f:
            magic = f.read(2)
        if magic == b"\x1f\x8b":
            with gzip.open(p, "rb") as g:
                data = g.read(MAX_BYTES + 1)   # bounded: never more than the limit in memory
        else:
            if p.stat().st_size > MAX_BYTES:
                raise ProfileError("bad-input", f"{path} is larger than {MAX_BYTES:,} bytes: not an ncu CSV export")
            data = p.read_bytes()
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise ProfileError("bad-input", f"{path}: the gzip file is damaged or truncated ({exc})") from None
    if len(data) > MAX_BYTES:
        raise ProfileError("bad-input", f"{path} inflates to more than {MAX_BYTES:,} bytes: refused "
                           "(a gzip that expands without bound is not an ncu export)")
    return data.decode("utf-8-sig", errors="replace")


def _checked(path: str | Path, text: str, kind: str) -> str:
    """The page's text once its parser accepts it; else an error naming the file."""
    from tritonify.diagnostics.ncu.details_page import parse_details
    from tritonify.diagnostics.ncu.raw_page import PageError, parse_raw
    from tritonify.diagnostics.ncu.source_page import parse_source

    try:
        {"raw": parse_raw, "details": parse_details, "source": parse_source}[kind](text)
    except PageError as exc:
        raise ProfileError("bad-input", f"{path}: {exc}") from None
    return text


def kind_of(text: str) -> str:
    """'raw', 'details', 'source' or 'unknown'."""
    head = text.lstrip()[:4000]
    first = head.splitlines()[0] if head else ""
    if first.startswith('"File Path"'):
        return "source"
    if '"Rule Name"' in first:
        return "details"
    if first.startswith('"ID"') and '"Kernel Name"' in first:
        return "raw"
    return "unknown"


def load(report: str, sources: list[str] | None = None, details: str | None = None) -> Pages:
    path = Path(report)
    if not path.is_file():
        raise ProfileError("not-found", f"{report}: no such file")
    if path.suffix in (".ncu-rep", ".ncu-repz"):
        from tritonify.tools.ncu.report_reader import ReaderUnavailable, read_report

        try:   # one load of the report through ncu_report (in a child process), else CSV exports
            launches, rules, source_pages, _ = read_report(str(path), ncu=find_ncu())
        except ReaderUnavailable:
            launches = []
        if launches:
            return Pages("", None, [_expect(s, "source") for s in sources or []], (launches, rules, source_pages))
        if find_ncu() is None:
            raise ProfileError("ncu-missing", f"{report} is an Nsight Compute report and reading it needs `ncu`",
                               "install Nsight Compute, or export the pages where ncu exists: "
                               "`ncu --import R.ncu-rep --csv --page raw --print-units base > raw.csv` "
                               "(and --page details, --page source --print-source cuda,sass -k regex:NAME), "
                               "then `tritonify diagnose raw.csv --details details.csv --source src.csv`")
        raw, det, srcs = export_pages(str(path))
        return Pages(raw, det, srcs + [read_text(s) for s in sources or []])
    text = read_text(path)
    kind = kind_of(text)
    if kind != "raw":
        what = {"details": "a details page", "source": "a source page"}.get(kind, "not an ncu CSV page")
        raise ProfileError("bad-input", f"{report} is {what}; REPORT must be an .ncu-rep or the raw page",
                           "export it with `ncu --import R.ncu-rep --csv --page raw --print-units base`; pass "
                           "details pages with --details and source pages with --source")
    pages = Pages(_checked(report, text, "raw"))
    if details:
        pages.details = _expect(details, "details")
    pages.sources = [_expect(s, "source") for s in sources or []]
    return pages


def _expect(path: str, kind: str) -> str:
    text = read_text(path)
    found = kind_of(text)
    if found != kind:
        what = {"raw": "the raw page", "details": "a details page", "source": "a source page"}.get(found, "not an ncu CSV page")
        raise ProfileError("bad-input", f"{path} should be a {kind} page but is {what}",
                           "--details takes `--page details` CSV, --source takes `--page source --print-source cuda,sass` CSV")
    return _checked(path, text, kind)
