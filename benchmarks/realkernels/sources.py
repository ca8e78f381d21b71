"""Gather the pinned code the real kernels need on the device into one folder that is carried, never
committed: the Liger-Kernel 0.8.5 wheel (installed there with pip) and vLLM 0.33.0's decode-attention
file, copied from the corpus (`benchmarks/realworld/corpus.py` unpacks the pinned wheels), keeping
the package layout.

    python benchmarks/realkernels/sources.py /work/main/.dev/realkernels-src
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

CORPUS = Path(os.environ.get("TRITONIFY_CORPUS", "/work/corpus"))
WHEEL = "liger_kernel-0.8.5-py3-none-any.whl"
WHEEL_DIRS = [Path("/work/main/.dev/whl-moe")]
FILES = {"vllm": ["vllm/v1/attention/ops/triton_decode_attention.py"]}


def gather(dest: Path) -> dict:
    dest.mkdir(parents=True, exist_ok=True)
    manifest = {"corpus": str(CORPUS), "files": {}}
    for where in WHEEL_DIRS:
        if (where / WHEEL).is_file():
            (dest / "whl").mkdir(exist_ok=True)
            shutil.copy2(where / WHEEL, dest / "whl" / WHEEL)
            manifest["wheel"] = WHEEL
            break
    else:
        raise SystemExit(f"{WHEEL} not found in {', '.join(map(str, WHEEL_DIRS))}: "
                         f"pip download --no-deps liger-kernel==0.8.5 -d one of them")
    for package, files in FILES.items():
        for rel in files:
            src = CORPUS / package / rel
            out = dest / package / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, out)
            manifest["files"][f"{package}/{rel}"] = hashlib.sha256(src.read_bytes()).hexdigest()[:16]
    versions = json.loads((CORPUS / "MANIFEST.json").read_text())["packages"]
    manifest["versions"] = sorted(v for v in versions if v.split("==")[0] in ("vllm", "liger-kernel"))
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return manifest


if __name__ == "__main__":
    print(json.dumps(gather(Path(sys.argv[1] if len(sys.argv) > 1 else "/work/main/.dev/realkernels-src")), indent=1))
