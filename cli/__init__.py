"""Tritonify: lint, benchmark and profile Triton and CUDA kernels.

This folder (`cli/` in the repository) is the root of the `tritonify` package: the command
line. The engines live in `tritonify.diagnostics` (static rules, ncu parsing, patterns) and
`tritonify.kernels` (templates, benchmark harness); `tritonify.server` is the LSP glue.
"""

import importlib.util as _importlib_util
import os as _os

if _importlib_util.find_spec("tritonify.infra") is None:  # pragma: no cover
    # A development install made before infra/ existed maps no `tritonify.infra`: find it beside
    # this folder until the install is re-run (`python -m pip install -e .`, scripts/install.sh).
    __path__.append(_os.path.dirname(_os.path.abspath(__path__[0])))  # type: ignore[name-defined]

from tritonify.infra.version import __version__  # noqa: E402

__all__ = ["__version__"]
