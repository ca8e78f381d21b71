"""Scaffold a contract for a kernel from its signature, statically (the server's code action).

``contract_for(source_text, kernel_name)`` parses the file (never imports it), finds the kernel with
``tritonify.diagnostics.triton_ast.find_kernels``, and writes the text of a ``<stem>_contract.py``:
* when a Python function in the file launches the kernel (``kernel[grid](...)``), that launcher is the
  entry and the input factory draws one argument per launcher parameter;
* otherwise a launcher is written too, one tensor per pointer parameter, with TODOs for the grid and
  the output.
The reference is left as a TODO that raises, so an unfinished contract fails loudly, never silently.
"""
from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from tritonify.diagnostics.triton_ast import ImportMap, Kernel, find_kernels

# name fragments -> Liger-Kernel op (see baselines.LIGER_OPS): a suggestion the user confirms.
_LIGER_HINTS = (("rms", "rms_norm"), ("swiglu", "swiglu"), ("silu_mul", "swiglu"), ("geglu", "geglu"),
                ("layer_norm", "layer_norm"), ("layernorm", "layer_norm"), ("softmax", "softmax"),
                ("cross_entropy", "cross_entropy"), ("relu_squared", "relu_squared"))


def _is_pointer(name: str) -> bool:
    low = name.lower()
    return low.endswith("ptr") or low in {"x", "y", "w", "b", "a", "c", "out", "input", "output", "weight", "bias"}


def _is_stride(name: str) -> bool:
    return "stride" in name.lower()


def _launchers(tree: ast.Module, kernel: str) -> list[ast.FunctionDef]:
    """Plain functions whose body launches ``kernel[...](...)``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name != kernel:
            for sub in ast.walk(node):
                if (isinstance(sub, ast.Call) and isinstance(sub.func, ast.Subscript)
                        and isinstance(sub.func.value, ast.Name) and sub.func.value.id == kernel):
                    found.append(node)
                    break
    return found


def _liger_hint(name: str) -> str | None:
    low = name.lower()
    for fragment, op in _LIGER_HINTS:
        if fragment in low:
            return op
    return None


def _input_lines(params: list[str]) -> list[str]:
    lines, first_tensor = [], None
    for p in params:
        low = p.lower()
        if low in ("eps", "epsilon"):
            lines.append(f"{p} = 1e-6")
        elif _is_stride(p):
            lines.append(f"{p} = shape[-1]  # TODO: the stride this argument stands for")
        elif first_tensor is None and (_is_pointer(p) or low.startswith(("x", "inp", "a"))):
            first_tensor = p
            lines.append(f"{p} = torch.randn(shape, dtype=dtype, device=device)")
        elif _is_pointer(p) or low.startswith(("w", "b", "y", "g", "u", "k", "v", "q")):
            lines.append(f"{p} = torch.randn(shape, dtype=dtype, device=device)  # TODO: its real shape")
        else:
            lines.append(f"{p} = shape[-1]  # TODO: what this scalar is")
    return lines


_OUTPUT_PREFIXES = ("y", "out", "o_", "dst", "res", "z")


def _tensor_name(param: str) -> str:
    """``x_ptr`` -> ``x``: the launcher's argument for a pointer parameter."""
    low = param[:-4] if param.lower().endswith("_ptr") else param
    return low.rstrip("_") or param


def _kernel_launcher(kernel: Kernel) -> tuple[str, list[str]]:
    """Source of a launcher for a bare kernel, and its parameters (the input tensors)."""
    runtime = [p for p in kernel.params if not p.constexpr and p.name not in kernel.constexpr_names]
    pointers = [p.name for p in runtime if _is_pointer(p.name)] or [p.name for p in runtime[:1]]
    outputs = [p for p in pointers if _tensor_name(p).lower().startswith(_OUTPUT_PREFIXES)]
    if not outputs and len(pointers) > 1:
        outputs = [pointers[-1]]          # by convention the output comes last: (a, b, c)
    inputs = [_tensor_name(p) for p in pointers if p not in outputs] or ["x"]
    first = inputs[0]
    args = []
    for p in kernel.params:
        if p.name in outputs:
            args.append("out")
        elif p.name in pointers:
            args.append(_tensor_name(p.name))
        elif p.constexpr or p.name in kernel.constexpr_names:
            args.append(f"{p.name}=1024" if p.default is None else f"{p.name}={ast.unparse(p.default)}")
        elif _is_stride(p.name):
            args.append(f"{first}.stride(0)")
        else:
            args.append(f"{first}.shape[-1]")
    body = (f"def launch({', '.join(inputs)}):\n"
            f'    """Calls {kernel.name}; TODO: check the grid, the output and the scalar arguments."""\n'
            f"    out = torch.empty_like({first})\n"
            f"    grid = ({first}.shape[0],)  # TODO: one program per row? per block?\n"
            f"    {kernel.name}[grid]({', '.join(args)})\n"
            "    return out\n")
    return body, inputs


def contract_for(source_text: str, kernel_name: str, module_name: str | None = None) -> str:
    """Contract code for ``kernel_name`` in ``source_text`` (a file's text), to save as ``<stem>_contract.py``.

    ``module_name`` is the kernel file's import name (its stem); without it a placeholder is written.
    Raises ``ValueError`` when the source does not parse or has no such kernel or function.
    """
    try:
        tree = ast.parse(source_text)
    except SyntaxError as exc:
        raise ValueError(f"the file does not parse: {exc.msg} (line {exc.lineno})") from exc
    kernels = {k.name: k for k in find_kernels(tree, ImportMap(tree))}
    functions = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    module = module_name or "your_kernel_module"
    import_note = "" if module_name else "  # TODO: the kernel file's module name"
    kernel = kernels.get(kernel_name)
    extra_imports = ""
    launcher_src = ""
    if kernel is not None:
        launchers = _launchers(tree, kernel_name)
        if launchers:
            entry = launchers[0].name
            params = [a.arg for a in launchers[0].args.args]
            imports = f"from {module} import {entry}{import_note}"
        else:
            launcher_src, params = _kernel_launcher(kernel)
            entry = "launch"
            imports = f"from {module} import {kernel_name}{import_note}"
            extra_imports = "import triton  # noqa: F401  (grid helpers: triton.cdiv)\n"
    elif kernel_name in functions:
        entry = kernel_name
        params = [a.arg for a in functions[kernel_name].args.args]
        imports = f"from {module} import {entry}{import_note}"
    else:
        known = ", ".join(sorted(set(kernels) | set(functions))) or "none"
        raise ValueError(f"no kernel or function named {kernel_name!r} in the file (found: {known})")

    liger = _liger_hint(kernel_name) or _liger_hint(entry)
    arg_list = ", ".join(params)
    input_lines = textwrap.indent("\n".join(_input_lines(params)), "    ")
    parts = [
        f'"""Benchmark contract for `{kernel_name}` (scaffolded by tritonify: fill in the TODOs).\n\n'
        f'Run it with: tritonify bench {module}.py::{kernel_name}\n"""',
        "import torch\n" + extra_imports + "\nfrom tritonify.kernels.bench import Contract\n" + imports + "\n",
    ]
    if launcher_src:
        parts.append("\n" + launcher_src)
    parts.append(
        "\ndef make_inputs(shape, dtype, device):\n"
        '    """Fresh random arguments for one call (never zeros: they hide unwritten outputs)."""\n'
        f"{input_lines}\n"
        f"    return ({arg_list}{',' if len(params) == 1 else ''})\n\n\n"
        f"def reference({arg_list}):\n"
        '    """The same computation in PyTorch eager (run in float64 for correctness)."""\n'
        f'    raise NotImplementedError("TODO: write the PyTorch reference for {kernel_name}")\n\n\n'
        "CONTRACT = Contract(\n"
        f"    kernel={kernel_name!r},\n"
        f"    entry={entry},\n"
        "    inputs=make_inputs,\n"
        "    reference=reference,\n"
        "    shapes=[(4096, 4096), (16384, 4096)],  # TODO: the shapes that matter\n"
        '    dtype="bfloat16",\n'
        f"    liger={liger!r},  # the Liger-Kernel op to compare with, or None\n"
        "    # bytes=lambda shape, inputs, outputs: ...,  # default: inputs read once + outputs written once\n"
        "    # flops=lambda shape: ...,                   # set it for compute-bound kernels\n"
        ")\n")
    code = "\n".join(parts)
    ast.parse(code)  # never hand back code that does not parse
    return code


def new_contract(kernel_file: Path, kernel_name: str, source_text: str | None = None) -> tuple[Path, str]:
    """(where, text) of a new contract for ``kernel_name``: what ``tritonify bench --write-contract``
    writes and the editor's "Write a benchmark contract" creates. ``source_text`` is the file's text
    (the editor's, unsaved edits included), else it is read. Raises ``ValueError`` saying why there is
    nothing to write: the contract file exists (edit it), the kernel has a contract, or no such kernel."""
    from tritonify.kernels.bench.discovery import contract_path, static_contracts

    kernel_file = Path(kernel_file)
    dest = contract_path(kernel_file)
    if dest.exists():
        raise ValueError(f"{dest} exists; edit it (or move it away to start again)")
    if any(ref.name == kernel_name for ref in static_contracts(kernel_file)):
        raise ValueError(f"{kernel_name} has a benchmark contract already")
    if source_text is None:
        source_text = kernel_file.read_text(encoding="utf-8", errors="replace")
    return dest, contract_for(source_text, kernel_name, kernel_file.stem)
