"""Reach: how many files that define a Triton kernel the linter finds a kernel in.

For each package of the real-world corpus (benchmarks/realworld/corpus.py), counts the files
with a function decorated `@triton.jit` / `@triton.autotune` / `@triton.heuristics` / `@jit`
(spelled so in the source, whatever `triton` is bound to) and the files where the engine's
`find_kernels` finds at least one kernel: once reading each file alone (no workspace index)
and once with the workspace index. Also times building the index over the whole corpus.

    python benchmarks/realworld/reach.py [--corpus DIR] [--misses]
"""
from __future__ import annotations

import argparse
import ast
import gc
import time
import warnings
from pathlib import Path

from tritonify.diagnostics.triton_ast import ImportMap, dotted, find_kernels
from tritonify.diagnostics.workspace_index import WorkspaceIndex

SPELLINGS = {"triton.jit", "triton.autotune", "triton.heuristics", "jit", "autotune", "heuristics"}


def decorated_kernels(tree: ast.Module) -> list[ast.FunctionDef]:
    """Functions whose decorator is spelled like a Triton kernel's (the oracle: no resolution)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in node.decorator_list:
                if dotted(dec.func if isinstance(dec, ast.Call) else dec) in SPELLINGS:
                    out.append(node)
                    break
    return out


def parse(path: Path) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(path.read_bytes(), filename=str(path))
    except (SyntaxError, ValueError):
        return None


def reach(files: list[Path], index: WorkspaceIndex | None) -> tuple[int, int, list[str]]:
    """(files with a decorated kernel, files where every such function is found, misses)."""
    defining = found = 0
    misses = []
    for f in files:
        tree = parse(f)
        if tree is None:
            continue
        expected = decorated_kernels(tree)
        if not expected:
            continue
        defining += 1
        imports = ImportMap(tree, workspace=index, path=str(f)) if index is not None else ImportMap(tree)
        kernels = {k.node for k in find_kernels(tree, imports)}
        if all(fn in kernels for fn in expected):
            found += 1
        else:
            misses.append(str(f))
    return defining, found, misses


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(Path.home() / ".cache" / "tritonify-realworld"))
    ap.add_argument("--misses", action="store_true", help="list the files whose kernels are not all found")
    args = ap.parse_args()
    root = Path(args.corpus)
    packages = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))

    t0 = time.perf_counter()
    index = WorkspaceIndex.build(packages)
    build_s = time.perf_counter() - t0
    all_files = [f for p in packages for f in sorted(p.rglob("*.py"))]
    gc.disable()   # as the index build (and the engine) does
    t0 = time.perf_counter()
    for f in all_files:
        parse(f)
    parse_s = time.perf_counter() - t0
    gc.enable()

    print("| package | files defining a kernel | all kernels found, file alone | with the workspace index |")
    print("| --- | ---: | ---: | ---: |")
    totals = [0, 0, 0]
    for p in packages:
        files = sorted(p.rglob("*.py"))
        defining, alone, _ = reach(files, None)
        _, indexed, misses = reach(files, index)
        totals = [totals[0] + defining, totals[1] + alone, totals[2] + indexed]
        print(f"| {p.name} | {defining} | {alone} | {indexed} |")
        if args.misses:
            for m in misses:
                print(f"  missed: {m}")
    print(f"| total | {totals[0]} | {totals[1]} | {totals[2]} |")
    print(f"\nindex build over {len(all_files)} files ({index.modules_read} modules read): {build_s * 1000:.0f} ms; "
          f"ast.parse of the same files: {parse_s * 1000:.0f} ms")


if __name__ == "__main__":
    main()
