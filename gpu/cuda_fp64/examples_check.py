"""Build and run the CUDA examples before and after `tritonify check --fix` (device machine).

Usage: python3 gpu/cuda_fp64/examples_check.py FIXED_DIR
FIXED_DIR holds copies of examples/cuda/* after `tritonify check --fix`. Prints the FP64 SASS
instruction count of each .cu file (nvcc -O3 -arch=sm_90) and runs each Python example's main()
(correctness against a library reference, then timing).
"""
from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from probe import FP64_SASS  # noqa: E402

EXAMPLES = Path("examples/cuda")


def fp64_count(cu: Path) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        cubin = Path(tmp) / "k.cubin"
        r = subprocess.run(["nvcc", "-O3", "-arch=sm_90", "-cubin", "-o", str(cubin), str(cu)], capture_output=True, text=True)
        if r.returncode:
            return "compile error: " + r.stderr.strip()[:300]
        sass = subprocess.run(["cuobjdump", "-sass", str(cubin)], capture_output=True, text=True).stdout
        return str(len(FP64_SASS.findall(sass)))


def run_main(path: Path, tag: str) -> None:
    spec = importlib.util.spec_from_file_location(f"example_{tag}_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    print(f"== {tag} {path}", flush=True)
    module.main()


def main() -> int:
    fixed = Path(sys.argv[1])
    for name in ("layernorm_fwd.cu", "softmax_clean.cu"):
        print(f"{name}: FP64 SASS original={fp64_count(EXAMPLES / name)} fixed={fp64_count(fixed / name)}", flush=True)
    for name in ("rmsnorm_cupy.py", "gelu_load_inline.py"):
        for tag, folder in (("original", EXAMPLES), ("fixed", fixed)):
            try:
                run_main(folder / name, tag)
            except Exception as exc:  # noqa: BLE001 - report and go on with the others
                print(f"{tag} {name} failed: {type(exc).__name__}: {exc}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
