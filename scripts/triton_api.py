"""Write diagnostics/triton_api/api.json: what `triton.language` has, per Triton version.

    python scripts/triton_api.py WHEEL [WHEEL ...]

Each WHEEL is a Triton wheel (`pip download --no-deps --only-binary=:all: triton==X -d DIR`). Its
`triton/language/**.py` files are read with zipfile and ast; nothing is installed or imported. For
each version: the public names of `triton.language`, `triton.language.math`,
`triton.language.extra.libdevice` and `triton.language.extra.cuda.libdevice` (a function's
parameters, whether it takes `*args`/`**kwargs`; `null` for a name that is not a function), the
methods of `tl.tensor`, the names bound to dtypes, and frontend features read from the code generator (whether a chained
comparison `a < b < c` compiles; whether `triton.jit` refuses a `**kwargs` parameter when it
decorates the function).
"""

from __future__ import annotations

import ast
import json
import re
import sys
import zipfile
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "diagnostics" / "triton_api" / "api.json"
MODULES = ("triton.language", "triton.language.math", "triton.language.extra",
           "triton.language.extra.libdevice", "triton.language.extra.cuda",
           "triton.language.extra.cuda.libdevice")
INTERNAL = {"_builder", "_semantic", "_generator", "_fn_name", "_generator"}


class Wheel:
    def __init__(self, path: str):
        self.zip = zipfile.ZipFile(path)
        self.names = set(self.zip.namelist())
        self._trees: dict[str, ast.Module | None] = {}

    def module_file(self, dotted: str) -> str | None:
        base = dotted.replace(".", "/")
        for candidate in (base + ".py", base + "/__init__.py"):
            if candidate in self.names:
                return candidate
        return None

    def tree(self, dotted: str) -> ast.Module | None:
        if dotted not in self._trees:
            path = self.module_file(dotted)
            self._trees[dotted] = ast.parse(self.zip.read(path)) if path else None
        return self._trees[dotted]

    def version(self) -> str:
        for name in self.names:
            found = re.match(r"triton-([^/]+)\.dist-info/METADATA$", name)
            if found:
                return found.group(1)
        raise ValueError("no dist-info")


def _signature(node: ast.FunctionDef) -> dict:
    a = node.args
    params = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs) if p.arg not in INTERNAL]
    required = len(a.posonlyargs) + len(a.args) - len(a.defaults)
    positional = [p.arg for p in (*a.posonlyargs, *a.args)]
    return {"params": params,
            "required": [p for p in positional[:required] if p not in INTERNAL and p != "self"]
            + [k.arg for k, d in zip(a.kwonlyargs, a.kw_defaults) if d is None and k.arg not in INTERNAL],
            "varargs": a.vararg is not None, "varkw": a.kwarg is not None}


def _resolve_from(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    is_package = True
    base = parts[: len(parts) - node.level + (1 if is_package else 0)]
    return ".".join(base + ([node.module] if node.module else []))


def names_of(wheel: Wheel, module: str, depth: int = 0) -> dict[str, dict | None]:
    """Public names bound at the top of `module`, with a function's signature where it is found."""
    tree = wheel.tree(module)
    if tree is None or depth > 4:
        return {}
    package = wheel.module_file(module).endswith("__init__.py")
    found: dict[str, dict | None] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            found[node.name] = _signature(node)
        elif isinstance(node, ast.ClassDef):
            init = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
            found[node.name] = None if init is None else {**_signature(init), "class": True}
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        found.setdefault(n.id, None)
        elif isinstance(node, ast.ImportFrom):
            level_base = module if package else module.rsplit(".", 1)[0]
            if node.level:
                parts = level_base.split(".")
                parts = parts[: len(parts) - node.level + 1]
                source = ".".join(parts + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                if alias.name == "*":
                    continue
                bound = alias.asname or alias.name
                sub = f"{source}.{alias.name}"
                if wheel.module_file(sub):
                    found[bound] = {"module": sub}
                elif source.startswith("triton."):
                    target = names_of(wheel, source, depth + 1)
                    found[bound] = target.get(alias.name)
                else:
                    found[bound] = None
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    found[alias.asname] = {"module": alias.name}
        elif isinstance(node, (ast.If, ast.Try)):
            for inner in ast.walk(node):
                if isinstance(inner, ast.FunctionDef):
                    found.setdefault(inner.name, _signature(inner))
    if package:
        prefix = module.replace(".", "/") + "/"
        for name in wheel.names:
            rest = name[len(prefix):] if name.startswith(prefix) else ""
            sub = rest.split("/")[0].removesuffix(".py")
            if sub and sub.isidentifier() and not sub.startswith("_"):
                found.setdefault(sub, {"module": f"{module}.{sub}"})
    return {k: v for k, v in found.items() if not k.startswith("_") or k.startswith("__")}


def tensor_methods(wheel: Wheel) -> list[str]:
    tree = wheel.tree("triton.language.core")
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "tensor":
            names = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
            for n in node.body:
                if isinstance(n, ast.Assign):
                    names.update(t.id for t in n.targets if isinstance(t, ast.Name))
            return sorted(names)
    return []


def dtypes(wheel: Wheel) -> list[str]:
    """Names `triton.language.core` binds to a `dtype(...)` instance (`float32 = dtype('fp32')`) or
    to another such name: values, not functions (a `dtype` has no `__call__` in any release)."""
    names: list[str] = []
    for node in wheel.tree("triton.language.core").body:
        if isinstance(node, ast.Assign) and (
                (isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)
                 and node.value.func.id == "dtype")
                or (isinstance(node.value, ast.Name) and node.value.id in names)):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return sorted(set(names))


def features(wheel: Wheel) -> dict:
    path = "triton/compiler/code_generator.py"
    text = wheel.zip.read(path).decode() if path in wheel.names else ""
    jit_path = "triton/runtime/jit.py"
    jit = wheel.zip.read(jit_path).decode() if jit_path in wheel.names else ""
    return {"chained_comparison": "simultaneous multiple comparison is not supported" not in text,
            "jit_rejects_var_keyword": "JIT functions do not support **" in jit}


def main() -> None:
    data = {"generated_by": "scripts/triton_api.py", "versions": {}}
    if OUT.exists():
        data = json.loads(OUT.read_text())
    for path in sys.argv[1:]:
        wheel = Wheel(path)
        version = wheel.version()
        modules = {}
        for module in MODULES:
            if wheel.module_file(module):
                modules[module] = dict(sorted(names_of(wheel, module).items()))
        data["versions"][version] = {"modules": modules, "tensor_methods": tensor_methods(wheel),
                                     "features": features(wheel), "dtypes": dtypes(wheel)}
        print(version, {m: len(v) for m, v in modules.items()})
    data["versions"] = dict(sorted(data["versions"].items(),
                                   key=lambda kv: tuple(int(x) for x in re.findall(r"\d+", kv[0])[:3])))
    OUT.write_text(json.dumps(data, separators=(",", ":"), sort_keys=False) + "\n")
    print(OUT, OUT.stat().st_size, "bytes")


if __name__ == "__main__":
    main()
