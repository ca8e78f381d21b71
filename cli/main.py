"""`tritonify` command line: one sub-command per module in `tritonify.commands`.

A sub-command module defines `NAME`, `HELP`, `add_arguments(parser)` and `run(args) -> int`.
Adding one means adding one file; this dispatcher finds it.
"""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from tritonify import __version__, commands

# Exit codes, as ruff uses them.
EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2


def _command_modules():
    mods = []
    for info in pkgutil.iter_modules(commands.__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{commands.__name__}.{info.name}")
        if hasattr(mod, "NAME") and hasattr(mod, "run"):
            mods.append(mod)
    mods.sort(key=lambda m: getattr(m, "ORDER", 50))
    return mods


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tritonify",
        description="Lint, benchmark and profile Triton and CUDA kernels.",
    )
    parser.add_argument("--version", action="version", version=f"tritonify {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for mod in _command_modules():
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=getattr(mod, "DESCRIPTION", mod.HELP))
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    if not getattr(args, "_run", None):
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    try:
        return int(args._run(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_CLEAN
    except Exception as exc:  # an internal error is exit 2 with a clear message, never a bare trace
        print(f"tritonify: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        if "--debug" in (argv or sys.argv):
            raise
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
