"""The version of Tritonify (the CLI, the server's `serverInfo`, SARIF output, benchmark results)."""

__version__ = "0.1.0"
