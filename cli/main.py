"""`tritonify` command line: one sub-command per module in `tritonify.cli.commands`.

A sub-command module defines `NAME`, `HELP`, `add_arguments(parser)` and `run(args) -> int`.
Adding one means adding one file; this dispatcher finds it.
"""
from __future__ import annotations

import argparse
import sys

from tritonify.cli import commands
from tritonify.infra import exit_codes
from tritonify.infra.discovery import discover
from tritonify.infra.version import __version__


def _command_modules(only: str | None = None):
    """Every sub-command module, or just `only`'s when it names one: `tritonify profile` then
    starts ncu without first importing the lint engine and the other commands (~0.1-0.2 s)."""
    mods = discover(commands, kind="command", name_pattern=r"[a-z][a-z0-9_]*",
                    required=("NAME", "HELP", "add_arguments", "run"), only=only)
    mods.sort(key=lambda m: getattr(m, "ORDER", 50))
    return mods


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tritonify",
        description="Lint, benchmark and profile Triton and CUDA kernels.",
    )
    parser.add_argument("--version", action="version", version=f"tritonify {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for mod in _command_modules(only):
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=getattr(mod, "DESCRIPTION", mod.HELP))
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else argv
    parser = build_parser(args_in[0] if args_in and not args_in[0].startswith("-") else None)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    if not getattr(args, "_run", None):
        parser.print_help(sys.stderr)
        return exit_codes.ERROR
    try:
        return int(args._run(args) or 0)
    except KeyboardInterrupt:
        return exit_codes.INTERRUPTED
    except BrokenPipeError:
        return exit_codes.OK
    except Exception as exc:  # an internal error is exit 2 with a clear message, never a bare trace
        print(f"tritonify: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return exit_codes.ERROR


if __name__ == "__main__":
    sys.exit(main())
