"""Why a profile failed, told plainly: each error has a stable code, a message and what to do.

`classify(returncode, output)` reads what `ncu` and the launcher printed and names the cause;
the codes are what the CLI's JSON output and the editor show.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass
class ProfileError(Exception):
    code: str            # ncu-missing, no-gpu, counters-permission, no-kernel, timeout, launcher-crashed, ...
    message: str
    hint: str | None = None
    stderr_tail: str | None = None

    def __str__(self) -> str:
        text = self.message
        if self.hint:
            text += f"\nhint: {self.hint}"
        if self.stderr_tail:
            text += "\n--- last lines of the launcher's output ---\n" + self.stderr_tail
        return text

    def to_dict(self) -> dict:
        return {"error": self.code, "message": self.message, "hint": self.hint, "stderr_tail": self.stderr_tail}


PERMISSION_HINT = (
    "GPU performance counters are restricted to administrators (ERR_NVGPUCTRPERM). Run as root or "
    "with CAP_SYS_ADMIN (CAP_PERFMON on driver 565+); in a container start it with --cap-add=SYS_ADMIN; "
    "or allow all users on the host: add `options nvidia NVreg_RestrictProfilingToAdminUsers=0` to "
    "/etc/modprobe.d/nvidia-profiling.conf and reboot. See "
    "https://developer.nvidia.com/ERR_NVGPUCTRPERM")


def tail(text: str, lines: int = 20) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def _app_lines(output: str) -> str:
    """The launcher's own output: ncu's `==PROF==`/`==WARNING==`/`==ERROR==` lines removed."""
    return "\n".join(ln for ln in output.splitlines() if not re.match(r"==(PROF|WARNING|ERROR|INFO)==", ln))


def classify(returncode: int, output: str, *, kernel: str | None = None) -> ProfileError | None:
    """The error in an ncu run's combined output, or None when it profiled something."""
    if "ERR_NVGPUCTRPERM" in output:
        return ProfileError("counters-permission", "ncu may not read the GPU's performance counters",
                            PERMISSION_HINT)
    if re.search(r"no CUDA-capable device|cudaErrorNoDevice|CUDA driver version is insufficient|"
                 r"Found no NVIDIA driver|NVIDIA-SMI has failed|no NVIDIA GPU|No CUDA GPUs are available", output, re.I):
        return ProfileError("no-gpu", "no usable NVIDIA GPU was found",
                            "profile on a machine with an NVIDIA GPU and driver, or run `tritonify diagnose` "
                            "on a report captured elsewhere", tail(_app_lines(output)) or None)
    if "LibraryNotLoaded" in output or "Failed to initialize the profiler" in output:
        return ProfileError("profiler-unavailable", "ncu could not start its profiler on this machine",
                            "sandboxed runtimes (gVisor) block the counters; use a VM or bare metal",
                            tail(output))
    m = re.search(r"The application returned an error code \((-?\d+)\)", output)
    crashed = m is not None or (returncode not in (0, None) and "No kernels were profiled" not in output)
    if crashed and "==PROF== Profiling" not in output:
        code = m.group(1) if m else str(returncode)
        return ProfileError("launcher-crashed", f"the launcher exited with code {code} before a kernel was profiled",
                            "run the launcher without ncu to see it fail the same way",
                            tail(_app_lines(output)) or None)
    if "No kernels were profiled" in output:
        which = f" named {kernel!r}" if kernel else ""
        return ProfileError("no-kernel", f"no kernel{which} was launched under the filter",
                            "check the kernel name (Triton uses the Python function name), that the launcher "
                            "really launches it, and that the NVTX range / --launch-skip do not exclude it",
                            tail(_app_lines(output)) or None)
    return None
