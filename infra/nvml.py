"""One NVML session (nvidia-ml-py, imported as `pynvml`) for every part of Tritonify that reads the GPU:
the profiler's clock check, the compile inspector's default target, the sweep's device list and the
benchmark's environment record.

    with nvml_session() as nv:          # NvmlUnavailable(reason) when there is no NVML
        handle = nv.nvmlDeviceGetHandleByIndex(0)
        name = read(nv.nvmlDeviceGetName, handle)

NVML needs no CUDA context and imports no torch. The session is shut down when the block ends,
whatever happens in it.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

NOT_INSTALLED = "nvidia-ml-py is not installed (pip install nvidia-ml-py)"


class NvmlUnavailable(Exception):
    """NVML cannot be used here; the message says why (no nvidia-ml-py, no driver)."""


@contextmanager
def nvml_session(module: Any = None) -> Iterator[Any]:
    """The `pynvml` module (or `module`, e.g. a test double), initialised for the block."""
    if module is None:
        try:
            import pynvml as module
        except ImportError:
            raise NvmlUnavailable(NOT_INSTALLED) from None
    try:
        module.nvmlInit()
    except Exception as exc:  # NVMLError_LibraryNotFound / DriverNotLoaded on machines without a driver
        raise NvmlUnavailable(f"NVML is unavailable ({type(exc).__name__}: {exc}): "
                              "no NVIDIA driver on this machine?") from None
    try:
        yield module
    finally:
        try:
            module.nvmlShutdown()
        except Exception:  # noqa: S110 - nothing to do when NVML will not shut down cleanly
            pass


def text(value: Any) -> Any:
    """NVML returns bytes in older bindings and str in newer ones."""
    return value.decode() if isinstance(value, bytes) else value


def read(fn, *args, default: Any = None) -> Any:
    """`fn(*args)` as text where it is bytes, or `default` when this GPU or driver does not answer it."""
    try:
        return text(fn(*args))
    except Exception:  # noqa: BLE001 - NVMLError_NotSupported and friends: the field is unknown
        return default
