"""Tritonify: lint, benchmark and profile Triton and CUDA kernels.

This folder is the root of the `tritonify` package and holds only the root: the version and
`python -m tritonify` (`__main__.py`). setup.py maps the other top-level folders under it
(CONTRIBUTING.md's table): `tritonify.cli` (the command line), `tritonify.diagnostics` (static
rules, ncu parsing, patterns), `tritonify.kernels` (templates, benchmark harness),
`tritonify.server` (the LSP glue), `tritonify.references`, `tritonify.infra`.
"""
from pkgutil import extend_path

# Run from the repository's root (or with it on PYTHONPATH, as pytest puts it), Python finds this
# folder before the installed package, and this folder holds only the root. Extending the package's
# path with every other `tritonify/` on sys.path (the editable install's link tree, site-packages)
# finds the mapped sub-packages there. An installed copy is unaffected: its folder holds them all.
__path__ = extend_path(__path__, __name__)

from tritonify.infra.version import __version__  # noqa: E402  (needs the path above)

__all__ = ["__version__"]
