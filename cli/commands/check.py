"""`tritonify check [PATHS...]`: lint Triton and CUDA files (ruff's interface)."""
from __future__ import annotations

import sys
from pathlib import Path

from tritonify.diagnostics import report
from tritonify.diagnostics.engine import iter_files, lint_file, lint_text
from tritonify.diagnostics.fixes import apply_fixes
from tritonify.diagnostics.settings import SettingsError, load_settings

NAME = "check"
HELP = "lint Triton and CUDA files"
ORDER = 10


def add_arguments(p):
    p.add_argument("paths", nargs="*", default=["."], help="files or folders (default: .)")
    p.add_argument("--format", choices=["text", "json", "sarif"], default="text", help="output format")
    p.add_argument("--select", help="comma-separated codes or prefixes to enable (e.g. TRI001,CUD)")
    p.add_argument("--extend-select", help="codes or prefixes to enable on top of the configuration")
    p.add_argument("--ignore", help="comma-separated codes or prefixes to disable")
    p.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    p.add_argument("--diff", action="store_true", help="with --fix: print the diff instead of writing")
    p.add_argument("--statistics", action="store_true", help="count findings per rule")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    p.add_argument("--stdin-filename", help="read the source from stdin and report it under this name")
    p.add_argument("--no-summary", action="store_true", help="omit the summary line (text format)")
    p.add_argument("--config", help="pyproject.toml to read [tool.tritonify] from")


def run(args) -> int:
    for raw in args.paths:
        if not Path(raw).exists() and not args.stdin_filename:
            print(f"tritonify: error: {raw}: no such file or directory", file=sys.stderr)
            return 2
    try:
        start = Path(args.config).parent if args.config else Path(args.paths[0] if args.paths else ".")
        settings = load_settings(start).merged(select=args.select, ignore=args.ignore, extend_select=args.extend_select)
    except (SettingsError, ValueError) as exc:
        print(f"tritonify: error: {exc}", file=sys.stderr)
        return 2

    findings, files, fixed, errors = [], 0, 0, []
    if args.stdin_filename:
        data = sys.stdin.buffer.read()
        result = lint_text(data, args.stdin_filename, settings)
        results = [(None, result)]
    else:
        results = [(f, lint_file(f, settings)) for f in iter_files(args.paths, settings)]

    for path, result in results:
        files += 1
        if result.error and result.error.startswith("internal error"):
            errors.append(f"{result.path}: {result.error}")
        if args.fix and path is not None and result.findings:
            n = _fix_file(path, result, settings, diff=args.diff)
            if n:
                fixed += n
                if not args.diff:
                    result = lint_file(path, settings)
        findings.extend(result.findings)

    out = sys.stdout
    if args.statistics:
        if findings:
            print(report.statistics(findings), file=out)
    elif args.format == "text":
        body = report.text(findings)
        if body:
            print(body, file=out)
        if not args.no_summary:
            print(report.summary(findings, files, fixed=fixed), file=out)
    else:
        print(report.render(findings, args.format), file=out)
    for e in errors:
        print(f"tritonify: {e}", file=sys.stderr)
    if errors:
        return 2
    return 0 if (not findings or args.exit_zero) else 1


def _fix_file(path: Path, result, settings, *, diff: bool) -> int:
    """Apply safe fixes until none is left (at most 10 passes). Returns fixes applied."""
    import difflib

    original = path.read_bytes().decode("utf-8", errors="surrogateescape")
    text, total = original, 0
    findings = result.findings
    for _ in range(10):
        text, n = apply_fixes(text, findings)
        if not n:
            break
        total += n
        findings = lint_text(text, str(path), settings).findings
    if total and text != original:
        if diff:
            sys.stdout.writelines(difflib.unified_diff(
                original.splitlines(True), text.splitlines(True), f"a/{path}", f"b/{path}"))
        else:
            path.write_bytes(text.encode("utf-8", errors="surrogateescape"))
    return total
