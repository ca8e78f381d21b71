"""Compile-time predictions as Findings, with the config edit that fixes each as a code action.

Codes (distinct from lint rules `TRInnn`/`CUDnnn` and from the profile pattern letters `A`-`N`):
  * `CMP-K`  a config spills registers (pattern K predicted from ptxas's spill bytes);
  * `CMP-J`  a config's theoretical occupancy is under the threshold because of registers or shared
             memory (pattern J's "low in theory" case, computed instead of measured);
  * `CMP-FAIL` the kernel does not compile for the target (the compiler's message, on its line).
Pages: references/compile/<CODE>.md.
"""
from __future__ import annotations

import ast

from tritonify.diagnostics.compile.result import InspectResult, Position, VariantResult
from tritonify.diagnostics.model import Applicability, Edit, Finding, Fix, Severity
from tritonify.references import page_url

DEFAULT_OCCUPANCY_THRESHOLD = 0.20   # as pattern J: a tuned tensor-core matmul runs at 25 %
CODES = ("CMP-K", "CMP-J", "CMP-FAIL")


def _block_key(v: VariantResult) -> str | None:
    """The largest power-of-two block/tile constexpr (the one to halve), or None."""
    best = None
    for name, value in v.constexprs.items():
        power_of_two = isinstance(value, int) and not isinstance(value, bool) and value >= 16 and not value & (value - 1)
        tile_name = "BLOCK" in name.upper() or name.upper() in ("BM", "BN", "BK") or "TILE" in name.upper()
        if power_of_two and tile_name and (best is None or value > v.constexprs[best]):
            best = name
    return best


def _set_keyword(call: ast.Call, name: str, value: int) -> Edit | None:
    """Edit that sets `name=value` in a Config(...) or launch call: replace the literal, or append."""
    for kw in call.keywords:
        if kw.arg == name:
            if not isinstance(kw.value, ast.Constant):
                return None
            v = kw.value
            return Edit(v.lineno, v.col_offset, v.end_lineno, v.end_col_offset, str(value))
    end_line, end_col = call.end_lineno, call.end_col_offset
    if end_line is None or end_col is None:
        return None
    return Edit.insert(end_line, end_col - 1, f", {name}={value}")


def _set_dict_value(call: ast.Call, key: str, value: int) -> Edit | None:
    if not call.args or not isinstance(call.args[0], ast.Dict):
        return None
    d = call.args[0]
    for k, v in zip(d.keys, d.values):
        if isinstance(k, ast.Constant) and k.value == key and isinstance(v, ast.Constant):
            return Edit(v.lineno, v.col_offset, v.end_lineno, v.end_col_offset, str(value))
    return None


def _fix(call: ast.Call | None, title: str, edit_fn, applicability=Applicability.SAFE) -> list[Fix]:
    if call is None:
        return []
    edit = edit_fn(call)
    return [Fix(title, (edit,), applicability)] if edit is not None else []


def _spill_fixes(v: VariantResult) -> tuple[str, list[Fix]]:
    call = v.site.node if v.site else None
    warps = v.num_warps
    threads = warps * 32
    fixes: list[Fix] = []
    cap = min(255, 65536 // threads)
    regs = v.resources.registers if v.resources else 0
    if warps >= 8 and regs >= cap - 8:
        hint = f"num_warps={warps // 2} (raises the register cap from {cap} to {min(255, cap * 2)})"
        fixes += _fix(call, f"Use num_warps={warps // 2}", lambda c: _set_keyword(c, "num_warps", warps // 2))
    else:
        hint = f"num_warps={warps * 2} (spreads the tile over twice the threads)"
        if warps < 32:
            fixes += _fix(call, f"Use num_warps={warps * 2}", lambda c: _set_keyword(c, "num_warps", warps * 2))
    key = _block_key(v)
    if key:
        half = v.constexprs[key] // 2
        hint += f", or {key}={half}"
        fixes += _fix(call, f"Use {key}={half} (smaller tile)", lambda c: _set_dict_value(c, key, half),
                      Applicability.UNSAFE)
    return hint, fixes


def _occupancy_fixes(v: VariantResult) -> tuple[str, list[Fix]]:
    call = v.site.node if v.site else None
    occ = v.occupancy
    fixes: list[Fix] = []
    stages = int(v.options.get("num_stages") or 0)
    key = _block_key(v)
    if occ.limiter == "shared memory" and stages > 1:
        hint = f"num_stages={stages - 1} (each stage holds a copy of the tiles)"
        fixes += _fix(call, f"Use num_stages={stages - 1}", lambda c: _set_keyword(c, "num_stages", stages - 1))
    elif occ.limiter == "registers" and v.num_warps >= 2 and key is None:
        hint = f"num_warps={v.num_warps // 2}"
        fixes += _fix(call, f"Use num_warps={v.num_warps // 2}", lambda c: _set_keyword(c, "num_warps", v.num_warps // 2))
    else:
        hint = "a smaller tile"
    if key:
        half = v.constexprs[key] // 2
        hint += f": {key}={half}" if hint == "a smaller tile" else f", or {key}={half}"
        fixes += _fix(call, f"Use {key}={half} (smaller tile)", lambda c: _set_dict_value(c, key, half),
                      Applicability.UNSAFE)
    return hint, fixes


def _where(v: VariantResult, result: InspectResult) -> str:
    what = f"config {v.index}" if v.index is not None else ("this launch" if v.label == "default" else v.label)
    return f"{what} ({v.describe()}) on {result.target.name}"


def inspect_findings(result: InspectResult, *, threshold: float = DEFAULT_OCCUPANCY_THRESHOLD) -> list[Finding]:
    """CMP-K, CMP-J and CMP-FAIL findings for one inspected kernel, placed on the config's line."""
    out: list[Finding] = []

    def finding(code, message, pos, severity=Severity.WARNING, fixes=()):
        out.append(Finding(code, message, pos.line, pos.column, pos.end_line, pos.end_column, severity,
                           result.path, list(fixes), page_url(code)))

    if result.error and result.error.get("kind") == "not-inspected":
        return out   # not a fault of the kernel: the lens says what the source-only build needs
    if result.error:
        line = result.error.get("line") or result.kernel_line
        col = result.error.get("column") or 0
        timed_out = result.error.get("kind") == "timeout"
        finding("CMP-FAIL", f"{result.kernel} was not compiled for {result.target.name}: "
                f"{_one_line(result.error.get('message'))}", Position(line, col, line, col),
                Severity.WARNING if timed_out else Severity.ERROR)
        return out
    for v in result.variants:
        if v.error:
            line = v.error.get("line")
            pos = Position(line, v.error.get("column") or 0, line, v.error.get("column") or 0) if line else v.position
            finding("CMP-FAIL", f"{_where(v, result)} does not compile: {_one_line(v.error.get('message'))}",
                    pos, Severity.ERROR)
            continue
        r = v.resources
        if r is None:
            continue
        if r.spills:
            hint, fixes = _spill_fixes(v)
            finding("CMP-K", f"{_where(v, result)} spills registers: {r.spill_stores} B stored and "
                    f"{r.spill_loads} B loaded per thread at {r.registers} registers; try {hint}", v.position,
                    fixes=fixes)
        occ = v.occupancy
        if occ and occ.fraction < threshold and occ.limiter in ("registers", "shared memory"):
            hint, fixes = _occupancy_fixes(v)
            detail = (f"{r.registers} registers per thread" if occ.limiter == "registers"
                      else f"{r.shared // 1024} KB shared memory per block")
            finding("CMP-J", f"{_where(v, result)}: theoretical occupancy {occ.percent:g} % "
                    f"({occ.blocks_per_sm} block(s) of {v.num_warps} warps per SM), limited by {occ.limiter} "
                    f"({detail}); try {hint}", v.position, fixes=fixes)
    return out


def _one_line(message: str | None) -> str:
    lines = [ln.strip() for ln in (message or "unknown error").strip().splitlines() if ln.strip()]
    return " ".join(lines[:3])[:400] if lines else "unknown error"
