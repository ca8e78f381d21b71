"""The compile worker: runs in a child process, under the user's Python, and imports only the
standard library and Triton (not tritonify, which that interpreter may lack).

    python compile_child.py REQUEST.json  ->  one JSON object on stdout (the last line)

It starts no process: each cubin is written beside the request's copy of the file and the parent
runs `cuobjdump` / `nvdisasm` on it (the paths of this Triton's own, in the result's "tools").

Two modes (request "mode"):
  * "source" (what the language server uses on open and save): nothing of the file runs. The
    kernel and its jit helpers are compiled from their source text in a namespace holding only
    Triton's modules and literal constants (kernel_source.py); the parent passes the autotune
    configs and heuristics values it read as literals. See kernel_source.py for what is left.
  * "definitions" (the command line's `tritonify inspect`, which the user runs): below.
Either way the request's "limits" cap the process's address space and CPU time first.

What "definitions" runs of the user's file, and why:
  * To compile a kernel Triton needs the `JITFunction` object, so some of the file must run.
    Importing the file would also run its top-level program (benchmarks, tests, GPU allocations,
    `if __name__ == "__main__"` is skipped only by convention) and fail on a machine without a GPU.
  * So the worker executes the file statement by statement and keeps only what defines names:
    imports, `def`s (with their decorators: `triton.jit`, `triton.autotune`, `triton.heuristics`),
    assignments whose value only calls Triton, builtins, `os`/`math` or a `*config*` function, and
    `if`/`try` blocks filtered the same way (for guarded imports). It skips bare expressions
    (`main()`, `bench.run()`), assignments that call anything else (`x = torch.randn(..., device="cuda")`),
    loops, `with`, classes and the `__main__` block. A statement that
    raises is skipped and reported; the kernel then compiles if it does not need that name.
  * While a decorated `def` runs, `torch.cuda.is_available()` answers True, so autotune config lists
    that shrink on machines without a GPU keep the configs the target would try.
  * Each statement keeps its real line numbers (it is compiled from the file's own AST), and the
    file is a copy of the editor's text, so Triton's line info and error lines are the user's.
  * The alternative, importing the file with `__name__ != "__main__"`, is simpler and runs every
    module-level call; extracting only the kernel and its helpers into a new module is safer but
    breaks on any name it misses (a config generator, a constexpr from another module). Running
    the defining statements in place keeps both: names resolve as in the real module, the program
    does not run.
  * Imports and assignments can still run arbitrary code, so the caller starts this worker only
    for trusted workspaces, with a timeout, and with a driver that has no GPU behind it.
"""
from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import sys
import tempfile
import traceback


def _main_guard(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Compare):
        names = [n.id for n in ast.walk(stmt.test) if isinstance(n, ast.Name)]
        consts = [n.value for n in ast.walk(stmt.test) if isinstance(n, ast.Constant)]
        return "__name__" in names and "__main__" in consts
    return False


_KEPT = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.Assign, ast.AnnAssign, ast.If, ast.Try)
# Calls an assignment may make and still count as a definition: constants, configs, arithmetic.
_SAFE_CALL_ROOTS = {"tl", "triton", "int", "float", "bool", "str", "list", "tuple", "dict", "set", "range",
                    "len", "max", "min", "abs", "pow", "round", "sorted", "zip", "enumerate", "os", "math",
                    "itertools", "product", "getattr", "hasattr", "constexpr"}


def _callee(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _defines_only(value: ast.AST | None) -> bool:
    """Whether an assigned value only computes a constant: every call in it is to Triton, a builtin,
    `os`/`math`, or a function whose name says it builds autotune configs. `x = torch.randn(...,
    device="cuda")` or `out = main()` is the program, not a definition, and is not run."""
    if value is None:
        return True
    for node in ast.walk(value):
        if isinstance(node, (ast.Call)):
            name = _callee(node.func)
            root = name.split(".")[0]
            if root not in _SAFE_CALL_ROOTS and "config" not in name.lower():
                return False
        elif isinstance(node, (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)):
            return False
    return True


def _definitions(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements of `body` that define names, with `if`/`try` bodies filtered the same way."""
    kept: list[ast.stmt] = []
    for stmt in body:
        if not isinstance(stmt, _KEPT) or _main_guard(stmt):
            continue
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and not _defines_only(stmt.value):
            continue
        if isinstance(stmt, ast.If):
            stmt.body = _definitions(stmt.body) or [ast.copy_location(ast.Pass(), stmt)]
            stmt.orelse = _definitions(stmt.orelse)
        elif isinstance(stmt, ast.Try):
            stmt.body = _definitions(stmt.body) or [ast.copy_location(ast.Pass(), stmt)]
            for handler in stmt.handlers:
                handler.body = _definitions(handler.body) or [ast.copy_location(ast.Pass(), handler)]
            stmt.orelse = _definitions(stmt.orelse)
            stmt.finalbody = _definitions(stmt.finalbody)
        kept.append(stmt)
    return kept


@contextlib.contextmanager
def _pretend_cuda():
    """While a decorated `def` runs: `torch.cuda.is_available()` is True, as on the target machine.
    Kernels often keep one autotune config when there is no GPU (`configs if torch.cuda.is_available()
    else configs[:1]`); the figures are wanted for the configs the GPU would try."""
    torch = sys.modules.get("torch")
    cuda = getattr(torch, "cuda", None)
    original = getattr(cuda, "is_available", None)
    if original is None:
        yield
        return
    cuda.is_available = lambda: True
    try:
        yield
    finally:
        cuda.is_available = original


def load_definitions(path: str, module_name: str) -> tuple[dict, list[dict]]:
    """Execute the defining statements of `path`; return the namespace and the skipped statements."""
    import types

    with open(path, encoding="utf-8") as f:
        text = f.read()
    tree = ast.parse(text, filename=path)
    module = types.ModuleType(module_name)
    module.__file__ = path
    sys.modules[module_name] = module  # Triton resolves a kernel's globals through its module
    namespace = module.__dict__
    skipped = []
    for stmt in _definitions(tree.body):
        code = compile(ast.Module(body=[stmt], type_ignores=[]), path, "exec")
        pretend = _pretend_cuda() if isinstance(stmt, ast.FunctionDef) and stmt.decorator_list else contextlib.nullcontext()
        try:
            with contextlib.redirect_stdout(io.StringIO()), pretend:
                exec(code, namespace)  # noqa: S102 - the point of the worker (trusted workspace only)
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            skipped.append({"line": stmt.lineno, "error": f"{type(exc).__name__}: {exc}"[:300]})
    return namespace, skipped


def load_source_only(path: str, module_name: str):
    """The file's jit functions built from their source text, nothing of the file executed
    (kernel_source.py); the namespace."""
    import types

    import triton
    from kernel_source import build_namespace

    with open(path, encoding="utf-8") as f:
        text = f.read()
    tree = ast.parse(text, filename=path)
    module = types.ModuleType(module_name)
    module.__file__ = path
    sys.modules[module_name] = module
    build_namespace(tree, path, module.__dict__, triton.jit)
    return module.__dict__


def apply_limits(limits: dict | None) -> None:
    """Cap this process (and the ptxas it starts) before anything is imported: address space
    (`memory_bytes`, RLIMIT_AS) and CPU seconds (`cpu_seconds`, RLIMIT_CPU)."""
    if not limits:
        return
    try:
        import resource
    except ImportError:   # not POSIX: the parent's timeout still holds
        return
    for key, which in (("memory_bytes", "RLIMIT_AS"), ("cpu_seconds", "RLIMIT_CPU")):
        value = limits.get(key)
        if not value or not hasattr(resource, which):
            continue
        soft, hard = resource.getrlimit(getattr(resource, which))
        value = int(value) if hard == resource.RLIM_INFINITY else min(int(value), hard)
        try:
            resource.setrlimit(getattr(resource, which), (value, hard))
        except (ValueError, OSError):
            pass


def _fake_driver(arch: int):
    """A driver that only names a target: lets module-level code that asks for the device run,
    and makes sure nothing tries to launch."""
    from triton.backends.compiler import GPUTarget
    from triton.backends.driver import DriverBase

    class TargetOnlyDriver(DriverBase):
        def __init__(self):
            self.target = GPUTarget("cuda", arch, 32)

        @classmethod
        def is_active(cls):
            return True

        def map_python_to_cpp_type(self, ty):
            raise NotImplementedError

        def get_current_target(self):
            return self.target

        def get_active_torch_device(self):
            import torch
            return torch.device("cpu")

        def get_benchmarker(self):
            raise NotImplementedError("no GPU: nothing is launched")

        def get_current_device(self):
            return 0

        def get_current_stream(self, device=None):
            return 0

    return TargetOnlyDriver()


def _unwrap(obj):
    """(JITFunction, autotune configs or None, heuristics dict or None) for a kernel object."""
    configs = None
    heuristics = {}
    seen = 0
    while hasattr(obj, "fn") and type(obj).__name__ in ("Autotuner", "Heuristics") and seen < 8:
        if type(obj).__name__ == "Autotuner":
            configs = list(getattr(obj, "configs", []) or [])
        else:
            heuristics.update(getattr(obj, "values", {}) or {})
        obj = obj.fn
        seen += 1
    return obj, configs, heuristics


def _config_dict(cfg) -> dict:
    out = {"kwargs": dict(getattr(cfg, "kwargs", {}) or {})}
    for name in ("num_warps", "num_stages", "num_ctas", "maxnreg"):
        value = getattr(cfg, name, None)
        if value is not None:
            out[name] = value
    return out


def _jsonable(value):
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    return repr(value)


def _error_location(exc, fn, namespace: dict) -> tuple[int | None, int | None, str]:
    """Absolute (line, 0-based column) and message of a compile error. Triton wraps an error in a
    helper in one CompilationError per call level (`raise CompilationError(...) from e`); the
    innermost one names the line that failed, in the helper's own source."""
    from triton.compiler.errors import CompilationError

    chain = []
    cur = exc
    while cur is not None and len(chain) < 32:
        chain.append(cur)
        cur = cur.__cause__
    errors = [e for e in chain if isinstance(e, CompilationError)]
    messages = [str(e.error_message) for e in errors if e.error_message]
    messages += [f"{type(e).__name__}: {e}" for e in chain if not isinstance(e, CompilationError)]
    message = messages[-1] if messages else (str(exc).strip().splitlines() or [type(exc).__name__])[-1]
    for err in reversed(errors):            # innermost first
        if not hasattr(err.node, "lineno"):
            continue
        owner = _jit_with_source(namespace, err.src) or (fn if getattr(fn, "src", None) == err.src else None)
        if owner is not None:
            return owner.def_file_line_number + err.node.lineno - 1, err.node.col_offset, message
    return None, None, message


def _jit_with_source(namespace: dict, src: str | None):
    if not src:
        return None
    for value in list(namespace.values()):
        value, _, _ = _unwrap(value)
        if getattr(value, "src", None) == src and hasattr(value, "def_file_line_number"):
            return value
    return None


def _tool(name: str) -> str | None:
    import triton

    path = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", name)
    return path if os.path.exists(path) else None


def compile_job(fn, heuristics: dict, job: dict, arch: int, want: list[str], namespace: dict | None = None,
                out_dir: str | None = None) -> dict:
    """Compile one job; its cubin is written into `out_dir` (the parent disassembles it: runner.disassemble)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    constexprs = dict(job["constexprs"])
    notes = []
    if heuristics:
        args = dict(job.get("scalars", {}))
        args.update(constexprs)
        for name, rule in heuristics.items():
            if name in job.get("fixed", []):
                continue
            try:
                constexprs[name] = rule(args)
                args[name] = constexprs[name]
                notes.append(f"{name}={constexprs[name]!r} from @triton.heuristics")
            except Exception as exc:  # noqa: BLE001 - user lambda
                notes.append(f"@triton.heuristics could not compute {name} ({type(exc).__name__}: {exc})")
    signature = dict(job["signature"])
    for name in constexprs:
        if name in signature:
            signature[name] = "constexpr"
    missing = [n for n, t in signature.items() if t == "constexpr" and n not in constexprs]
    if missing:
        return {"error": {"message": f"no value for constexpr {', '.join(missing)}: pass --config {missing[0]}=...",
                          "line": None, "column": None}, "notes": notes,
                "constexprs": {k: _jsonable(v) for k, v in constexprs.items()}}
    attrs = {(fn.arg_names.index(n),): [["tt.divisibility", 16]] for n in job.get("divisible", [])
             if n in fn.arg_names and signature.get(n) != "constexpr"}
    src = ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
    log = io.StringIO()
    try:
        with contextlib.redirect_stdout(log):
            ck = triton.compile(src, target=GPUTarget("cuda", arch, 32), options=dict(job["options"]))
    except Exception as exc:  # noqa: BLE001 - the compiler's message goes back to the user
        line, col, message = _error_location(exc, fn, namespace or {})
        ptxas_failed = type(exc).__name__ == "PTXASError"
        return {"error": {"message": message if not ptxas_failed else str(exc).strip()[:2000], "line": line,
                          "column": col, "kind": type(exc).__name__}, "notes": notes,
                "constexprs": {k: _jsonable(v) for k, v in constexprs.items()}}
    out = {
        "constexprs": {k: _jsonable(v) for k, v in constexprs.items()},
        "signature": signature,
        "shared": int(ck.metadata.shared),
        "num_warps": int(ck.metadata.num_warps),
        "num_stages": int(ck.metadata.num_stages),
        "name": ck.metadata.name,
        "ptxas_log": log.getvalue(),
        "notes": notes,
    }
    fd, path = tempfile.mkstemp(suffix=".cubin", dir=out_dir)
    with os.fdopen(fd, "wb") as f:
        f.write(ck.asm.get("cubin"))
    out["cubin"] = path
    for kind in ("ptx", "ttgir", "ttir", "llir"):
        if kind in want:
            out[kind] = ck.asm.get(kind, "")
    return out


def _jsonable_tree(value):
    if isinstance(value, dict):
        return {str(k): _jsonable_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable_tree(v) for v in value]
    return _jsonable(value)


def build_job(request: dict, variant: dict) -> dict:
    """One compile: the request's assumptions, then the variant's config, then the user's overrides."""
    overrides = request.get("overrides", {})
    constexprs = dict(request.get("base_constexprs", {}))
    constexprs.update(variant.get("kwargs", {}))
    constexprs.update({k: v for k, v in overrides.items() if k not in _OPTION_NAMES})
    options = {"num_warps": 4, "num_stages": 3}
    options.update(request.get("base_options", {}))
    options.update({k: variant[k] for k in _OPTION_NAMES if variant.get(k) is not None})
    options.update({k: v for k, v in overrides.items() if k in _OPTION_NAMES})
    return {
        "signature": request["signature"],
        "constexprs": constexprs,
        "fixed": sorted(set(variant.get("kwargs", {})) | set(overrides) | set(request.get("base_constexprs", {}))),
        "scalars": request.get("scalars", {}),
        "divisible": request.get("divisible", []),
        "options": options,
    }


_OPTION_NAMES = ("num_warps", "num_stages", "num_ctas", "maxnreg")


def main(argv: list[str]) -> int:
    with open(argv[1], encoding="utf-8") as f:
        request = json.load(f)
    apply_limits(request.get("limits"))
    result: dict = {"ok": True}
    source_only = request.get("mode") == "source"
    try:
        os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
        os.environ.pop("TRITON_INTERPRET", None)
        import triton

        result["triton_version"] = triton.__version__
        triton.runtime.driver.set_active(_fake_driver(request["arch"]))
        if source_only:
            namespace, skipped = load_source_only(request["path"], request["module_name"]), []
        else:
            folder = os.path.dirname(os.path.abspath(request["original_path"]))
            if folder not in sys.path:
                sys.path.insert(0, folder)
            namespace, skipped = load_definitions(request["path"], request["module_name"])
        result["skipped"] = skipped
        obj = namespace.get(request["kernel"])
        if obj is None:
            result.update(ok=False, error={"message": f"{request['kernel']} is not defined after running the file's "
                                                      f"definitions" + (f" (skipped: {skipped[0]['error']})" if skipped else ""),
                                           "line": None, "column": None})
        else:
            fn, configs, heuristics = _unwrap(obj)
            if not hasattr(fn, "arg_names"):
                result.update(ok=False, error={"message": f"{request['kernel']} is not a @triton.jit function",
                                               "line": None, "column": None})
            else:
                result["arg_names"] = list(fn.arg_names)
                result["autotune_configs"] = [_config_dict(c) for c in configs] if configs is not None else None
                result["heuristics"] = sorted(heuristics)
                variants = request.get("variants")
                if variants is None:
                    variants = ([dict(_config_dict(c), label=f"config {i}", index=i) for i, c in enumerate(configs)]
                                if configs else [{"kwargs": {}, "label": "default", "index": None}])
                result["tools"] = {name: _tool(name) for name in ("cuobjdump", "nvdisasm")}
                result["jobs"] = []
                for variant in variants:
                    job = build_job(request, variant)
                    res = compile_job(fn, heuristics, job, request["arch"], request.get("want", []), namespace,
                                      out_dir=os.path.dirname(request["path"]))
                    res["variant"] = {k: _jsonable_tree(v) for k, v in variant.items()}
                    res["options"] = job["options"]
                    result["jobs"].append(res)
    except Exception as exc:  # noqa: BLE001 - reported to the parent as data
        result.update(ok=False, error={"message": f"{type(exc).__name__}: {exc}", "line": None, "column": None,
                                       "traceback": traceback.format_exc()[-2000:]})
    sys.stdout.write("\n" + json.dumps(result) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
