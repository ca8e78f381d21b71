"""Run triton's frontend (AST -> TTIR, for sm_90, no GPU) on every `*_kernel` of a fixture file,
in a child process, and say which kernels the compiler rejects. Shared by the TRI020/TRI021 tests:
a `# CODE` marker must sit in exactly the kernels that fail, so each finding is a real compile
error and each quiet kernel really compiles. Conventions: `*_ptr` parameters are fp32 pointers,
`tl.constexpr` parameters take their default (else the first autotune config's value, else 64),
other parameters are i32."""
from __future__ import annotations

import ast
import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import pytest


def _triton_version() -> str | None:
    try:
        return importlib.metadata.version("triton")
    except importlib.metadata.PackageNotFoundError:
        return None


# The rules' evidence is triton 3.9's frontend; other versions accept or reject other constructs.
needs_triton = pytest.mark.skipif(not (_triton_version() or "").startswith("3.9."),
                                  reason="needs triton 3.9 (CPU is enough)")

DRIVER = r'''
import contextlib, importlib.util, io, json, sys, warnings
warnings.simplefilter("ignore")
from triton._C.libtriton import ir
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton.compiler.compiler import make_backend
from triton.runtime.jit import JITFunction

spec = importlib.util.spec_from_file_location("fixture_under_test", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
target = GPUTarget("cuda", 90, 32)
backend = make_backend(target)
options = backend.parse_options({})
out = {}
for name, fn in vars(mod).items():
    tuned = {}
    while not isinstance(fn, JITFunction) and hasattr(fn, "fn"):
        if getattr(fn, "configs", None):
            tuned = dict(fn.configs[0].kwargs)  # the first autotune config
        fn = fn.fn  # autotune / heuristics wrappers
    if not isinstance(fn, JITFunction) or not name.endswith("_kernel"):
        continue
    sig, consts = {}, {}
    for p in fn.params:
        if p.is_constexpr or p.name in tuned:
            sig[p.name] = "constexpr"
            consts[p.name] = p.default if p.has_default else tuned.get(p.name, 64)
        else:
            sig[p.name] = "*fp32" if p.name.endswith("_ptr") else "i32"
    try:
        context = ir.context()
        ir.load_dialects(context)
        backend.load_dialects(context)
        with contextlib.redirect_stdout(io.StringIO()):  # tl.static_print writes here
            ASTSource(fn=fn, signature=sig, constexprs=consts).make_ir(
                target, options, backend.get_codegen_implementation(options), backend.get_module_map(), context)
        out[name] = None
    except Exception as e:
        cause = e
        while cause.__cause__ is not None:
            cause = cause.__cause__
        out[name] = (str(cause).strip().splitlines() or [type(cause).__name__])[-1]
print(json.dumps(out))
'''


def frontend_errors(path: Path) -> dict[str, str | None]:
    """{kernel name: last line of the compiler's error, or None when it compiles}."""
    proc = subprocess.run([sys.executable, "-c", DRIVER, str(path)], capture_output=True, text=True, timeout=300,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def marked_kernels(path: Path, code: str) -> dict[str, bool]:
    """{kernel name: whether a `# CODE` marker lies inside its body}."""
    text = path.read_text()
    lines = text.splitlines()
    out = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name.endswith("_kernel"):
            body = lines[node.lineno - 1:node.end_lineno]
            out[node.name] = any(f"# {code}" in line for line in body)
    return out
