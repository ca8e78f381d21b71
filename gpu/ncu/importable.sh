# Sourced by the device scripts, from the repository root: make `tritonify` importable from the
# copied tree (the layout setup.py maps: tritonify/ is the package root, the top-level folders
# its subpackages), without installing it, and export PYTHONPATH.
PKG=/tmp/tritonify_path/tritonify
rm -rf /tmp/tritonify_path && mkdir -p "$PKG"
for f in "$PWD"/tritonify/*; do ln -s "$f" "$PKG/"; done
for d in cli contract diagnostics references kernels server infra; do [ -e "$PWD/$d" ] && ln -s "$PWD/$d" "$PKG/$d"; done
export PYTHONPATH=/tmp/tritonify_path PYTHONUNBUFFERED=1
