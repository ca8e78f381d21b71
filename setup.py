"""Map the repository's top-level folders onto the one import namespace `tritonify`.

pyproject.toml holds the metadata; this file only computes the package list, so a new
sub-package (a folder with an `__init__.py`) is picked up without editing anything.
"""
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).parent
# folder on disk -> import name
FOLDERS = {
    "cli": "tritonify",
    "server": "tritonify.server",
    "diagnostics": "tritonify.diagnostics",
    "kernels": "tritonify.kernels",
    "references": "tritonify.references",
    "infra": "tritonify.infra",
}
DATA = ["*.md", "*.json", "*.csv", "*.txt", "*.html", "*.js", "*.css", "py.typed"]


def _packages():
    package_dir, packages = {}, []
    for folder, name in FOLDERS.items():
        base = ROOT / folder
        for init in sorted(base.rglob("__init__.py")):
            rel = init.parent.relative_to(base)
            if any(part.startswith((".", "__pycache__")) for part in rel.parts):
                continue
            pkg = ".".join([name, *rel.parts]) if rel.parts else name
            packages.append(pkg)
            package_dir[pkg] = str(Path(folder, *rel.parts))
    return package_dir, packages


package_dir, packages = _packages()
package_data = {pkg: DATA for pkg in packages}
# references/ keeps its pages in plain folders (rules/, patterns/, guides/, ...), not packages:
# without this a wheel (and the VS Code extension's bundle) has no rule pages to link to.
package_data["tritonify.references"] = DATA + ["*/*.md"]
setup(
    package_dir=package_dir,
    packages=packages,
    package_data=package_data,
)
