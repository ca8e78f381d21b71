"""Facts the default set's newer findings rest on, checked under the Triton in use (4 without a GPU).

    python benchmarks/freshcode/probe_certain.py      (torch and triton; 1-3 and 5 need a GPU; writes nothing)

1. A plain literal imported from another module (`from consts import LOG2E`, `LOG2E = 1.44...` there)
   and read in a kernel: TRI020 says NameError "Cannot access global variable" (vLLM's deepencoder).
2. `tl.float32(0.0)`: TRI026 says TypeError "'dtype' object is not callable" (Liger's multi-block softmax).
3. `@triton.autotune(key=["num_elements"])` on a kernel with no such argument: TRI053 says Triton up
   to 3.8 drops the name (one tuned config serves every size); 3.9 raises ValueError at import.
4. The same three lists of argument names at decoration: Triton 3.9 raises ValueError for a name that
   is no argument (`key`, `reset_to_zero`, `restore_value`).
5. `reset_to_zero=` / `restore_value=` naming no argument: TRI053 says KeyError once configs are benchmarked (<= 3.8).
Recorded output: results/freshcode/probe_certain_h200.txt.
"""
import sys
import tempfile
from pathlib import Path

import torch
import triton
import triton.language as tl

print("torch", torch.__version__, "triton", triton.__version__,
      torch.cuda.get_device_name() if torch.cuda.is_available() else "no GPU")
consts = Path(tempfile.mkdtemp()) / "probe_consts.py"
consts.write_text("LOG2E = 1.4426950408889634\n")
sys.path.insert(0, str(consts.parent))
from probe_consts import LOG2E  # noqa: E402


@triton.jit
def imported_global_kernel(x_ptr, n, B: tl.constexpr):
    o = tl.arange(0, B)
    tl.store(x_ptr + o, tl.load(x_ptr + o, mask=o < n) * LOG2E, mask=o < n)


@triton.jit
def dtype_call_kernel(x_ptr, B: tl.constexpr):
    acc = tl.float32(0.0)
    o = tl.arange(0, B)
    tl.store(x_ptr + o, tl.load(x_ptr + o) + acc)


def stale_key():
    @triton.autotune(configs=[triton.Config({"B": 64}), triton.Config({"B": 128})], key=["num_elements"])
    @triton.jit
    def stale_key_kernel(x_ptr, n, B: tl.constexpr):
        o = tl.program_id(0) * B + tl.arange(0, B)
        tl.store(x_ptr + o, tl.load(x_ptr + o, mask=o < n) * 2, mask=o < n)
    return stale_key_kernel


def decorate_with_unknown_names():
    """4. `key`, `reset_to_zero`, `restore_value` naming no argument, at decoration (no GPU needed)."""
    for arg in ("key", "reset_to_zero", "restore_value"):
        kw = {"key": ["n"], arg: ["num_elements"] if arg == "key" else ["out"]}
        try:
            @triton.autotune(configs=[triton.Config({"B": 64}), triton.Config({"B": 128})], **kw)
            @triton.jit
            def unknown_names_kernel(x_ptr, y_ptr, n, B: tl.constexpr):
                pass
            print(f"{arg}={kw[arg]} at decoration -> accepted")
        except Exception as e:  # the autotuner's own check is the measurement
            print(f"{arg}={kw[arg]} at decoration ->", type(e).__name__, str(e)[:110])


decorate_with_unknown_names()
if not torch.cuda.is_available():
    sys.exit(0)
x = torch.randn(4096, device="cuda")
for name, launch in [("imported plain LOG2E", lambda: imported_global_kernel[(1,)](x, 100, B=128)),
                     ("tl.float32(0.0)", lambda: dtype_call_kernel[(1,)](x, B=128))]:
    try:
        launch()
        torch.cuda.synchronize()
        print(name, "-> compiled and ran")
    except Exception as e:  # the compiler's error is the measurement
        print(name, "->", type(e).__name__, str(e).strip().splitlines()[-1][:200])
try:
    kernel = stale_key()
    for n in (100, 1000, 4096):
        kernel[lambda m: (triton.cdiv(n, m["B"]),)](x, n)
    torch.cuda.synchronize()
    print("key=['num_elements'] -> ran 3 sizes; tuned entries cached:", len(kernel.cache), list(kernel.cache))
except Exception as e:
    print("key=['num_elements'] ->", type(e).__name__, str(e)[:200])


def unknown_reset_names():
    """5. `reset_to_zero` / `restore_value` naming no argument, at the first launch (one and two configs)."""
    y = torch.zeros(4096, device="cuda")
    for arg in ("reset_to_zero", "restore_value"):
        for n_configs in (1, 2):
            configs = [triton.Config({"B": 64}), triton.Config({"B": 128})][:n_configs]

            @triton.autotune(configs=configs, key=["n"], **{arg: ["out"]})
            @triton.jit
            def reset_names_kernel(x_ptr, y_ptr, n, B: tl.constexpr):
                o = tl.program_id(0) * B + tl.arange(0, B)
                tl.atomic_add(y_ptr + o, tl.load(x_ptr + o, mask=o < n), mask=o < n)
            try:
                reset_names_kernel[lambda m: (triton.cdiv(1000, m["B"]),)](x, y, 1000)
                torch.cuda.synchronize()
                print(f"{arg}=['out'] (not an argument), {n_configs} config(s): ran")
            except Exception as e:  # the autotuner's failure is the measurement
                print(f"{arg}=['out'] (not an argument), {n_configs} config(s):", type(e).__name__, str(e)[:120])


unknown_reset_names()
