"""Registers, spills, stack and shared memory of a compiled kernel, read from the tools' text.

Two sources, both produced on a machine without a GPU:
  * `cuobjdump -res-usage` on the cubin Triton produced (`REG:48 STACK:0 SHARED:1024 LOCAL:0 ...`):
    the same cubin a GPU would load, so its REG is what `CompiledKernel.n_regs` reports there;
  * Triton's own `ptxas -v` log (printed when `TRITON_DUMP_PTXAS_LOG=1`): the only place that
    states spill store and spill load bytes (`CompiledKernel.n_spills` is ptxas's spill count).
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass

_RES_FUNC = re.compile(r"Function\s+(\S+?):\s*\n\s*(.*)")
_RES_FIELD = re.compile(r"([A-Z]+(?:\[\d+\])?):(\d+)")
_PTXAS_SPILL = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_PTXAS_REGS = re.compile(r"Used (\d+) registers")
_PTXAS_BARRIERS = re.compile(r"used (\d+) barriers")


@dataclass(frozen=True)
class Resources:
    registers: int                 # per thread
    spill_stores: int              # bytes per thread (ptxas)
    spill_loads: int               # bytes per thread (ptxas)
    stack: int                     # bytes per thread
    local: int                     # bytes of declared local memory per thread
    static_shared: int             # bytes in the cubin (sm_90 puts 1 KB here once barriers are used)
    dynamic_shared: int            # Triton's metadata.shared, passed at launch
    barriers: int | None = None

    @property
    def shared(self) -> int:
        """Shared memory the block asks for: Triton's dynamic bytes plus the cubin's static bytes."""
        return self.dynamic_shared + self.static_shared

    @property
    def local_words(self) -> int:
        """Local memory per thread in 4-byte words: what Triton's `CompiledKernel.n_spills` reports
        on a GPU (the driver's CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES / 4), stack frame included."""
        return (self.stack + self.local) // 4

    @property
    def spills(self) -> bool:
        return self.spill_stores > 0 or self.spill_loads > 0

    def to_dict(self) -> dict:
        d = asdict(self)
        d["shared"] = self.shared
        d["spills"] = self.spills
        d["local_words"] = self.local_words
        return d


def parse_res_usage(text: str, function: str | None = None) -> dict:
    """{'REG': 48, 'STACK': 0, 'SHARED': 1024, 'LOCAL': 0, ...} for `function` (or the first one)."""
    for m in _RES_FUNC.finditer(text or ""):
        if function is None or m.group(1) == function:
            return {k: int(v) for k, v in _RES_FIELD.findall(m.group(2))}
    return {}


def parse_ptxas_log(text: str, function: str | None = None) -> dict:
    """{'registers', 'stack', 'spill_stores', 'spill_loads', 'barriers'} from a `ptxas -v` log."""
    text = text or ""
    if function:
        start = text.find(f"Function properties for {function}")
        if start >= 0:
            text = text[start:]
    out: dict = {}
    m = _PTXAS_SPILL.search(text)
    if m:
        out.update(stack=int(m.group(1)), spill_stores=int(m.group(2)), spill_loads=int(m.group(3)))
    m = _PTXAS_REGS.search(text)
    if m:
        out["registers"] = int(m.group(1))
    m = _PTXAS_BARRIERS.search(text)
    if m:
        out["barriers"] = int(m.group(1))
    return out


def resources_from(job: dict) -> Resources | None:
    """Resources of one compiled job (the worker's dict); None when neither tool said anything."""
    name = job.get("name")
    res = parse_res_usage(job.get("res_usage", ""), name)
    log = parse_ptxas_log(job.get("ptxas_log", ""), name)
    if not res and not log:
        return None
    return Resources(
        registers=res.get("REG", log.get("registers", 0)),
        spill_stores=log.get("spill_stores", 0),
        spill_loads=log.get("spill_loads", 0),
        stack=res.get("STACK", log.get("stack", 0)),
        local=res.get("LOCAL", 0),
        static_shared=res.get("SHARED", 0),
        dynamic_shared=int(job.get("shared", 0)),
        barriers=log.get("barriers"),
    )
