"""Mechanical edits that follow from a pattern, offered as code actions in the editor.

Only changes that keep the kernel's results are built here (launch parameters, a cast back to
fp32, an `f` suffix); they are still UNSAFE in ruff's sense (they change performance and a
reduction's summation order), so `--fix` never applies them. Everything else comes as a
snippet in the pattern's page (`tritonify rule <LETTER>`).
"""
from __future__ import annotations

import re

from tritonify.diagnostics.model import Applicability, Edit, Fix
from tritonify.diagnostics.source import split_lines

_NUM_STAGES = re.compile(r"\bnum_stages\s*=\s*(\d+)")
_NUM_WARPS = re.compile(r"\bnum_warps\s*=\s*(\d+)")
_GRID_LITERAL = re.compile(r"\[\s*\(\s*(\d+)\s*,\s*\)\s*\]")
_CUDA_DOUBLE = re.compile(r"(?<![\w.])(\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])")


def _replace_all(text: str, pattern: re.Pattern, make, title: str) -> list[Fix]:
    fixes = []
    for no, line in enumerate(split_lines(text), 1):
        for m in pattern.finditer(line):
            new = make(m)
            if new is None or new == m.group(0):
                continue
            fixes.append(Fix(f"{title} (line {no})", (Edit(no, m.start(), no, m.end(), new),),
                             Applicability.UNSAFE))
    return fixes


def more_stages(text: str) -> list[Fix]:
    """M: `num_stages=1|2` -> `num_stages=3` (Triton then prefetches with cp.async/TMA)."""
    return _replace_all(text, _NUM_STAGES,
                        lambda m: "num_stages=3" if int(m.group(1)) < 3 else None,
                        "Pipeline the loop: num_stages=3")


def fewer_stages(text: str) -> list[Fix]:
    """J limited by shared memory: halve `num_stages` (each stage holds a copy of the tiles)."""
    return _replace_all(text, _NUM_STAGES,
                        lambda m: f"num_stages={max(2, int(m.group(1)) // 2)}" if int(m.group(1)) > 3 else None,
                        "Free shared memory: fewer pipeline stages")


def spill_warps(text: str) -> list[Fix]:
    """K: with 8+ warps ptxas caps registers per thread at 65536 / threads, so halving the warps
    raises the cap; with fewer warps, doubling them spreads the tile over more threads."""
    def make(m):
        n = int(m.group(1))
        return f"num_warps={n // 2}" if n >= 8 else f"num_warps={n * 4 if n == 1 else n * 2}"
    return _replace_all(text, _NUM_WARPS, make, "Relieve register pressure: change num_warps")


def grid_to_sm_count(text: str, sm_count: int) -> list[Fix]:
    """A, for grid-stride kernels (they read `tl.num_programs`): a literal grid smaller than the
    SM count becomes the SM count, read from the device at run time."""
    if "num_programs" not in text:
        return []
    return _replace_all(text, _GRID_LITERAL,
                        lambda m: "[(torch.cuda.get_device_properties(0).multi_processor_count,)]"
                        if int(m.group(1)) < sm_count else None,
                        "Launch one program per SM")


def cast_back_to_fp32(text: str, line: int, cuda: bool = False) -> list[Fix]:
    """L: on the flagged line, fp64 becomes fp32 (`tl.float64` -> `tl.float32`; in CUDA, a double
    literal gets its `f`)."""
    lines = split_lines(text)
    if not 1 <= line <= len(lines):
        return []
    src = lines[line - 1]
    code, _, _comment = src.partition("//" if cuda else "#")
    if cuda:
        new = _CUDA_DOUBLE.sub(lambda m: m.group(0) + "f", code)
    else:
        new = code.replace("tl.float64", "tl.float32").replace("tl.fp64", "tl.float32")
    if new == code:
        return []
    return [Fix(f"Keep the math in fp32 (line {line})", (Edit(line, 0, line, len(code), new),),
                Applicability.UNSAFE)]


def fixes_for(letter: str, text: str | None, lines: list[int], *, cuda: bool = False,
              sm_count: int = 132, limiter: str | None = None) -> list[Fix]:
    """The code actions for pattern `letter` in a kernel file's `text` (`lines`: where the cost is):
    the pattern module's `actions()`, built from the edits above."""
    from tritonify.diagnostics.ncu.patterns import by_letter

    mod = by_letter(letter)
    make = getattr(mod, "actions", None) if mod else None
    if not text or make is None:
        return []
    return make(text, lines, cuda=cuda, sm_count=sm_count, limiter=limiter)
