"""`tritonify check [PATHS...]`: lint Triton and CUDA files (ruff's interface)."""
from __future__ import annotations

import logging
import sys
from pathlib import Path

from tritonify.diagnostics import report
from tritonify.diagnostics.engine import FileResult, iter_files, lint_file, lint_text, read_stream_source
from tritonify.diagnostics.file_fixes import fix_file
from tritonify.diagnostics.settings import SettingsError, check_selectors, load_settings

NAME = "check"
HELP = "lint Triton and CUDA files"
ORDER = 10

log = logging.getLogger(__name__)


def add_arguments(p):
    p.add_argument("paths", nargs="*", default=["."], help="files or folders (default: .)")
    p.add_argument("--format", choices=["text", "json", "sarif"], default="text", help="output format")
    p.add_argument("--select", help="comma-separated codes or prefixes to enable (e.g. TRI001,CUD)")
    p.add_argument("--extend-select", help="codes or prefixes to enable on top of the configuration")
    p.add_argument("--ignore", help="comma-separated codes or prefixes to disable")
    p.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    p.add_argument("--diff", action="store_true", help="with --fix: print the diff instead of writing (nothing is written)")
    p.add_argument("--statistics", action="store_true", help="count findings per rule")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    p.add_argument("--stdin-filename", help="read the source from stdin and report it under this name")
    p.add_argument("--no-summary", action="store_true", help="omit the summary line (text format)")
    p.add_argument("--config", help="pyproject.toml to read [tool.tritonify] from")


def _settings(args):
    """The settings for this run, or a usage error's message (the file, the key, the code)."""
    try:
        start = Path(args.config).parent if args.config else Path(args.paths[0] if args.paths else ".")
        settings = load_settings(start)
        flags = {"select": args.select, "ignore": args.ignore, "extend_select": args.extend_select}
        for key, value in flags.items():
            if value:
                check_selectors(f"--{key.replace('_', '-')}", [c.strip() for c in value.split(",") if c.strip()])
        return settings.merged(**flags)
    except (SettingsError, ValueError) as exc:
        return str(exc)


def run(args) -> int:
    for raw in args.paths:
        if not Path(raw).exists() and not Path(raw).is_symlink() and not args.stdin_filename:
            print(f"tritonify: error: {raw}: no such file or directory", file=sys.stderr)
            return 2
    settings = _settings(args)
    if isinstance(settings, str):
        print(f"tritonify: error: {settings}", file=sys.stderr)
        return 2

    findings, files, fixed, errors, named_skipped = [], 0, 0, [], False
    skipped: list[tuple[Path, str]] = []
    if args.stdin_filename:
        data = read_stream_source(sys.stdin.buffer, args.stdin_filename, settings)   # never more than the limit
        result = data if isinstance(data, FileResult) else lint_text(data, args.stdin_filename, settings)
        results = iter([(None, result, [], 0)])
    else:
        results = (_check_one(path, settings, args) for path in iter_files(args.paths, settings, skipped))

    for path, result, problems, n_fixed in results:
        files += 1
        if result.error and result.error.startswith("internal error"):
            errors.append(f"{result.path}: {result.error}")
        for note in result.notes:
            print(f"tritonify: warning: {result.path}: {note}", file=sys.stderr)
        for problem in problems:
            print(f"tritonify: warning: {problem}", file=sys.stderr)
        fixed += n_fixed
        findings.extend(result.findings)
    named = {Path(raw) for raw in args.paths}
    for path, why in skipped:
        print(f"tritonify: warning: {path}: skipped: {why}", file=sys.stderr)
        named_skipped = named_skipped or path in named

    out = sys.stdout
    if args.statistics:
        if findings:
            print(report.statistics(findings), file=out)
    elif args.format == "text":
        body = report.text(findings)
        if body:
            print(body, file=out)
        if not args.no_summary:
            print(report.summary(findings, files, fixed=fixed, would=args.fix and args.diff, skipped=len(skipped)), file=out)
    else:
        print(report.render(findings, args.format), file=out)
    for e in errors:
        print(f"tritonify: {e}", file=sys.stderr)
    if errors or named_skipped:
        return 2
    return 0 if (not findings or args.exit_zero) else 1


def _check_one(path: Path, settings, args):
    """(path, result, problems, fixes applied) for one file: linted, or with --fix fixed (with
    --diff, only its diff printed)."""
    try:
        if not args.fix:
            return path, lint_file(path, settings), [], 0
        outcome = fix_file(path, settings, diff=args.diff)
    except Exception as exc:  # one file's internal error is reported with its name; the run goes on
        log.debug("checking %s failed", path, exc_info=True)
        return path, FileResult(str(path), error=f"internal error: {type(exc).__name__}: {exc}"), [], 0
    if outcome.diff:
        sys.stdout.write(outcome.diff)
    return path, outcome.result, outcome.problems, outcome.fixed
