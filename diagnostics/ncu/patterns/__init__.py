"""The 14 bottleneck patterns, one module each (`a_small_grid.py` ... `n_divergence.py`).

Each module defines `PATTERN` (letter, title, matching ncu rules, fix) and
`detect(ctx: Context) -> Hit | None`. The order here is the letter order; diagnoses are sorted
by estimated impact afterwards.
"""
from __future__ import annotations

import importlib
from functools import lru_cache
from types import ModuleType

MODULES = ("a_small_grid", "b_tail_imbalance", "c_uncoalesced", "d_sparse_writes", "e_latency_bound",
           "f_no_tensor_cores", "g_atomics", "h_bank_conflicts", "i_barrier", "j_occupancy",
           "k_register_spill", "l_fp64", "m_pipeline_bubbles", "n_divergence")


@lru_cache(maxsize=1)
def detectors() -> tuple[ModuleType, ...]:
    return tuple(importlib.import_module(f"{__name__}.{name}") for name in MODULES)


def by_letter(letter: str) -> ModuleType | None:
    for mod in detectors():
        if mod.PATTERN.letter == letter.upper():
            return mod
    return None
