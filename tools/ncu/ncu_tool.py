"""Find the `ncu` executable and export a report's pages as CSV text.

Every call is an argument list in a child process (never a shell string), started by
`tritonify.infra.child_process.run_process`. A report's pages are
exported with the options the parsers expect: the raw page with `--print-units base`, the
details page, and one source page per kernel with `--print-source cuda,sass`.
"""
from __future__ import annotations

import glob
import os
import shutil
from pathlib import Path

from tritonify.diagnostics.ncu.errors import ProfileError
from tritonify.infra.child_process import OK, TIMEOUT, run_process


def find_ncu() -> str | None:
    """`$TRITONIFY_NCU`, then `ncu` on PATH, then the usual CUDA and Nsight Compute folders."""
    env = os.environ.get("TRITONIFY_NCU")
    if env:
        return env if Path(env).is_file() else None
    found = shutil.which("ncu")
    if found:
        return found
    for pattern in ("/usr/local/cuda/bin/ncu", "/usr/local/cuda-*/bin/ncu", "/opt/nvidia/nsight-compute/*/ncu"):
        hits = sorted(glob.glob(pattern))
        if hits:
            return hits[-1]
    return None


def require_ncu() -> str:
    ncu = find_ncu()
    if ncu is None:
        raise ProfileError("ncu-missing", "Nsight Compute (`ncu`) is not installed or not on PATH",
                           "install Nsight Compute (it ships with the CUDA toolkit, e.g. /usr/local/cuda/bin/ncu), "
                           "add it to PATH or set TRITONIFY_NCU; `tritonify diagnose` also reads CSV exports "
                           "(`ncu --import R.ncu-rep --csv --page raw`) without ncu")
    return ncu


def _export(ncu: str, report: str, args: list[str], timeout: float) -> str:
    outcome = run_process([ncu, "--import", report, "--csv", *args], what="ncu --import", timeout_s=timeout,
                          kill_grace_s=0)
    if outcome.status == TIMEOUT:
        raise ProfileError("timeout", f"ncu took more than {timeout:.0f}s to export {report}")
    if outcome.status != OK:
        raise ProfileError("export-failed", f"ncu could not read {report}",
                           outcome.stderr.strip()[-2000:] or outcome.message)
    return outcome.stdout


def export_pages(report: str, kernels: list[str] | None = None, *, ncu: str | None = None,
                 timeout: float = 300) -> tuple[str, str, list[str]]:
    """(raw page, details page, source pages) of an `.ncu-rep`."""
    from concurrent.futures import ThreadPoolExecutor

    ncu = ncu or require_ncu()
    # Each `ncu --import` loads the whole report (about 0.5-1 s on the H200): run them side by side.
    with ThreadPoolExecutor(max_workers=8) as pool:
        raw_f = pool.submit(_export, ncu, report, ["--page", "raw", "--print-units", "base"], timeout)
        details_f = pool.submit(_export, ncu, report, ["--page", "details"], timeout)
        source_fs = [pool.submit(_export, ncu, report, ["--page", "source", "--print-source", "cuda,sass",
                                                         "-k", f"regex:^{_escape(k)}$"], timeout)
                     for k in kernels or ()]
        raw, details = raw_f.result(), details_f.result()
        if kernels is None:
            from tritonify.diagnostics.ncu.raw_page import parse_raw

            source_fs = [pool.submit(_export, ncu, report, ["--page", "source", "--print-source", "cuda,sass",
                                                             "-k", f"regex:^{_escape(k)}$"], timeout)
                         for k in sorted({launch.kernel for launch in parse_raw(raw)})]
        sources = []
        for f in source_fs:
            try:
                sources.append(f.result())
            except ProfileError:
                continue  # a kernel without source (no line info) still gets its kernel-level patterns
    return raw, details, sources


def _escape(name: str) -> str:
    import re

    return re.escape(name)
