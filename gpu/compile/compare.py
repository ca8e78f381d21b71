"""Compare `tritonify inspect`'s predictions with what the GPU reports for the same kernels.

    python gpu/compile/compare.py                       # planted kernels + templates, on the GPU machine
    python gpu/compile/compare.py --ncu                 # also ncu's launch__registers_per_thread and
                                                        # theoretical occupancy (planted kernels)
    python gpu/compile/compare.py --cpu                 # no GPU: checks the plumbing only (see below)

For each kernel launched on the GPU, every `CompiledKernel` in its JIT cache is read back: its
exact specialisation (signature, constants, divisibility attributes, num_warps, num_stages) from
`CompiledKernel.src`, and the driver's figures (`n_regs`, `n_spills` = local bytes / 4,
`metadata.shared`). The same specialisation is then compiled by the inspect worker (a child
process, the target-only driver, the GPU's own compute capability) and the figures compared:

    registers      predicted REG (cuobjdump on the worker's cubin)  == CompiledKernel.n_regs
    local words    predicted (STACK + LOCAL) / 4                      == CompiledKernel.n_spills
    shared         predicted Triton dynamic shared memory             == CompiledKernel.metadata.shared
    ptx            predicted PTX == the GPU's PTX, `.file` paths aside
    ncu            launch__registers_per_thread == predicted REG;
                   sm__maximum_warps_per_active_cycle_pct == predicted theoretical occupancy

Writes `results/compile_vs_<gpu>.json` and `.md` (date, GPU, driver, triton, torch) unless --out.

`--cpu` replaces the GPU by an in-process compile (`triton.compile` with the same target): it
checks that specialisations are read back and replayed correctly, not that the GPU agrees.

`--versus-ncu-fixture tests/ncu/fixtures/h200/raw.csv.gz` needs no GPU: it predicts the planted launches
and sets them beside the H200 capture already committed (compiled by another Triton version), see
results/compile_predicted_vs_h200_ncu_triton36.md.

"""
from __future__ import annotations

import argparse
import csv
import datetime
import io
import json
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLANTED = ROOT / "gpu" / "ncu" / "planted_triton.py"
TEMPLATES = ROOT / "kernels" / "templates"
NCU_METRICS = ("launch__registers_per_thread", "launch__shared_mem_per_block_dynamic",
               "sm__maximum_warps_per_active_cycle_pct", "launch__occupancy_limit_registers",
               "launch__occupancy_limit_shared_mem")


# ----------------------------------------------------------------------------------- read back
def unwrap(kernel):
    """The JITFunction under @autotune / @heuristics."""
    while not hasattr(kernel, "device_caches") and hasattr(kernel, "fn"):
        kernel = kernel.fn
    return kernel


def compiled_kernels(kernel) -> list:
    """Every CompiledKernel the JIT cache holds for `kernel`, on every device."""
    fn = unwrap(kernel)
    out = []
    for caches in getattr(fn, "device_caches", {}).values():
        out += [ck for ck in caches[0].values() if ck is not None]
    return out


def specialization_of(ck, arg_names: list[str]) -> dict:
    """What a launch compiled, as `inspect_kernel(specialization=...)` takes it."""
    src = ck.src
    signature = dict(src.signature)
    constexprs = {}
    for key, value in src.constants.items():
        if isinstance(key, tuple) and len(key) == 1:
            value = getattr(value, "value", value)
            if isinstance(value, (bool, int, float, str)) or value is None:
                constexprs[arg_names[key[0]]] = value
    divisible = sorted(arg_names[k[0]] for k, attrs in src.attrs.items()
                       if isinstance(k, tuple) and len(k) == 1
                       and any(a[0] == "tt.divisibility" and a[1] == 16 for a in attrs))
    options = {"num_warps": int(ck.metadata.num_warps), "num_stages": int(ck.metadata.num_stages)}
    if getattr(ck.metadata, "maxnreg", None):
        options["maxnreg"] = int(ck.metadata.maxnreg)
    if getattr(ck.metadata, "num_ctas", 1) not in (None, 1):
        options["num_ctas"] = int(ck.metadata.num_ctas)
    return {"signature": signature, "constexprs": constexprs, "divisible": divisible, "options": options}


def _loc_free(ptx: str) -> str:
    """PTX without what names the source file (the worker compiles a copy of the file elsewhere):
    `.file` directives, the `.debug_info` section and the `// file.py:LINE:COL` comments."""
    kept, in_debug_info = [], False
    for line in ptx.splitlines():
        stripped = line.strip()
        if stripped.startswith(".section") and ".debug_info" in stripped:
            in_debug_info = True          # its bytes spell the source folder's path
        elif in_debug_info and stripped == "}":
            in_debug_info = False
        elif not in_debug_info and not stripped.startswith(".file"):
            kept.append(line)
    return re.sub(r"[ \t]*//.*$", "", "\n".join(kept), flags=re.MULTILINE)


# ----------------------------------------------------------------------------------- predict
def predict(path: Path, kernel_name: str, spec: dict, arch: int) -> dict:
    from tritonify.tools.compile.service import inspect_kernel

    result = inspect_kernel(path.read_text(encoding="utf-8"), str(path), kernel_name, target=arch,
                            specialization=spec, listings=("ptx",), trusted=True, use_cache=False, timeout=600)
    if result.error or not result.variants or result.variants[0].error:
        err = result.error or (result.variants[0].error if result.variants else {"message": "no variant"})
        return {"error": err.get("message")}
    v = result.variants[0]
    r, o = v.resources, v.occupancy
    return {"registers": r.registers, "local_words": r.local_words, "spill_stores": r.spill_stores,
            "spill_loads": r.spill_loads, "shared": r.dynamic_shared, "occupancy_pct": o.percent,
            "limiter": o.limiter, "ptx": v.listings.get("ptx", "")}


def read_back(case: str, kernel, ck) -> tuple[dict, dict, str]:
    """What the GPU's compiled kernel says (in the thread that owns the CUDA context): the row so
    far, the specialisation to replay, and the GPU's PTX."""
    fn = unwrap(kernel)
    spec = specialization_of(ck, list(fn.arg_names))
    truth = {"registers": getattr(ck, "n_regs", None), "local_words": getattr(ck, "n_spills", None),
             "shared": int(ck.metadata.shared)}
    row = {"case": case, "kernel": fn.__name__, "constexprs": spec["constexprs"], "options": spec["options"],
           "divisible": spec["divisible"], "gpu": truth}
    return row, spec, ck.asm.get("ptx", "")


def judge(row: dict, pred: dict, gpu_ptx: str) -> dict:
    if "error" in pred:
        row.update(predicted={"error": pred["error"]}, match=False)
        return row
    row["same_ptx"] = _loc_free(pred.pop("ptx")) == _loc_free(gpu_ptx)
    row["predicted"] = pred
    truth = row["gpu"]
    row["match"] = all(truth[k] is None or truth[k] == pred[k] for k in ("registers", "local_words", "shared"))
    return row


def compare_one(case: str, path: Path, kernel, ck, arch: int) -> dict:
    row, spec, gpu_ptx = read_back(case, kernel, ck)
    return judge(row, predict(path, row["kernel"], spec, arch), gpu_ptx)


# ----------------------------------------------------------------------------------- cases
def planted_cases():
    """(case, path, kernel object, launch) for the planted and control kernels of the ncu issue."""
    sys.path.insert(0, str(PLANTED.parent))
    import planted_triton
    import run_cases

    for name, setup in run_cases._triton_cases().items():
        yield name, PLANTED, getattr(planted_triton, name), setup


def template_cases():
    """(case, path, kernel object, launch) for each template's contract, at its first shape."""
    from tritonify.kernels.bench.discovery import load_contracts
    from tritonify.kernels.bench.inputs import make_inputs

    for path in sorted(TEMPLATES.glob("*.py")):
        if path.name.startswith("_"):
            continue
        try:
            contracts = load_contracts(path)
        except Exception as exc:  # noqa: BLE001 - report and go on
            print(f"[skip] {path.name}: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        module = sys.modules.get(path.stem)
        for c in contracts:
            kernel = getattr(module, c.kernel or "", None)
            if kernel is None or not c.shapes:
                continue

            def setup(c=c):
                args = make_inputs(c, c.shapes[0], "cuda", seed=0)
                return lambda: c.entry(*args)

            yield f"template:{c.name}", path, kernel, setup


# ----------------------------------------------------------------------------------- ncu
def ncu_figures(case: str) -> dict:
    """ncu's launch metrics for the first launch of `case` (a planted kernel), by running this
    script's `--launch CASE` under ncu."""
    cmd = ["ncu", "--csv", "--page", "raw", "--metrics", ",".join(NCU_METRICS), "-k", f"regex:^{case}$", "-c", "1",
           sys.executable, str(Path(__file__).resolve()), "--launch", case]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    text = res.stdout[res.stdout.find('"ID"'):] if '"ID"' in res.stdout else ""
    rows = list(csv.reader(io.StringIO(text)))
    if len(rows) < 3:
        return {"error": (res.stderr or res.stdout)[-400:]}
    header, data = rows[0], rows[2]
    out = {}
    for metric in NCU_METRICS:
        if metric in header:
            value = data[header.index(metric)].replace(",", "")
            try:
                out[metric] = float(value)
            except ValueError:
                out[metric] = value
    return out


def launch_only(case: str) -> int:
    import torch

    for name, _, _, setup in planted_cases():
        if name == case:
            launch = setup()
            launch()
            torch.cuda.synchronize()
            return 0
    return 2


# ----------------------------------------------------------------------------------- cpu plumbing
def cpu_rows(arch: int) -> list:
    """No GPU: compile the planted kernels in-process with inspect's inferred plan, then replay each
    compiled specialisation through the worker. Checks the read-back, not the GPU."""
    import ast

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from tritonify.diagnostics.compile.resources import parse_res_usage
    from tritonify.diagnostics.compile.signature import build_plan, find_kernel
    from tritonify.kernels.bench.discovery import contract_dtype

    sys.path.insert(0, str(PLANTED.parent))
    import planted_triton

    tree = ast.parse(PLANTED.read_text())
    rows = []
    for name in ("control_copy", "control_softmax", "planted_c_uncoalesced", "control_matmul_fp16"):
        kernel, _, imports = find_kernel(tree, name)
        plan = build_plan(tree, kernel, imports, contract_dtype=contract_dtype(PLANTED, name))
        fn = getattr(planted_triton, name)
        constexprs = {k: v for k, v in plan.base_constexprs.items()}
        attrs = {(fn.arg_names.index(n),): [["tt.divisibility", 16]] for n in plan.divisible}
        ck = triton.compile(ASTSource(fn, plan.signature, constexprs, attrs), target=GPUTarget("cuda", arch, 32),
                            options={"num_warps": 4, "num_stages": 3})
        ck.n_regs = _cuobjdump_regs(ck, parse_res_usage)
        ck.n_spills = None
        rows.append(compare_one(f"cpu:{name}", PLANTED, fn, ck, arch))
    return rows


def _cuobjdump_regs(ck, parse_res_usage) -> int | None:
    import tempfile

    import triton

    tool = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(ck.asm["cubin"])
        f.flush()
        out = subprocess.run([str(tool), "-res-usage", f.name], capture_output=True, text=True, check=False).stdout
    return parse_res_usage(out, ck.metadata.name).get("REG")


# ----------------------------------------------------------------------------------- vs the committed ncu capture
# The launches of gpu/ncu/run_cases.py (values and dtypes), for predicting without a GPU.
_F32, _F16 = "fp32", "fp16"
NCU_CASE_LAUNCHES = {
    "control_copy": ({"BLOCK": 4096, "num_warps": 8, "n": 1 << 26}, _F32, {}),
    "control_softmax": ({"BLOCK": 4096, "num_warps": 8, "n_cols": 4096}, _F32, {}),
    "control_fma_poly": ({"ITERS": 256, "BLOCK": 1024, "num_warps": 4, "n": 1 << 24}, _F32, {}),
    "control_atomic_per_block": ({"BLOCK": 4096, "num_warps": 8, "n": 1 << 24}, _F32, {}),
    "control_matmul_fp16": ({"BM": 128, "BN": 128, "BK": 64, "num_warps": 8, "num_stages": 3,
                             "M": 4096, "N": 4096, "K": 4096}, _F16, {}),
    "planted_a_small_grid": ({"BLOCK": 1024, "num_warps": 4, "n": 1 << 24}, _F32, {}),
    "planted_b_imbalance": ({"BLOCK": 256, "num_warps": 4}, _F32, {"work_ptr": "*i32"}),
    "planted_c_uncoalesced": ({"STRIDE": 32, "BLOCK": 1024, "num_warps": 4, "n": 1 << 22}, _F32, {}),
    "planted_d_sparse_store": ({"STRIDE": 32, "BLOCK": 1024, "num_warps": 4, "n": 1 << 22}, _F32, {}),
    "planted_e_latency": ({"BLOCK": 128, "num_warps": 4, "steps": 256}, "i32", {}),
    "planted_f_fp32_dot_on_fma": ({"BM": 64, "BN": 64, "BK": 32, "num_warps": 4, "num_stages": 2,
                                   "M": 2048, "N": 2048, "K": 2048}, _F32, {}),
    "planted_g_atomics": ({"BLOCK": 1024, "num_warps": 4, "n": 1 << 21}, _F32, {}),
    "planted_i_barrier": ({"ITERS": 256, "BLOCK": 1024, "num_warps": 16, "n": 1 << 22}, _F32, {}),
    "planted_j_overstaged": ({"BM": 64, "BN": 64, "BK": 64, "num_warps": 4, "num_stages": 8,
                              "M": 4096, "N": 4096, "K": 4096}, _F16, {}),
    "planted_k_spill": ({"BLOCK": 16384, "num_warps": 1, "n_cols": 16384}, _F32, {}),
    "planted_l_fp64": ({"ITERS": 64, "BLOCK": 1024, "num_warps": 4, "n": 1 << 24}, _F32, {}),
    "planted_m_no_pipelining": ({"BM": 128, "BN": 128, "BK": 64, "num_warps": 8, "num_stages": 1,
                                 "M": 4096, "N": 4096, "K": 4096}, _F16, {}),
    "probe_n_masked_lanes": ({"ITERS": 128, "BLOCK": 1024, "num_warps": 4, "n": 1 << 24}, _F32, {}),
}


def versus_ncu_fixture(raw_csv: Path, only: set | None) -> tuple[dict, list]:
    """Predict each planted launch now (this machine's triton, sm_90, no GPU) and set the figures
    beside the committed H200 ncu capture (`tests/ncu/fixtures/h200/raw.csv.gz`). The capture's
    triton version is in its env.json: when it differs, registers need not agree."""
    import gzip

    from tritonify.tools.compile.service import inspect_kernel

    opener = gzip.open if raw_csv.suffix == ".gz" else open
    with opener(raw_csv, "rt") as f:
        rows = list(csv.reader(f))
    header = rows[0]
    measured = {r[header.index("Kernel Name")]: r for r in rows[2:]}
    text = PLANTED.read_text(encoding="utf-8")
    out = []
    for name, (values, dtype, arg_types) in NCU_CASE_LAUNCHES.items():
        if (only and name not in only) or name not in measured:
            continue
        result = inspect_kernel(text, str(PLANTED), name, target=90, overrides=values, dtype=dtype,
                                arg_types=arg_types, listings=(), trusted=True, timeout=600)
        v = result.variants[0] if result.variants else None
        m = measured[name]

        def metric(col, m=m):
            return float(m[header.index(col)].replace(",", ""))

        row = {"case": name, "kernel": name, "constexprs": {k: x for k, x in values.items() if k.isupper()},
               "options": {k: x for k, x in values.items() if k.startswith("num_")}, "divisible": [],
               "gpu": {"registers": int(metric("launch__registers_per_thread")), "local_words": None,
                       "shared": round(metric("launch__shared_mem_per_block_dynamic") * 1000)},
               "ncu": {"launch__registers_per_thread": int(metric("launch__registers_per_thread")),
                       "sm__maximum_warps_per_active_cycle_pct": metric("sm__maximum_warps_per_active_cycle_pct")}}
        if v is None or v.error or v.resources is None:
            row.update(predicted={"error": (result.error or (v.error if v else {}) or {}).get("message")}, match=False)
        else:
            r, o = v.resources, v.occupancy
            row["predicted"] = {"registers": r.registers, "local_words": r.local_words, "spill_stores": r.spill_stores,
                                "spill_loads": r.spill_loads, "shared": r.dynamic_shared, "occupancy_pct": o.percent,
                                "limiter": o.limiter}
            row["match"] = (r.registers == row["gpu"]["registers"] and r.dynamic_shared == row["gpu"]["shared"])
        out.append(row)
        print(f"{name}: pred {row['predicted'].get('registers')} H200 {row['gpu']['registers']}", file=sys.stderr)
    env_file = raw_csv.parent / "env.json"
    env = json.loads(env_file.read_text()) if env_file.is_file() else {}
    return env, out


# ----------------------------------------------------------------------------------- report
def markdown(meta: dict, rows: list) -> str:
    lines = [f"# inspect predictions vs {meta['gpu']}", "",
             (f"{meta['date']}, triton {meta['triton']}, torch {meta['torch']}, driver {meta.get('driver')}, "
              f"target sm_{meta['arch']}. Generated by `gpu/compile/compare.py`."), "",
             ("| case | kernel | constexprs / options | regs pred / GPU / ncu | local words pred / n_spills | "
              "smem pred / GPU | occupancy pred / ncu | same PTX | match |"),
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        p, g, n = r.get("predicted", {}), r["gpu"], r.get("ncu", {})
        cfg = ", ".join(f"{k}={v}" for k, v in {**r["constexprs"], **r["options"]}.items())
        lines.append(f"| {r['case']} | {r['kernel']} | {cfg} | {p.get('registers')} / {g['registers']} / "
                     f"{n.get('launch__registers_per_thread', '-')} | {p.get('local_words')} / {g['local_words']} | "
                     f"{p.get('shared')} / {g['shared']} | {p.get('occupancy_pct')} / "
                     f"{n.get('sm__maximum_warps_per_active_cycle_pct', '-')} | {r.get('same_ptx')} | "
                     f"{'yes' if r['match'] else 'NO'} |")
    agree = sum(1 for r in rows if r["match"])
    lines += ["", f"{agree} of {len(rows)} compiled kernels agree on registers, local memory and shared memory."]
    ok = [r for r in rows if "registers" in r.get("predicted", {})]
    regs = sum(1 for r in ok if r["predicted"]["registers"] == r["gpu"]["registers"])
    smem = sum(1 for r in ok if r["predicted"]["shared"] == r["gpu"]["shared"])
    with_ncu = [r for r in ok if "sm__maximum_warps_per_active_cycle_pct" in r.get("ncu", {})]
    occ = sum(1 for r in with_ncu
              if abs(r["predicted"]["occupancy_pct"] - r["ncu"]["sm__maximum_warps_per_active_cycle_pct"]) < 0.01)
    lines.append(f"Registers equal: {regs}/{len(ok)}; Triton shared memory equal: {smem}/{len(ok)}"
                 + (f"; theoretical occupancy equal to ncu's: {occ}/{len(with_ncu)}." if with_ncu else "."))
    with_ncu_regs = [r for r in ok if "launch__registers_per_thread" in r.get("ncu", {})]
    if with_ncu_regs:
        same = [r for r in with_ncu_regs if r["ncu"]["launch__registers_per_thread"] == r["predicted"]["registers"]]
        floor = [r for r in with_ncu_regs if r not in same and r["predicted"]["registers"] < 16
                 and r["ncu"]["launch__registers_per_thread"] == 16]
        lines.append(f"ncu's launch__registers_per_thread equals the predicted count in {len(same)}/{len(with_ncu_regs)}"
                     + (f"; in {len(floor)} more it reads 16 where the compiler used "
                        f"{', '.join(str(r['predicted']['registers']) for r in floor)}: ncu reports the allocation, "
                        "which has a floor of 16 registers per thread, while `CompiledKernel.n_regs` (and the "
                        "prediction) is the compiler's count. Below 16, registers never limit occupancy, so the "
                        "occupancy figures agree there too." if floor else "."))
    if meta.get("note"):
        lines += ["", meta["note"]]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="comma-separated case names")
    ap.add_argument("--no-templates", action="store_true")
    ap.add_argument("--ncu", action="store_true", help="also read ncu's launch metrics (planted kernels)")
    ap.add_argument("--cpu", action="store_true", help="no GPU: check the plumbing with in-process compiles")
    ap.add_argument("--arch", type=int, default=90, help="with --cpu: the target (default 90)")
    ap.add_argument("--out", help="output stem (default results/compile_vs_<gpu>)")
    ap.add_argument("--versus-ncu-fixture", metavar="RAW_CSV",
                    help="no GPU: predict the planted launches and compare with a committed ncu raw CSV")
    ap.add_argument("--launch", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    if args.launch:
        return launch_only(args.launch)

    import torch
    import triton

    meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "triton": triton.__version__, "torch": torch.__version__, "python": platform.python_version()}
    if args.versus_ncu_fixture:
        env, rows = versus_ncu_fixture(Path(args.versus_ncu_fixture), set(args.only.split(",")) if args.only else None)
        meta["note"] = ("This is NOT the same-version check: the capture was compiled by the triton in its env.json, "
                        "the predictions by this machine's. Shared memory and the occupancy arithmetic carry over; "
                        "register counts move by a few between Triton versions. The same-version check is "
                        "`python gpu/compile/compare.py --ncu` on the GPU machine.")
        meta.update(gpu=f"{env.get('gpu', '?')} ncu capture of {env.get('date_utc', '?')} (triton {env.get('triton', '?')}, "
                        f"torch {env.get('torch', '?')}) vs predictions on a CPU box", arch=90, driver=env.get("driver"))
    elif args.cpu:
        meta.update(gpu="cpu (plumbing check)", arch=args.arch)
        rows = cpu_rows(args.arch)
    else:
        if not torch.cuda.is_available():
            print("no GPU: run on the device machine, or pass --cpu for the plumbing check", file=sys.stderr)
            return 2
        major, minor = torch.cuda.get_device_capability()
        arch = major * 10 + minor
        meta.update(gpu=torch.cuda.get_device_name(), arch=arch, driver=_driver_version())
        only = set(args.only.split(",")) if args.only else None
        cases = list(planted_cases()) + ([] if args.no_templates else list(template_cases()))
        launched = []
        for case, path, kernel, setup in cases:
            if only and case not in only:
                continue
            try:
                launch = setup()
                launch()
                torch.cuda.synchronize()
            except Exception as exc:  # noqa: BLE001 - one bad case does not cost the run
                print(f"[skip] {case}: {type(exc).__name__}: {exc}", file=sys.stderr)
                continue
            launched += [(case, path, *read_back(case, kernel, ck)) for ck in compiled_kernels(kernel)]
        # the predictions are child-process compiles (CPU): eight at a time; the ncu runs use the
        # GPU, one at a time, beside them
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(8) as compiles, ThreadPoolExecutor(1) as profiles:
            predicted = [compiles.submit(predict, path, row["kernel"], spec, arch) for _, path, row, spec, _ in launched]
            measured = {case: profiles.submit(ncu_figures, case) for case, path, *_ in launched
                        if args.ncu and path == PLANTED}
            rows = []
            for (case, path, row, spec, gpu_ptx), future in zip(launched, predicted):
                row = judge(row, future.result(), gpu_ptx)
                if case in measured:
                    row["ncu"] = measured[case].result()
                rows.append(row)
                print(f"{case}: {row['kernel']} pred {row.get('predicted', {}).get('registers')} "
                      f"gpu {row['gpu']['registers']} {'ok' if row['match'] else 'MISMATCH'}", file=sys.stderr)
    stem = Path(args.out) if args.out else ROOT / "results" / f"compile_vs_{_slug(meta['gpu'])}"
    stem.parent.mkdir(parents=True, exist_ok=True)
    stem.with_suffix(".json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2, default=repr))
    stem.with_suffix(".md").write_text(markdown(meta, rows))
    print(f"wrote {stem.with_suffix('.md')}", file=sys.stderr)
    return 0 if rows and all(r["match"] for r in rows) else 1


def _driver_version() -> str | None:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30, check=False).stdout.strip()
        return out.splitlines()[0] if out else None
    except (OSError, subprocess.TimeoutExpired):
        return None


def _slug(name: str) -> str:
    m = re.search(r"(H200|H100|A100|B200|L4|cpu)", name, re.IGNORECASE)
    return (m.group(1) if m else re.sub(r"\W+", "_", name)).lower()


if __name__ == "__main__":
    sys.exit(main())
