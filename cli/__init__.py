"""Tritonify: lint, benchmark and profile Triton and CUDA kernels.

This folder (`cli/` in the repository) is the root of the `tritonify` package: the command
line. The engines live in `tritonify.diagnostics` (static rules, ncu parsing, patterns) and
`tritonify.kernels` (templates, benchmark harness); `tritonify.server` is the LSP glue.
"""

try:
    from tritonify.infra.version import __version__
except ModuleNotFoundError as exc:  # pragma: no cover - a development install made before infra/ existed
    raise ImportError("tritonify.infra is not installed: the development install predates the infra/ folder; "
                      "re-run the development install: `python -m pip install --no-deps -e .` (or scripts/install.sh)") from exc

__all__ = ["__version__"]
