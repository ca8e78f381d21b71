# Sourced by the device scripts, from the repository root: make `tritonify` importable from the
# copied tree (the layout setup.py maps: tritonify/ is the package root, the top-level folders
# its subpackages), without installing it, and export PYTHONPATH.
PKG=/tmp/tritonify_path/tritonify
rm -rf /tmp/tritonify_path && mkdir -p "$PKG"
for f in "$PWD"/tritonify/*; do ln -s "$f" "$PKG/"; done
# the folders are setup.py's FOLDERS (read, not restated: a new top-level package comes along by itself)
FOLDERS=$(python3 -c 'import ast; t = ast.parse(open("setup.py").read()); print(" ".join(next(ast.literal_eval(n.value) for n in t.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "FOLDERS")))')
for d in $FOLDERS; do [ "$d" != tritonify ] && [ -e "$PWD/$d" ] && ln -s "$PWD/$d" "$PKG/$d"; done
export PYTHONPATH=/tmp/tritonify_path PYTHONUNBUFFERED=1
