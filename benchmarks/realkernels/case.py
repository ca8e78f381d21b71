"""What a launcher builds for one real kernel: the user's call, how to check it, what to compare it with.

A `Case` holds
* `call()`: the call as the kernel's users make it (inputs built once, as users build them: leaf
  tensors and outputs of other ops); it returns the outputs to check;
* `reference()`: the same function in float64 on the same inputs (the check of correctness);
* `eager` / `compiled`: the op written in plain torch (the project's own fallback or the usual eager
  code) and that under torch.compile, the speed baselines besides the original;
* `candidates`: the original with one pattern's fix applied in a copy (`Candidate`), each to be
  checked against the reference and the original, then timed;
* `tolerance`: the largest ||out - ref|| / ||ref|| accepted per output (bf16 outputs: 1e-2).
"""
from __future__ import annotations

import inspect
import os
import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass
class Candidate:
    fixes: str            # the pattern letter whose fix this applies
    change: str           # what was changed, in a line
    call: Callable[[], Any]


@dataclass
class Case:
    call: Callable[[], Any]
    reference: Callable[[], Any]
    eager: Callable[[], Any] | None = None
    compiled: Callable[[], Any] | None = None
    candidates: dict[str, Candidate] = field(default_factory=dict)
    tolerance: float = 1e-2
    bytes_moved: float | None = None   # the fewest bytes the op must move (inputs once, outputs once)
    notes: str = ""


def as_tuple(out) -> tuple:
    if isinstance(out, (tuple, list)):
        return tuple(o for o in out if o is not None)
    return (out,)


def rel_errors(out, ref) -> list[float]:
    """||out - ref|| / ||ref|| per output, in float64; NaN anywhere is an infinite error."""
    import torch

    errors = []
    for o, r in zip(as_tuple(out), as_tuple(ref)):
        o64, r64 = o.detach().to(torch.float64), r.detach().to(torch.float64)
        if o64.shape != r64.shape:
            errors.append(float("inf"))
            continue
        if not torch.isfinite(o64).all():
            errors.append(float("inf"))
            continue
        denom = torch.linalg.vector_norm(r64).item() or 1.0
        errors.append(torch.linalg.vector_norm(o64 - r64).item() / denom)
    return errors


def patched_copy(function, edits: dict[str, str], extra_globals: dict | None = None):
    """A copy of `function` (a launcher from the pinned package, read at run time) with textual edits
    applied (old -> new, each must occur), compiled in a copy of its module's globals. This is how a
    pattern's fix is applied to a real launcher without committing the launcher."""
    source = textwrap.dedent(inspect.getsource(function))
    lines = source.splitlines(keepends=True)
    while lines and lines[0].lstrip().startswith("@"):
        lines.pop(0)   # decorators (ensure_contiguous) stay with the original
    source = "".join(lines)
    for old, new in edits.items():
        if old not in source:
            raise ValueError(f"{function.__module__}.{function.__name__}: the fix's anchor {old!r} is not in "
                             "the pinned source")
        source = source.replace(old, new)
    namespace = dict(function.__globals__)
    namespace.update(extra_globals or {})
    exec(compile(source, f"<fixed copy of {function.__module__}.{function.__name__}>", "exec"), namespace)
    return namespace[function.__name__]


def patch_dir():
    """Where fixed copies are written: `$RK_PATCH_DIR`, else a folder under the temporary directory
    (never beside the pinned package's files)."""
    import tempfile
    from pathlib import Path

    d = Path(os.environ.get("RK_PATCH_DIR") or Path(tempfile.gettempdir()) / "rk_fixed")
    d.mkdir(parents=True, exist_ok=True)
    return d


def patched_module(module, edits: dict[str, str], tag: str, extra_globals: dict | None = None,
                   first: bool = False):
    """A copy of a whole module of the pinned package (its file read at run time) with textual edits
    (old -> new; each must occur exactly once, or with `first` at least once and only the first
    occurrence, the forward kernel's, is edited), written to `patch_dir()` as `<name>_<tag>.py` and
    imported as a module of its own: the way a fix inside a `@triton.jit` kernel is applied, since
    Triton compiles a kernel from its source file. The original module is untouched."""
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(module.__file__)
    text = path.read_text()
    for old, new in edits.items():
        count = text.count(old)
        if count == 0 or (count > 1 and not first):
            raise ValueError(f"{path.name}: the fix's anchor {old!r} occurs {count} times in the pinned source "
                             "(expected once)")
        text = text.replace(old, new, 1)
    out = patch_dir() / f"{path.stem}_{tag}.py"
    out.write_text(text)
    name = f"{module.__name__}_{tag}"
    spec = importlib.util.spec_from_file_location(name, out)
    copy = importlib.util.module_from_spec(spec)
    sys.modules[name] = copy
    spec.loader.exec_module(copy)
    for key, value in (extra_globals or {}).items():
        setattr(copy, key, value)
    return copy
