"""The contract between the language server and the VS Code extension, in one folder (README.md
here says what each file fixes). Installed as `tritonify.contract`, so the server reads at run time
the same files that the extension compiles in (`extension/protocol.ts`) and both test suites check
(`tests/contract/`, `extension/test/contract.test.ts`)."""
from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent


def load(name: str) -> dict:
    """One contract file (`protocol.json`, `commands.json`, `bench.schema.json`, ...) as data."""
    return json.loads((HERE / name).read_text(encoding="utf-8"))


# Names both sides share: the busy notification, the job actions and their labels (protocol.json).
PROTOCOL = load("protocol.json")

# The server's commands (and whether each runs the workspace's code), the extension's commands and the
# code-action kinds by name (commands.json); the extension compiles in the same file (extension/contract.ts).
COMMANDS = load("commands.json")
CODE_ACTION_KINDS: dict[str, str] = COMMANDS["codeActionKinds"]
