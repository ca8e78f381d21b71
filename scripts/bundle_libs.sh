#!/usr/bin/env bash
# Put Tritonify and its Python dependencies into bundled/libs, for the .vsix (the template's
# bundled/libs): the extension puts that folder first on PYTHONPATH, so installing the .vsix is
# enough for linting on a machine with only Python 3.10+.
#
# Pure-Python packages are the same for every Python; tree-sitter and tree-sitter-cuda are compiled,
# so their manylinux x86_64 wheels for CPython 3.10-3.13 are unpacked side by side (each binary is
# named for its Python, e.g. _binding.cpython-312-x86_64-linux-gnu.so). On other platforms the CUDA
# parser is missing from the bundle and the server says so in its log (Triton linting still works),
# unless tree-sitter is installed in the interpreter's own environment.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
OUT=bundled/libs
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PYTHONS="3.10 3.11 3.12 3.13"
PLATFORMS="--platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64"

rm -rf "$OUT"
mkdir -p "$OUT" "$WORK/wheels"
echo "bundle_libs: building the tritonify wheel"
# From a clean copy of the sources (tracked and new, not ignored), so nothing stale in build/ ships.
mkdir -p "$WORK/src"
git ls-files -z --cached --others --exclude-standard | tar --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -C "$WORK/src" -xf -
"$PY" -m pip wheel -q --no-deps -w "$WORK/wheels" "$WORK/src" 2>&1 | grep -v "^WARNING: Location\|notice\]" || true
# The project's runtime dependencies, straight from pyproject.toml (one source of truth).
"$PY" - "$WORK/requirements.txt" <<'PYEOF'
import sys
try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib
deps = tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]
open(sys.argv[1], "w").write("\n".join(deps) + "\n")
PYEOF
for v in $PYTHONS; do
  echo "bundle_libs: dependencies for CPython $v"
  # shellcheck disable=SC2086
  "$PY" -m pip download -q --only-binary=:all: --python-version "$v" --implementation cp $PLATFORMS \
    -d "$WORK/wheels" -r "$WORK/requirements.txt" 2>&1 | grep -v "^WARNING: Location\|notice\]" || true
done
# `pip download --python-version` evaluates markers for the running Python; what CPython 3.10 needs
# besides (pyproject's tomli, cattrs' exceptiongroup) is pure Python and harmless on newer ones.
"$PY" -m pip download -q --only-binary=:all: --no-deps -d "$WORK/wheels" tomli exceptiongroup 2>&1 | grep -v "^WARNING: Location\|notice\]" || true
"$PY" - "$WORK/wheels" "$OUT" <<'PYEOF'
"""Unpack the wheels into the bundle; refuse two versions of one pure-Python package."""
import sys, zipfile
from pathlib import Path

wheels, out = Path(sys.argv[1]), Path(sys.argv[2])
versions = {}
for whl in sorted(wheels.glob("*.whl")):
    name, version = whl.name.split("-")[:2]
    versions.setdefault(name.lower(), set()).add(version)
    with zipfile.ZipFile(whl) as zf:
        zf.extractall(out)
clash = {n: v for n, v in versions.items() if len(v) > 1}
if clash:
    sys.exit(f"bundle_libs: more than one version of {clash}; pin them in pyproject.toml")
print("bundle_libs: " + ", ".join(f"{n} {sorted(v)[0]}" for n, v in sorted(versions.items())))
PYEOF
find "$OUT" -name "__pycache__" -type d -prune -exec rm -rf {} +
rm -rf "$OUT/bin"
# Proof: the bundle alone serves the server (no site-packages, the interpreter's own stdlib only),
# imported through the extension's own entry script from a folder outside the repository: run from
# here, `-c` would put the repository first on sys.path and import its `tritonify/`, not the bundle's.
BUNDLE=$(cd "$OUT" && pwd)
ENTRY=$(pwd)/bundled/tool/tritonify_server.py
(cd "$WORK" && PYTHONPATH="$BUNDLE" "$PY" -s "$ENTRY" --check) > "$WORK/check.txt"
(cd "$WORK" && PYTHONPATH="$BUNDLE" "$PY" -s -c "
import sys, tritonify, pygls, lsprotocol, tree_sitter, tree_sitter_cuda
bundle = sys.argv[1]
for mod in (tritonify, pygls, lsprotocol, tree_sitter, tree_sitter_cuda):
    assert mod.__file__.startswith(bundle + '/'), f'{mod.__name__} was imported from {mod.__file__}, not the bundle'
from tritonify.diagnostics.registry import get_rule
page = get_rule('TRI001').rule.page
assert page.is_file() and str(page).startswith(bundle + '/'), f'no rule page in the bundle: {page}'
print('bundle_libs: OK,', tritonify.__file__)" "$BUNDLE")
grep -qx "$BUNDLE/tritonify/__init__.py" "$WORK/check.txt" || { echo "bundle_libs: the entry script found $(cat "$WORK/check.txt"), not the bundle" >&2; exit 1; }
du -sh "$OUT" | sed 's/^/bundle_libs: size /'
