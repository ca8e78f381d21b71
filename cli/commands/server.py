"""`tritonify server`: start the language server on stdin/stdout (for any LSP client).

pygls is imported only when the server starts, so other sub-commands stay quick to start.
"""
from __future__ import annotations

from tritonify.server.arguments import add_arguments  # noqa: F401 (the dispatcher reads it)

NAME = "server"
HELP = "run the language server on stdio (VS Code, Neovim, Helix, ...)"
ORDER = 80


def run(args) -> int:
    from tritonify.server.app import serve

    return serve(args)
