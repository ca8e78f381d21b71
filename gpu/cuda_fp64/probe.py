"""Which CUDA source spellings really run in FP64? Ground truth for CUD001/CUD002.

Compiles small kernels with nvcc (sm_90, -O3, with and without <cmath>) and with NVRTC (the
compiler behind cupy.RawKernel), counts FP64 machine instructions in the SASS (nvcc) or `.f64`
PTX instructions (NVRTC), and times an FP32 chain against the same chain promoted by a double
literal on the GPU. Run on the device machine: `python3 gpu/cuda_fp64/probe.py OUTDIR`.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

FP64_SASS = re.compile(r"\b(DADD|DMUL|DFMA|DSETP|DMNMX|F2F\.F64\.F32|F2F\.F32\.F64|MUFU\.RCP64H|MUFU\.RSQ64H|F2I\.F64|I2F\.F64)\b")
FP64_PTX = re.compile(r"^\s*[a-z0-9.]+\.f64\b|cvt\.[a-z.]*f64", re.M)

ONE_ARG = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "cbrt", "sin", "cos",
           "tan", "tanh", "sinh", "cosh", "asin", "acos", "atan", "erf", "erfc", "fabs", "floor", "ceil",
           "round", "trunc", "rint", "lgamma", "tgamma", "erfinv", "normcdf", "abs", "rcbrt", "sinpi", "exp10"]
TWO_ARG = ["pow", "fmax", "fmin", "fmod", "atan2", "hypot", "copysign", "fdim", "remainder"]

CASES: dict[str, str] = {
    "lit_mul": "y[i] = x[i] * 0.5;",
    "lit_mul_add": "y[i] = x[i] * 0.5 + 1.0;",
    "lit_mul_add_f": "y[i] = x[i] * 0.5f + 1.0f;",
    "lit_div": "y[i] = 1.0 / x[i];",
    "lit_cmp": "y[i] = x[i] > 0.0 ? x[i] : 0.f;",
    "lit_compound": "float a = x[i]; a += 1e-5; a *= 0.999; y[i] = a;",
    "lit_chain_var": "float a = x[i]; float b = a * 0.7978845608 * (1.0 + 0.044715 * a * a); y[i] = b;",
    "lit_init_only": "const float c = 0.5; y[i] = x[i] * c;",
    "int_math": "int j = i * 3 / 2; y[i] = x[i] * j;",
    "exp_float": "y[i] = exp(x[i]);",
    "exp_float_global": "y[i] = ::exp(x[i]);",
    "expf": "y[i] = expf(x[i]);",
    "exp_promoted": "y[i] = exp(x[i] * 0.5);",
    "exp_promoted_f": "y[i] = exp(x[i] * 0.5f);",
    "expf_promoted_arg": "y[i] = expf(x[i] * 0.5);",
    "sqrt_int": "y[i] = sqrt(n);",
    "pow_float_int": "y[i] = pow(x[i], 2);",
    "pow_float_double": "y[i] = pow(x[i], 2.0);",
    "fmax_float_double": "y[i] = fmax(x[i], 0.0);",
    "max_float_float": "y[i] = max(x[i], 0.f);",
    "fma_float": "y[i] = fma(x[i], x[i], 1.f);",
    "double_var": "double d = xd[i]; y[i] = (float)exp(d * 0.5);",
    "lit_mul_inexact": "y[i] = x[i] * 0.1;",
    "lit_cmp_inexact": "y[i] = x[i] > 0.1 ? x[i] : 0.f;",
    "int_div_lit": "float s = 1.0 / n; y[i] = x[i] * s;",
    "two_statements_exact": "float a = x[i] * 0.5; y[i] = a + 1.0;",
    "sub_then_mul_exact": "y[i] = (x[i] - 1.0) * x[i];",
    "float_op_then_exact": "y[i] = (x[i] - x[i + 1]) / 2.0;",
    "sinf": "y[i] = sinf(x[i]);",
    "expf_inexact_arg": "y[i] = expf(x[i] * 0.1);",
    "sqrtf_eps": "y[i] = sqrtf(x[i] + 1e-5);",
    "float4_chain": "float4 v = reinterpret_cast<const float4*>(x)[i]; y[i] = v.x * 0.25 + v.y;",
    "ternary_lit": "y[i] = x[i] > 0.f ? x[i] : 0.0;",
    "powf_float_int": "y[i] = powf(x[i], 2);",
    "ldexp_float_int": "y[i] = ldexp(x[i], 3);",
    "compound_exact": "float a = x[i]; a *= 0.5; y[i] = a;",
    "hex_float_lit": "y[i] = x[i] * 0x1.8p1 + x[i + 1];",
}
CASES.update({f"fn1_{f}": f"y[i] = {f}(x[i]);" for f in ONE_ARG})
CASES.update({f"fn2_{f}": f"y[i] = {f}(x[i], x[i + 1]);" for f in TWO_ARG})
STD_CASES = {"std_exp": "y[i] = std::exp(x[i]);", "std_pow_int": "y[i] = std::pow(x[i], 2);",
             "std_abs": "y[i] = std::abs(x[i]);"}

TEMPLATE = """{header}
extern "C" __global__ void k(const float* __restrict__ x, float* __restrict__ y, const double* xd, int n) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  {body}
}}
"""


def nvcc_count(body: str, header: str, work: Path) -> int | str:
    src = work / "k.cu"
    src.write_text(TEMPLATE.format(header=header, body=body))
    cubin = work / "k.cubin"
    r = subprocess.run(["nvcc", "-O3", "-arch=sm_90", "-cubin", "-o", str(cubin), str(src)], capture_output=True, text=True)
    if r.returncode != 0:
        return "compile error: " + (r.stderr.strip().splitlines() or ["?"])[0][:160]
    sass = subprocess.run(["cuobjdump", "-sass", str(cubin)], capture_output=True, text=True).stdout
    return len(FP64_SASS.findall(sass))


def nvrtc_count(body: str) -> int | str:
    from cupy_backends.cuda.libs import nvrtc

    src = TEMPLATE.format(header="", body=body)
    prog = nvrtc.createProgram(src, "k.cu", [], [])
    try:
        try:
            nvrtc.compileProgram(prog, ["-arch=compute_90"])
        except Exception as exc:  # noqa: BLE001 - report the compiler's message
            log = nvrtc.getProgramLog(prog)
            return "compile error: " + (str(log).strip().splitlines() or [str(exc)])[0][:160]
        ptx = nvrtc.getPTX(prog)
    finally:
        nvrtc.destroyProgram(prog)
    if isinstance(ptx, bytes):
        ptx = ptx.decode(errors="replace")
    body_ptx = ptx.split(".entry", 1)[-1]
    return len(FP64_PTX.findall(body_ptx))


def timing() -> dict:
    import cupy as cp

    src = r"""
extern "C" __global__ void chain32(float* y, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float a = y[i];
  for (int k = 0; k < iters; ++k) { a = a * 0.999f + 0.001f; a = a * 0.998f + 0.002f; }
  y[i] = a;
}
extern "C" __global__ void chain64(float* y, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float a = y[i];
  for (int k = 0; k < iters; ++k) { a = a * 0.999 + 0.001; a = a * 0.998 + 0.002; }
  y[i] = a;
}
extern "C" __global__ void exp32(float* y, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float a = y[i];
  for (int k = 0; k < iters; ++k) { a = expf(a * 0.5f) - 1.0f; }
  y[i] = a;
}
extern "C" __global__ void exp64(float* y, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float a = y[i];
  for (int k = 0; k < iters; ++k) { a = exp(a * 0.5) - 1.0; }
  y[i] = a;
}
"""
    mod = cp.RawModule(code=src)
    n, iters, block = 132 * 2048 * 8, 256, 256
    y = cp.random.rand(n, dtype=cp.float32)
    out = {}
    for name in ("chain32", "chain64", "exp32", "exp64"):
        fn = mod.get_function(name)
        for _ in range(3):
            fn((n // block,), (block,), (y, cp.int32(iters)))
        start, end = cp.cuda.Event(), cp.cuda.Event()
        times = []
        for _ in range(10):
            start.record()
            fn((n // block,), (block,), (y, cp.int32(iters)))
            end.record()
            end.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, end))
        times.sort()
        out[name] = {"median_ms": times[len(times) // 2], "min_ms": times[0]}
    out["config"] = {"elements": n, "iters": iters, "block": block}
    return out


def main() -> int:
    outdir = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    outdir.mkdir(parents=True, exist_ok=True)
    result: dict = {"env": {}}
    for cmd in (["nvcc", "--version"], ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"]):
        try:
            result["env"][cmd[0]] = subprocess.run(cmd, capture_output=True, text=True).stdout.strip().splitlines()[-1]
        except OSError as exc:
            result["env"][cmd[0]] = str(exc)
    try:
        import cupy

        result["env"]["cupy"] = cupy.__version__
        result["env"]["nvrtc"] = ".".join(map(str, cupy.cuda.nvrtc.getVersion()))
    except Exception as exc:  # noqa: BLE001
        result["env"]["cupy"] = repr(exc)
    from concurrent.futures import ThreadPoolExecutor

    def probe(item):
        name, body = item
        row = {"body": body}
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            if name not in STD_CASES:
                row["nvcc_no_header"] = nvcc_count(body, "", work)
            row["nvcc_cmath"] = nvcc_count(body, "#include <cmath>", work)
            row["nvcc_math_h"] = nvcc_count(body, "#include <math.h>", work)
        return name, row

    all_cases = {**CASES, **STD_CASES}
    with ThreadPoolExecutor(max_workers=14) as pool:
        rows = dict(pool.map(probe, all_cases.items()))
    for name, body in CASES.items():
        rows[name]["nvrtc_ptx_f64"] = nvrtc_count(body)
    for name, row in rows.items():
        print(name, {k: v for k, v in row.items() if k != "body"}, flush=True)
    result["cases"] = rows
    try:
        result["timing"] = timing()
        print("timing", result["timing"], flush=True)
    except Exception as exc:  # noqa: BLE001
        result["timing"] = repr(exc)
        print("timing failed", exc, flush=True)
    (outdir / "probe.json").write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
