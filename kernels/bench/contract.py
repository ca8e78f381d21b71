"""The contract a user writes beside a kernel: what it computes and how to call it.

A contract is plain Python, discovered without configuration (see ``discovery``)::

    from tritonify.kernels.bench import Contract

    CONTRACT = Contract(
        kernel="rmsnorm_kernel",            # the @triton.jit kernel (FILE::KERNEL names it)
        entry=rmsnorm,                      # the Python launcher under test
        inputs=make_inputs,                 # (shape, dtype, device) -> tuple of arguments
        reference=rmsnorm_reference,        # PyTorch eager, same arguments
        shapes=[(4096, 4096), (16384, 4096)],
        dtype="bfloat16",
        liger="rms_norm",                   # or a callable; see baselines.LIGER_OPS
    )

This module imports nothing heavy (no torch): the language server loads it to scaffold contracts.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

# Element-wise tolerances against the float64 reference, by output dtype: |out - ref| <= atol + rtol*|ref|.
# bf16 keeps 8 bits of mantissa (2^-8 = 3.9e-3 relative rounding); fp16 11 bits; fp32 accumulation
# order alone moves a 4096-long reduction by ~1e-6 relative.
DEFAULT_TOLERANCES = {
    "bfloat16": (1e-2, 1.6e-2),
    "float16": (1e-3, 2e-3),
    "float32": (1e-5, 1e-4),
    "float64": (1e-10, 1e-9),
}

KNOWN_BASELINES = ("eager", "compile", "liger")


class ContractError(ValueError):
    """A contract that cannot be run as written (the message says which field and why)."""


@dataclass
class Contract:
    """What a kernel computes, how to call it, and what to compare it with.

    Fields:
      entry      the Python launcher under test; called as ``entry(*inputs)`` (plus ``out=`` when
                 ``out`` is given) and returning a tensor or a tuple of tensors.
      inputs     ``inputs(shape, dtype, device) -> tuple``: fresh random arguments for one call. The
                 harness seeds torch before each call; all-zero or constant float inputs are refused.
      reference  PyTorch eager code computing the same thing from the same arguments. Correctness
                 runs it on float64 copies; the ``eager`` baseline runs it at the kernel's dtype.
      shapes     default shapes (tuples), overridable with ``--shapes``.
      kernel     the @triton.jit kernel's name the launcher runs (so ``FILE::KERNEL`` finds it).
      name       a display name (defaults to ``kernel`` or the launcher's name).
      dtype      torch dtype name of the floating inputs ("bfloat16", "float16", "float32").
      atol/rtol  element-wise tolerances (defaults by dtype: ``DEFAULT_TOLERANCES``).
      liger      the Liger-Kernel equivalent: a callable with the entry's arguments, or an op name
                 from ``baselines.LIGER_OPS`` ("rms_norm", "swiglu", ...). None when Liger has no such op.
      baselines  any other callables to time against, by name (same arguments as the entry).
      bytes      ``bytes(shape, inputs, outputs) -> int``: bytes one call must move. Default: every
                 input tensor read once plus every output tensor written once.
      flops      ``flops(shape) -> int`` floating-point operations per call (None: not reported).
      target     goal as a fraction of the roofline ceiling (0.8 = 80% of copy bandwidth for a
                 memory-bound kernel, of the bf16 matmul rate for a compute-bound one).
      out        ``out(*inputs) -> tensor``: when the launcher writes into a caller's buffer, allocate
                 it here; the harness poisons it (NaN) and passes it as ``out=``.
      compile    whether the ``compile`` baseline applies (``torch.compile(reference)``).
    """

    entry: Callable[..., Any]
    inputs: Callable[..., tuple]
    reference: Callable[..., Any]
    shapes: Sequence[tuple] = ()
    kernel: str | None = None
    name: str | None = None
    dtype: str = "bfloat16"
    atol: float | None = None
    rtol: float | None = None
    liger: Callable[..., Any] | str | None = None
    baselines: dict[str, Callable[..., Any]] = field(default_factory=dict)
    bytes: Callable[..., int] | None = None
    flops: Callable[..., int] | None = None
    target: float | None = None
    out: Callable[..., Any] | None = None
    compile: bool = True

    def __post_init__(self) -> None:
        for attr in ("entry", "inputs", "reference"):
            if not callable(getattr(self, attr)):
                raise ContractError(f"Contract.{attr} must be callable, got {type(getattr(self, attr)).__name__}")
        self.shapes = [tuple(int(d) for d in (s if isinstance(s, (tuple, list)) else (s,))) for s in self.shapes]
        if self.dtype not in DEFAULT_TOLERANCES:
            raise ContractError(f"Contract.dtype {self.dtype!r} is not one of {sorted(DEFAULT_TOLERANCES)}")
        if self.target is not None and not 0 < float(self.target) <= 1.5:
            raise ContractError(f"Contract.target is a fraction of the ceiling (e.g. 0.8), got {self.target!r}")
        clash = set(self.baselines) & set(KNOWN_BASELINES)
        if clash:
            raise ContractError(f"Contract.baselines may not redefine {sorted(clash)}: use reference/liger")
        if self.name is None:
            self.name = self.kernel or getattr(self.entry, "__name__", "kernel")

    @property
    def tolerances(self) -> tuple[float, float]:
        """(atol, rtol) in force: the contract's own, else the dtype's default."""
        atol, rtol = DEFAULT_TOLERANCES[self.dtype]
        return (self.atol if self.atol is not None else atol, self.rtol if self.rtol is not None else rtol)

    def matches(self, name: str) -> bool:
        """Whether ``FILE::name`` selects this contract (kernel, launcher or display name)."""
        return name in {self.kernel, self.name, getattr(self.entry, "__name__", None)}
