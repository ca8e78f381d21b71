"""Rebuild the real-world corpus: Triton code from pinned PyPI packages nobody here wrote.

Each package is fetched with `pip download --no-deps` (nothing is installed or run) and the
`.py` members of its wheel or sdist that mention Triton (or register aten implementations through
`torch.library`, which makes the package a provider of the ops) are copied out, keeping the package's
own layout (`<corpus>/<package>/<pkg>/sub/mod.py`), since imports between modules are part of
what is measured. The fetched code is not committed; this script and the labels are.

    python benchmarks/realworld/corpus.py [--dest DIR]      # default: $TRITONIFY_CORPUS or ~/.cache/tritonify-realworld

Prints one line per package (files kept, files that define a kernel) and writes
`<dest>/MANIFEST.json`.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

# (pip requirement, which members to keep: path prefixes inside the archive, or None for all)
PACKAGES: list[tuple[str, tuple[str, ...] | None]] = [
    ("flag-gems==5.0.2", None),
    ("torchao==0.18.0", None),
    ("gemlite==0.6.0.post2", None),
    ("liger-kernel==0.8.5", None),  # the library TRI003/TRI023 point to: the negative case
    ("torch==2.13.0", ("torch/_inductor/", "torch/sparse/")),
    ("vllm==0.33.0", None),  # imports Triton through its own re-export (vllm.triton_utils)
    ("sglang==0.5.23", None),
    ("fla-core==0.6.0", None),
    ("flash-linear-attention==0.6.0", None),
    ("bitsandbytes==0.50.2", None),
    ("quack-kernels==0.6.5", None),
]

TRITON_MENTION = re.compile(rb"\btriton\b")
# Modules that register a package's kernels as PyTorch's aten implementations (flag-gems does it in
# `flag_gems/__init__.py`, which never says "triton"): kept, since they make the package a provider
# of the ops (diagnostics/liger/scope.py), which TRI003 must see.
ATEN_REGISTRATION = re.compile(rb"""Library\(\s*["']aten["']\s*,\s*["']IMPL["']|library\.(?:impl|register_kernel)\(\s*["']aten::""")
KERNEL_DECORATOR = re.compile(rb"^\s*@\s*(?:[\w.]+\.)?(?:jit|autotune|heuristics)\b", re.M)


def default_dest() -> Path:
    return Path(os.environ.get("TRITONIFY_CORPUS", Path.home() / ".cache" / "tritonify-realworld"))


def fetch(requirement: str, into: Path) -> Path:
    """The downloaded archive for `requirement` (already there: reused)."""
    name = requirement.split("==")[0].replace("-", "_").lower()
    version = requirement.split("==")[1]
    for p in into.iterdir():
        low = p.name.lower().replace("-", "_")
        if low.startswith(f"{name}_{version}".lower()) or low.startswith(f"{name}-{version}".lower()):
            return p
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(into), requirement],
        check=True,
    )
    return fetch(requirement, into)


def members(archive: Path):
    """(path inside the package, bytes) for every .py member of a wheel or sdist."""
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as z:
            for info in z.infolist():
                if info.filename.endswith(".py") and not info.is_dir():
                    yield info.filename, z.read(info)
    else:
        with tarfile.open(archive) as t:
            for m in t.getmembers():
                if m.isfile() and m.name.endswith(".py"):
                    # sdist: drop the leading "<name>-<version>/"
                    rel = m.name.split("/", 1)[1] if "/" in m.name else m.name
                    f = t.extractfile(m)
                    if f is not None:
                        yield rel, f.read()


def build(dest: Path) -> dict:
    dest.mkdir(parents=True, exist_ok=True)
    downloads = dest / ".downloads"
    downloads.mkdir(exist_ok=True)
    manifest = {"packages": {}}
    for requirement, prefixes in PACKAGES:
        archive = fetch(requirement, downloads)
        pkg_dir = dest / requirement.split("==")[0]
        kept = kernels = 0
        for rel, data in members(archive):
            if prefixes and not rel.startswith(prefixes):
                continue
            if not TRITON_MENTION.search(data) and not ATEN_REGISTRATION.search(data):
                continue
            out = pkg_dir / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
            kept += 1
            kernels += bool(KERNEL_DECORATOR.search(data))
        manifest["packages"][requirement] = {"archive": archive.name, "files": kept, "files_with_kernel_decorator": kernels}
        print(f"{requirement:32s} {kept:5d} files kept, {kernels:5d} with a kernel decorator", flush=True)
    (dest / "MANIFEST.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def corpus_files(dest: Path | None = None) -> list[Path]:
    """Every .py file of a built corpus, sorted (empty when it was never built)."""
    dest = dest or default_dest()
    return sorted(p for p in dest.rglob("*.py") if ".downloads" not in p.parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dest", type=Path, default=default_dest())
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory():
        build(args.dest)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
