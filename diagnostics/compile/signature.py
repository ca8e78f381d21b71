"""What to compile a kernel with, found by reading the file (never importing it).

Triton compiles one specialisation per argument types, constexpr values and options, so a
kernel's registers depend on them. Where each value comes from, in order of precedence:

1. the user's overrides (`--config BLOCK=1024,num_warps=8`, `--arg x_ptr=*bf16`);
2. the kernel's `@triton.autotune` configs (one compile per config; read at run time by the worker,
   placed on their `triton.Config(...)` lines here);
3. literal keywords at the kernel's launch sites in the same file (`k[grid](..., BLOCK=1024, num_warps=8)`);
4. the benchmark contract's `dtype` (`Contract(kernel=..., dtype="bfloat16")`) for pointer element types
   (found beside the file by `tritonify.kernels.bench.discovery.contract_dtype`; the caller passes it);
5. defaults, each one stated in `Plan.assumptions`: pointers `*fp32` and 16-byte aligned (every torch
   allocation is), integer scalars 4096 (divisible by 16, so Triton adds `tt.divisibility=16` as it
   would at a launch with such sizes), float scalars `fp32`, block-size constexprs 1024 (128/64 for
   tile names), flags False, `num_warps=4`, `num_stages=3`.

Without the divisibility hints Triton emits scalar loads and the register count is overstated
(Liger's RMSNorm: 56 registers without, 39 with); `divisible=False` turns them off to show that case.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import ClassVar

from tritonify.diagnostics.triton_ast import (
    ImportMap,
    Kernel,
    dotted,
    find_kernels,
    keyword,
    tl_name,
)

DEFAULT_INT = 4096
OPTION_NAMES = ("num_warps", "num_stages", "num_ctas", "maxnreg")
DTYPES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64", "int32": "i32",
          "int64": "i64", "int8": "i8", "uint8": "u8", "int16": "i16", "bool": "i1",
          "fp32": "fp32", "fp16": "fp16", "bf16": "bf16", "fp64": "fp64", "fp8e4nv": "fp8e4nv", "fp8e5": "fp8e5"}
SCALAR_TYPES = {"i1", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "fp16", "bf16", "fp32", "fp64"}
_POINTER_NAME = re.compile(r"(ptr|Ptr|PTR)")
_FLOAT_NAME = re.compile(r"^(eps|epsilon|scale|sm_scale|alpha|beta|gamma|temperature|softcap|lr|momentum|"
                         r"weight_decay|p|dropout_p|negative_slope|offset_f|.*_scale|.*_eps)$", re.IGNORECASE)
_FLAG_NAME = re.compile(r"^(HAS|IS|USE|EVEN|ENABLE|DO|APPLY|CAUSAL|RETURN|STORE|SAVE)_?|_(FLAG|ENABLED)$")
_POINTER_CALLS = {"load", "store", "atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or",
                  "atomic_xor", "atomic_xchg", "atomic_cas", "make_block_ptr", "make_tensor_descriptor"}


class SignatureError(ValueError):
    """Bad user input: an unknown parameter or type in an override."""


@dataclass
class ConfigSite:
    """A `triton.Config(...)` written in the source, for placing diagnostics and fixes."""

    index: int
    node: ast.Call
    kwargs: dict                       # literal constexpr values
    options: dict                      # literal num_warps / num_stages / maxnreg

    _DEFAULTS: ClassVar[dict] = {"num_warps": 4, "num_stages": 3, "num_ctas": 1, "maxnreg": None}

    def matches(self, runtime: dict) -> bool:
        """Whether a config the worker read at run time (`{"kwargs", "num_warps", ...}`) is this one."""
        if self.kwargs != runtime.get("kwargs"):
            return False
        return all(self.options.get(k, d) == runtime.get(k, d) for k, d in self._DEFAULTS.items())


@dataclass
class Plan:
    """Everything the worker needs besides the source text, and the reasons for each value."""

    kernel: str
    line: int                          # the kernel's def line (1-based)
    signature: dict                    # param -> "*fp32" | "i32" | "fp32" | "constexpr"
    base_constexprs: dict
    base_options: dict
    scalars: dict                      # scalar param -> assumed value (heuristics see them)
    divisible: list                    # params given tt.divisibility=16
    overrides: dict
    variants: list | None              # None: the worker expands the autotune configs
    config_sites: list = field(default_factory=list)
    autotune_line: int | None = None
    assumptions: list = field(default_factory=list)

    def request(self) -> dict:
        return {
            "kernel": self.kernel,
            "signature": self.signature,
            "base_constexprs": self.base_constexprs,
            "base_options": self.base_options,
            "scalars": self.scalars,
            "divisible": self.divisible,
            "overrides": self.overrides,
            "variants": self.variants,
        }


def parse_assignments(text: str | None) -> dict:
    """`BLOCK=1024,num_warps=8 EVEN=True` -> {"BLOCK": 1024, "num_warps": 8, "EVEN": True}."""
    out: dict = {}
    if not text:
        return out
    for part in re.split(r"[,\s]+", text.strip()):
        if not part:
            continue
        name, sep, value = part.partition("=")
        if not sep or not name.isidentifier():
            raise SignatureError(f"expected NAME=VALUE, got {part!r}")
        try:
            out[name] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            out[name] = value  # a bare word: a dtype name or a string constexpr
    return out


def _literal(node: ast.AST | None):
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _pointer_terms(node: ast.AST) -> set[str]:
    """Names that stand as additive terms of a pointer expression (`x_ptr + row * n + cols` -> x_ptr, cols)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        return _pointer_terms(node.left) | (_pointer_terms(node.right) if isinstance(node.op, ast.Add) else set())
    if isinstance(node, ast.Subscript):
        return _pointer_terms(node.value)
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("to", "cast"):
        return _pointer_terms(node.func.value)
    return set()


def pointer_params(imports: ImportMap, kernel: Kernel) -> set[str]:
    """Parameters used as pointers: by name (`*_ptr`), or as the base of a load/store/atomic or a
    block pointer, also through local variables (`a_ptrs = a_ptr + ...; tl.load(a_ptrs)`)."""
    params = {p.name for p in kernel.params if not p.constexpr}
    found = {n for n in params if _POINTER_NAME.search(n)}
    for p in kernel.params:
        if p.annotation and ("pointer" in p.annotation or "tensor" in p.annotation.lower()):
            found.add(p.name)
    used: set[str] = set()
    for call in kernel.calls():
        name = tl_name(imports, call.func)
        if name is None and isinstance(call.func, ast.Attribute) and call.func.attr in ("load", "store"):
            name = call.func.attr
        if name in _POINTER_CALLS:
            target = call.args[0] if call.args else None
            for kw in call.keywords:
                if kw.arg in ("pointer", "base", "ptr"):
                    target = kw.value
            if target is not None:
                used |= _pointer_terms(target)
    # follow local assignments backwards to their pointer terms
    assigns: dict[str, list[ast.expr]] = {}
    for node in kernel.walk():
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    assigns.setdefault(t.id, []).append(node.value)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            assigns.setdefault(node.target.id, []).append(node.value)
    frontier = set(used)
    seen: set[str] = set()
    while frontier:
        name = frontier.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in params:
            continue
        for value in assigns.get(name, []):
            frontier |= _pointer_terms(value) - seen
    return found | (seen & params)


_INT64_POINTER = re.compile(r"(label|target|indices|index|idx|ids?$|_ids?_|token|position|pos_ids)", re.IGNORECASE)
_INT32_POINTER = re.compile(r"(lock|mutex|sem|counter|count|flag|barrier)", re.IGNORECASE)


def _integer_pointer(name: str) -> str | None:
    """`i64` for labels/indices, `i32` for locks and counters, by the parameter's name; else None."""
    if _INT32_POINTER.search(name):
        return "i32"
    if _INT64_POINTER.search(name):
        return "i64"
    return None


def _default_constexpr(name: str) -> tuple[object, str]:
    upper = name.upper()
    if "DIM" in upper or "HEAD" in upper or upper in ("D", "HD"):
        return 64, "a head/feature dimension"
    if _FLAG_NAME.search(upper):
        return False, "a flag"
    if "BLOCK" in upper or upper in ("BM", "BN", "BK", "TILE") or upper.startswith("TILE_"):
        tile = re.search(r"(?:^|_)(M|N|K)$|^B(M|N|K)$", upper)
        if tile:
            value = 64 if (tile.group(1) or tile.group(2)) == "K" else 128
            return value, "a tile size"
        return 1024, "a block size"
    if upper.startswith("GROUP"):
        return 8, "a group size"
    if "STAGES" in upper:
        return 3, "a stage count"
    if "WARPS" in upper:
        return 4, "a warp count"
    return 1, "no value found"


def launch_sites(tree: ast.Module, name: str) -> list[ast.Call]:
    """`name[grid](...)` calls in the module."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript) and dotted(node.func.value) == name:
            out.append(node)
    return out


def _autotune_configs(kernel: Kernel) -> list[ConfigSite]:
    call = kernel.autotune
    if call is None:
        return []
    configs_node = keyword(call, "configs")
    if configs_node is not None:
        node = configs_node.value
    elif call.args:
        node = call.args[0]
    else:
        return []
    # `configs=_filter(configs=[...])` or `configs=pick([...])`: the written list is the call's list argument
    if isinstance(node, ast.Call):
        lists = [a for a in [*node.args, *(k.value for k in node.keywords)] if isinstance(a, (ast.List, ast.Tuple))]
        node = lists[0] if len(lists) == 1 else node
    if not isinstance(node, (ast.List, ast.Tuple)):
        return []
    sites = []
    for i, elt in enumerate(node.elts):
        if not isinstance(elt, ast.Call):
            return []  # a starred or computed entry: positions cannot be matched by index
        kwargs = _literal(elt.args[0]) if elt.args else _literal(getattr(keyword(elt, "kwargs"), "value", None))
        options = {n: _literal(keyword(elt, n).value) for n in OPTION_NAMES if keyword(elt, n) is not None}
        sites.append(ConfigSite(i, elt, kwargs if isinstance(kwargs, dict) else {}, options))
    return sites


def build_plan(tree: ast.Module, kernel: Kernel, imports: ImportMap, *,
               overrides: dict | None = None, arg_types: dict | None = None, divisible: bool = True,
               pointer_dtype: str | None = None, contract_dtype: tuple[str, str] | None = None) -> Plan:
    """The compile plan for one kernel. `overrides` are constexprs and options (`--config`);
    `arg_types` maps parameters to Triton types (`{"x_ptr": "*bf16", "n": "i64"}`); pointers are
    `*pointer_dtype` (`--dtype`), else the benchmark contract's dtype (`contract_dtype`: its torch
    dtype name and where it is written, `tritonify.kernels.bench.discovery.contract_dtype`), else fp32."""
    overrides = dict(overrides or {})
    arg_types = dict(arg_types or {})
    names = [p.name for p in kernel.params]
    for key in list(overrides) + list(arg_types):
        if key not in names and key not in OPTION_NAMES:
            raise SignatureError(f"{kernel.name} has no parameter {key!r} (parameters: {', '.join(names)})")
    assumptions: list[str] = []
    sites = _autotune_configs(kernel)
    autotuned = set()
    for s in sites:
        autotuned |= set(s.kwargs)
    launches = launch_sites(tree, kernel.name)
    launch_kw: dict = {}
    for call in launches:
        for kw in call.keywords:
            value = _literal(kw.value)
            if kw.arg and value is not None and kw.arg not in launch_kw:
                launch_kw[kw.arg] = (value, call.lineno)
    launch_pos: dict = {}
    for call in launches:
        for i, arg in enumerate(call.args[:len(names)]):
            value = _literal(arg)
            if value is not None and names[i] not in launch_pos:
                launch_pos[names[i]] = (value, call.lineno)

    if pointer_dtype:
        dtype, dtype_from = pointer_dtype, "--dtype"
    elif contract_dtype:
        dtype, dtype_from = DTYPES.get(contract_dtype[0]), contract_dtype[1]
    else:
        dtype, dtype_from = None, None
    if dtype and not pointer_dtype:
        assumptions.append(f"pointers are *{dtype} (benchmark contract {dtype_from})")
    elif pointer_dtype:
        assumptions.append(f"pointers are *{dtype} (--dtype)")
    else:
        dtype = "fp32"
        assumptions.append("pointers are *fp32 (no contract; pass --dtype or --arg NAME=*bf16)")

    pointers = pointer_params(imports, kernel)
    module_literals = _module_literals(tree)
    signature: dict = {}
    base_constexprs: dict = {}
    scalars: dict = {}
    div: list = []
    defaulted: list[str] = []
    int_defaulted: list[str] = []
    heuristic_keys = set()
    if kernel.heuristics is not None:
        from tritonify.diagnostics.triton_ast import _config_keys
        heuristic_keys = _config_keys(kernel.heuristics)
    for p in kernel.params:
        if p.name in arg_types:
            ty = arg_types[p.name]
            ty = DTYPES.get(ty, ty) if not ty.startswith("*") else "*" + DTYPES.get(ty[1:], ty[1:])
            signature[p.name] = ty
            if ty.startswith("*"):
                div.append(p.name)
            elif ty not in SCALAR_TYPES and ty != "constexpr":
                raise SignatureError(f"unknown type {arg_types[p.name]!r} for {p.name}: use *fp32, *bf16, i32, i64, fp32 ...")
            continue
        is_constexpr = p.constexpr or p.name in autotuned or p.name in heuristic_keys
        if is_constexpr:
            signature[p.name] = "constexpr"
            if p.name in overrides or p.name in autotuned or p.name in heuristic_keys:
                continue
            if p.name in launch_kw:
                base_constexprs[p.name] = launch_kw[p.name][0]
                assumptions.append(f"{p.name}={launch_kw[p.name][0]!r} from the launch on line {launch_kw[p.name][1]}")
            elif p.default is not None and _literal(p.default) is not None:
                base_constexprs[p.name] = _literal(p.default)
            elif isinstance(p.default, ast.Name) and p.default.id in module_literals:
                base_constexprs[p.name] = module_literals[p.default.id]
                assumptions.append(f"{p.name}={module_literals[p.default.id]!r} from its default {p.default.id}")
            else:
                value, why = _default_constexpr(p.name)
                base_constexprs[p.name] = value
                defaulted.append(f"{p.name}={value!r} ({why})")
            continue
        if p.name in pointers:
            by_name = _integer_pointer(p.name)
            signature[p.name] = f"*{by_name or dtype}"
            if by_name:
                assumptions.append(f"{p.name} is *{by_name} (its name says integers)")
            div.append(p.name)
            continue
        value = overrides.pop(p.name, None)
        source = "--config"
        if value is None and p.name in launch_kw:
            value, source = launch_kw[p.name][0], f"launch on line {launch_kw[p.name][1]}"
        if value is None and p.name in launch_pos:
            value, source = launch_pos[p.name][0], f"launch on line {launch_pos[p.name][1]}"
        if value is None and p.default is not None:
            value, source = _literal(p.default), "its default"
        if isinstance(value, bool):
            signature[p.name] = "i1"
        elif isinstance(value, float) or (value is None and _FLOAT_NAME.match(p.name)):
            signature[p.name] = "fp32"
            value = 1e-6 if value is None else value
        else:
            if value is None:
                value = DEFAULT_INT
                int_defaulted.append(p.name)
            elif source != "--config":
                assumptions.append(f"{p.name}={value!r} from {source}")
            signature[p.name] = "i64" if abs(int(value)) >= 2**31 else "i32"
            if value == 1 and p.name not in kernel_do_not_specialize(imports, kernel):
                base_constexprs[p.name] = 1   # Triton specialises an integer equal to 1 as a constant
                assumptions.append(f"{p.name}=1 is specialised as a constant, as Triton does")
            elif divisible and int(value) % 16 == 0:
                div.append(p.name)
        scalars[p.name] = value
    if defaulted:
        assumptions.append("constexpr defaults (override with --config): " + ", ".join(defaulted))
    if int_defaulted:
        assumptions.append(f"integer scalars {', '.join(int_defaulted)} = {DEFAULT_INT} (override with --config NAME=...)")
    if divisible:
        assumptions.append("pointers 16-byte aligned and integers divisible by 16 get tt.divisibility=16, "
                           "as a launch with such values would")
    else:
        div = []
        assumptions.append("no divisibility hints: the register count may be overstated")
    base_options: dict = {}
    for opt in OPTION_NAMES:
        if opt in launch_kw and opt not in overrides:
            base_options[opt] = launch_kw[opt][0]
            assumptions.append(f"{opt}={launch_kw[opt][0]} from the launch on line {launch_kw[opt][1]}")
    if "num_warps" not in base_options and "num_warps" not in overrides and kernel.autotune is None:
        assumptions.append("num_warps=4, num_stages=3 (Triton's defaults)")

    variants = None
    explicit = {k: v for k, v in overrides.items()}
    replaces_autotune = bool(autotuned) and autotuned <= set(explicit)
    if kernel.autotune is None or replaces_autotune:
        variants = [{"kwargs": {}, "label": "--config" if explicit else "default", "index": None}]
        if replaces_autotune:
            assumptions.append("--config sets every autotuned value: it replaces the autotune configs")
    elif explicit:
        assumptions.append(f"--config {', '.join(f'{k}={v}' for k, v in explicit.items())} applied to every autotune config")
    return Plan(
        kernel=kernel.name, line=kernel.node.lineno, signature=signature, base_constexprs=base_constexprs,
        base_options=base_options, scalars=scalars, divisible=div, overrides=explicit, variants=variants,
        config_sites=sites, autotune_line=kernel.autotune.lineno if kernel.autotune is not None else None,
        assumptions=assumptions,
    )


def _module_literals(tree: ast.Module) -> dict:
    """Module-level `NAME = <literal>` bound once (a default such as `BLOCK: tl.constexpr = BLOCK_DEFAULT`)."""
    values: dict = {}
    seen: set = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
            value = _literal(stmt.value)
            if name in seen or value is None:
                values.pop(name, None)
            else:
                values[name] = value
            seen.add(name)
    return values


def kernel_do_not_specialize(imports: ImportMap, kernel: Kernel) -> set[str]:
    """Names in `@triton.jit(do_not_specialize=[...])` (indices resolved to names)."""
    out: set[str] = set()
    jit = kernel.jit
    if isinstance(jit, ast.Call):
        kw = keyword(jit, "do_not_specialize")
        values = _literal(kw.value) if kw is not None else None
        for v in values or []:
            if isinstance(v, int) and v < len(kernel.params):
                out.add(kernel.params[v].name)
            elif isinstance(v, str):
                out.add(v)
    return out


def find_kernel(tree: ast.Module, name: str | None, path: str | None = None) -> tuple[Kernel | None, list[Kernel], ImportMap]:
    """The kernel `name` of a module (the only one when None). With the file's `path`, names
    imported from the workspace's other modules resolve (see workspace_index)."""
    if path:
        from tritonify.diagnostics.workspace_index import default_index

        imports = ImportMap(tree, workspace=default_index(), path=path)
    else:
        imports = ImportMap(tree)
    kernels = [k for k in find_kernels(tree, imports) if not k.is_helper or k.name == name]
    if name is None:
        return (kernels[0] if len(kernels) == 1 else None), kernels, imports
    return next((k for k in kernels if k.name == name), None), kernels, imports
