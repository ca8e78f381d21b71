"""`tritonify template`: list the kernel templates, or print one with its placeholders filled in."""
from __future__ import annotations

import sys

from tritonify.kernels.templates import get_template, list_templates

NAME = "template"
HELP = "list kernel templates (--list) or print one (NAME)"
ORDER = 22


def add_arguments(p):
    p.add_argument("name", nargs="?", metavar="NAME", help="the template to print (see --list)")
    p.add_argument("--list", action="store_true", help="list the templates, one per line: NAME  TITLE")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="fill a placeholder (name=my_norm, hidden=8192, dtype=float16); repeatable")
    p.add_argument("--snippet", action="store_true", help="print the LSP snippet text instead of plain Python")


def _error(message: str) -> int:
    print(f"tritonify: error: {message}", file=sys.stderr)
    return 2


def run(args) -> int:
    if args.list:
        templates = list_templates()
        width = max(len(t.name) for t in templates)
        for t in templates:
            print(f"{t.name:<{width}}  {t.title}")
        return 0
    if not args.name:
        return _error("give a template NAME or --list")
    try:
        template = get_template(args.name)
    except KeyError:
        return _error(f"no template named {args.name!r} (see `tritonify template --list`)")
    values = {}
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep or not key:
            return _error(f"--set wants KEY=VALUE, got {item!r}")
        values[key.strip()] = value.strip()
    try:
        text = template.snippet(**values) if args.snippet else template.render(**values)
    except (KeyError, ValueError) as exc:
        return _error(str(exc.args[0]) if exc.args else str(exc))
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0
