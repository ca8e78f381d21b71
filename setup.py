"""Map the repository's top-level folders onto the one import namespace `tritonify`.

pyproject.toml holds the metadata; this file only computes the package list, so a new
sub-package (a folder with an `__init__.py`) or a new folder of pages is picked up without
editing anything.
"""
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).parent
# folder on disk -> import name
FOLDERS = {
    "tritonify": "tritonify",          # the package root only: the version and `python -m tritonify`
    "cli": "tritonify.cli",
    "server": "tritonify.server",
    "diagnostics": "tritonify.diagnostics",   # the pure analysis: reads text and reports, starts nothing
    "kernels": "tritonify.kernels",
    "tools": "tritonify.tools",               # what starts processes or runs user code (ncu, compile children)
    "references": "tritonify.references",
    "infra": "tritonify.infra",
    "contract": "tritonify.contract",     # the server <-> extension contract (JSON), read at run time
}
DATA = ["*.md", "*.json", "*.csv", "*.txt", "*.html", "*.js", "*.css", "*.ncu-rep", "py.typed"]


def _packages():
    """Every folder under a mapped folder is a package: those with an `__init__.py` hold modules,
    those without hold data only (references/rules/, references/patterns/, ... : the pages and
    precision.json), declared too so that their files ship in the wheel and the editable install."""
    package_dir, packages = {}, []
    for folder, name in FOLDERS.items():
        base = ROOT / folder
        for sub in sorted([base, *(p for p in base.rglob("*") if p.is_dir())]):
            rel = sub.relative_to(base)
            if any(part.startswith((".", "__pycache__")) or part == "node_modules" for part in rel.parts):
                continue
            pkg = ".".join([name, *rel.parts]) if rel.parts else name
            packages.append(pkg)
            package_dir[pkg] = str(Path(folder, *rel.parts))
    return package_dir, packages


package_dir, packages = _packages()
setup(
    package_dir=package_dir,
    packages=packages,
    package_data={pkg: DATA for pkg in packages},
)
