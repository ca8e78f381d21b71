"""Turn what `run_on_h200.sh` brought back into results/bench_<name>.md (+ the JSON beside it).

    python gpu/bench/write_results.py DEVICE_OUT_DIR results/bench_rmsnorm_h200

Nothing is measured here: the tables are rendered from the device's JSON with the same report code the
CLI uses, and the device's own table output is quoted as it was printed.
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from tritonify.kernels.bench import report


def markdown(result: dict, device_info: str, table_txt: str, pytest_log: str) -> str:
    gpu, ver, ceil = result["gpu"], result["versions"], result["ceilings"]
    lines = [
        f"# `tritonify bench` on {gpu['name']}: {result['contract']} (examples/bench/rmsnorm.py)",
        "",
        f"Measured {ceil['measured_at'][:10]} on one {gpu['name']} (driver {gpu.get('driver')}, "
        f"{gpu.get('sms')} SMs, L2 {gpu.get('l2_bytes', 0) / 2**20:.0f} MiB), "
        f"python {ver['python']}, torch {ver['torch']} (CUDA {ver.get('cuda')}), triton {ver['triton']}, "
        f"liger-kernel {ver['liger-kernel']}, nvidia-ml-py {ver.get('nvidia-ml-py')}.",
        f"Clocks when the run started: SM {gpu.get('sm_clock_mhz')} MHz (max {gpu.get('max_sm_clock_mhz')}), "
        f"memory {gpu.get('mem_clock_mhz')} MHz, {gpu.get('temperature_c')} C, {gpu.get('power_w')} W "
        "(the card idles at 345 MHz and clocks up under load; clocks were left as found).",
        "",
        f"Ceilings (measured in this run, do_bench medians): copy bandwidth **{ceil['copy_gbps']:.0f} GB/s** "
        f"(1 GiB bf16 device-to-device copy, read + write), bf16 matmul **{ceil['bf16_tflops']:.0f} TFLOP/s** "
        "(8192^3 torch.matmul, random data).",
        "",
        f"Summary (the code lens line): `{result['summary']}`",
        "",
        "| shape | impl | correct (max abs err) | median ms | p20-p80 ms | GB/s | % copy BW | kernel speedup | timing | noisy |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for s in result["shapes"]:
        k_ms = s["results"]["kernel"]["timing"]["p50_ms"]
        for impl, r in s["results"].items():
            t = r["timing"]
            speed = "-" if impl == "kernel" else f"{t['p50_ms'] / k_ms:.2f}x"
            lines.append(
                f"| {s['label']} | {impl} | {r['correct']} ({r['check']['max_abs_err']:.3g}) | {t['p50_ms']:.4f} | "
                f"{t['p20_ms']:.4f}-{t['p80_ms']:.4f} | {r['gbps']:.0f} | {r['pct_copy_bw']:.1f}% | {speed} | "
                f"{t['method']} x{t['calls_per_sample']} | {'yes' if t['noisy'] else 'no'} |")
    lines += ["", "Method, as the report states it:", "", "```", result["method"], "```", "",
              "## The device's own output", "", "`device_info.txt`:", "", "```", device_info.strip(), "```", "",
              "GPU tests (`pytest -m gpu tests/bench`):", "", "```", pytest_log.strip().splitlines()[-1], "```", "",
              "`tritonify bench examples/bench/rmsnorm.py::rmsnorm_kernel --baselines eager,compile,liger` "
              "(a second process; ceilings from the cache the first wrote):", "", "```",
              "\n".join(l for l in table_txt.strip().splitlines() if not l.startswith("[")), "```", ""]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    src, dest = Path(argv[0]), Path(argv[1])
    result = json.loads((src / "bench_rmsnorm_gpu.json").read_text())
    md = markdown(result, (src / "device_info.txt").read_text(), (src / "bench_table.txt").read_text(),
                  (src / "pytest_gpu.log").read_text())
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.with_suffix(".md").write_text(md)
    shutil.copy(src / "bench_rmsnorm_gpu.json", dest.with_suffix(".json"))
    report.write(result, dest.parent, name=dest.name)  # HTML + PNG from the same JSON
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
