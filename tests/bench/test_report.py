"""Reports: pandas table, HTML with method/GPU/summary, PNG speedup chart, terminal text."""
from __future__ import annotations

import pytest
from tritonify.kernels.bench import report

pytest.importorskip("pandas")
pytest.importorskip("matplotlib")


def _result(gpu=True):
    timing = lambda ms: {"p20_ms": ms * 0.9, "p50_ms": ms, "p80_ms": ms * 1.1, "method": "do_bench",
                         "noisy": False, "gpu_measurement": gpu, "note": ""}
    shapes = []
    for label, k, e, c in (("1024x1024", 0.1, 0.2, 0.12), ("4096x4096", 1.0, 1.8, 1.1)):
        shapes.append({"label": label, "shape": [1, 1], "speedup": {"eager": e / k, "compile": c / k},
                       "results": {"kernel": {"status": "ok", "timing": timing(k), "gbps": 3000.0, "pct_copy_bw": 70.0},
                                   "eager": {"status": "ok", "timing": timing(e), "gbps": 1500.0},
                                   "compile": {"status": "ok", "timing": timing(c), "gbps": 2700.0}}})
    return {"target": "k.py::k", "contract": "k", "status": "ok", "summary": "1.000 ms, 3.00 TB/s", "shapes": shapes,
            "method": "Timing: triton.testing.do_bench ...", "gpu": {"name": "NVIDIA H200", "driver": "580"} if gpu else {},
            "versions": {"torch": "2.11"}, "ceilings": {"copy_gbps": 4300.0, "bf16_tflops": 780.0, "cached": True,
                                                        "measured_at": "now"}, "baselines": {"liger": "no such op"}}


def test_table_has_one_row_per_shape_and_impl_with_speedups():
    df = report.table(_result())
    assert list(df.columns) == report.COLUMNS
    assert len(df) == 6
    row = df[(df["shape"] == "4096x4096") & (df["impl"] == "eager")].iloc[0]
    assert row["kernel_speedup"] == pytest.approx(1.8)
    assert df[df["impl"] == "kernel"]["kernel_speedup"].isna().all()


def test_html_and_png_are_written(tmp_path):
    paths = report.write(_result(), tmp_path, name="my kernel")
    html = (tmp_path / "my_kernel.html").read_text()
    assert paths["html"].endswith("my_kernel.html") and paths["png"].endswith("my_kernel.png")
    assert "NVIDIA H200" in html and "do_bench" in html and "1.000 ms, 3.00 TB/s" in html and "my_kernel.png" in html
    assert (tmp_path / "my_kernel.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_nothing_timed_means_no_chart(tmp_path):
    result = _result()
    for s in result["shapes"]:
        s["speedup"] = {}
    assert report.chart(result, tmp_path / "x.png") is None
    assert report.write(result, tmp_path)["png"] is None


def test_text_states_method_ceilings_and_skipped_baselines():
    result = _result()
    result["gpu_end"] = {"sm_clock_mhz": 1980, "mem_clock_mhz": 3201, "temperature_c": 51, "power_w": 400.0}
    out = report.text(result)
    assert "GPU at the end: SM 1980 MHz" in out
    assert "method:" in out and "ceilings: copy 4300 GB/s, bf16 matmul 780 TFLOP/s" in out
    assert "baseline liger skipped: no such op" in out
    assert "NOT GPU measurements" in report.text(_result(gpu=False))
