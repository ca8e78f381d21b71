"""Tritonify: lint, benchmark and profile Triton and CUDA kernels.

This folder (`cli/` in the repository) is the root of the `tritonify` package: the command
line. The engines live in `tritonify.diagnostics` (static rules, ncu parsing, patterns) and
`tritonify.kernels` (templates, benchmark harness); `tritonify.server` is the LSP glue.
"""

from tritonify.infra.version import __version__

__all__ = ["__version__"]
