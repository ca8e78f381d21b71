"""The language server's command-line arguments, shared by `tritonify server` and
`python -m tritonify.server` (no pygls import here: `tritonify --help` stays quick)."""
from __future__ import annotations


def add_arguments(p) -> None:
    p.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default and only transport)")
    p.add_argument("--log-file", help="also write the server's log to this file")
    p.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                   help="log level on stderr (default WARNING)")
