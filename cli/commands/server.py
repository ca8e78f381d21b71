"""`tritonify server`: start the language server on stdin/stdout (for any LSP client).

pygls is imported only when the server starts, so other sub-commands stay quick to start.
"""
from __future__ import annotations

NAME = "server"
HELP = "run the language server on stdio (VS Code, Neovim, Helix, ...)"
ORDER = 80


def add_arguments(p) -> None:
    p.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default and only transport)")
    p.add_argument("--log-file", help="also write the server's log to this file")
    p.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                   help="log level on stderr (default WARNING)")


def run(args) -> int:
    from tritonify.server.app import serve

    return serve(args)
