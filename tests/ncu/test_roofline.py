"""The roofline point of each launch, from the counters captured on the H200 (tests/ncu/fixtures/h200).

The planted kernels are known by construction (a copy, an FP64 chain, an FP32 polynomial, a
tensor-core matmul), so the point must land where the kernel's code says it should; the peaks are
checked against ncu's own derived peak columns and against the H200's published figures.
"""
import json
import sys

import pytest

from tritonify.diagnostics.ncu.raw_page import Launch, parse_raw
from tritonify.diagnostics.ncu.roofline import roofline_point
from tritonify.cli.main import main

from .helpers import FIXTURES, all_diagnoses, text


def launches(name: str = "raw_base.csv") -> dict[str, Launch]:
    return {launch.kernel: launch for launch in parse_raw(text(name))}


BASE = launches()


def point(kernel: str, page: str = "raw_base.csv"):
    return roofline_point((BASE if page == "raw_base.csv" else launches(page))[kernel])


# ---- the roofs ------------------------------------------------------------------------------

def test_peaks_are_the_h200s():
    """H200 SXM: FP32 ~67 TFLOP/s, FP64 ~34 TFLOP/s (non-tensor), DRAM 4.8 TB/s, at the clocks of the run."""
    r = point("control_copy")
    assert 60e12 < r.peak_flops["fp32"] < 70e12
    assert 30e12 < r.peak_flops["fp64"] < 35e12
    assert r.peak_flops["fp32"] == pytest.approx(2 * r.peak_flops["fp64"])
    assert 4.7e12 < r.peak_bytes_per_s < 4.9e12
    assert r.ridge_point == pytest.approx(r.peak_flops["fp32"] / r.peak_bytes_per_s)
    assert r.peak_flops["fp16"] is None       # the HFMA counters are not in the targeted sections


def test_peak_flops_agree_with_ncus_own_derived_peak_column():
    """ncu's roofline section writes the FP32 peak as FLOP/cycle (`derived__sm__..._x2`): ours, made
    from the instruction peak, must be that times the SM clock."""
    launch = BASE["control_fma_poly"]
    derived = launch.get("derived__sm__sass_thread_inst_executed_op_ffma_pred_on_x2")
    clock = launch.get("sm__cycles_elapsed.avg.per_second")
    assert roofline_point(launch).peak_flops["fp32"] == pytest.approx(derived * clock)


def test_dram_share_agrees_with_ncus_dram_throughput():
    """Our bytes/s over our DRAM peak is the % ncu reports as gpu__dram_throughput, for every launch."""
    for launch in BASE.values():
        r = roofline_point(launch)
        ncu_pct = launch.get("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed")
        assert 100 * r.achieved_bytes_per_s / r.peak_bytes_per_s == pytest.approx(ncu_pct, abs=1.0), launch.kernel


def test_fp16_peak_is_read_when_the_capture_has_it():
    """The --set full capture holds the HFMA peak: FP16 on the FMA pipe runs at the FP32 rate per
    thread instruction (ncu's half-precision roofline counts an HFMA as two FLOPs too)."""
    (launch,) = parse_raw(text("raw_full_planted_c_uncoalesced.csv"))
    r = roofline_point(launch)
    assert r.peak_flops["fp16"] == pytest.approx(r.peak_flops["fp32"])
    assert r.flops_by_precision["fp16"] == 0.0 and r.precision == "fp32"


# ---- the point ------------------------------------------------------------------------------

def test_copy_is_memory_bound_below_the_dram_roof():
    r = point("control_copy")
    assert r.bound == "memory" and r.precision == "fp32"
    assert 3.0e12 < r.achieved_bytes_per_s < 4.8e12
    assert r.intensity_flop_per_byte < 1 < r.ridge_point
    assert r.pct_of_roof == pytest.approx(100 * r.achieved_bytes_per_s / r.peak_bytes_per_s)
    assert "memory-bound" in r.summary() and "GB/s" in r.summary()


def test_fp64_kernel_is_fp64_dominated_and_near_the_fp64_roof():
    r = point("planted_l_fp64")
    assert r.precision == "fp64" and r.bound == "compute"
    assert r.achieved_flops == r.flops_by_precision["fp64"] and r.flops_by_precision["fp32"] == 0
    assert r.intensity_flop_per_byte > r.peak_flops["fp64"] / r.peak_bytes_per_s
    assert r.ridge_point == pytest.approx(r.peak_flops["fp64"] / r.peak_bytes_per_s)
    assert 80 < r.pct_of_roof <= 100
    assert point("cuda_planted_l_fp64").precision == "fp64"


def test_fp32_polynomial_is_compute_bound():
    r = point("control_fma_poly")
    assert r.precision == "fp32" and r.bound == "compute"
    assert r.intensity_flop_per_byte > r.ridge_point
    assert 80 < r.pct_of_roof <= 100


def test_tensor_core_matmul_reports_the_tensor_pipe_and_says_why():
    r = point("control_matmul_fp16")
    assert r.precision == "tensor" and r.bound == "compute"
    assert r.tensor_pipe_pct > 50 and r.pct_of_roof == pytest.approx(r.tensor_pipe_pct)
    assert "not counted in FLOPs" in r.note
    # a copy with an idle tensor pipe carries no such note
    assert point("control_copy").note == ""


def test_counts_over_duration_give_the_rate_the_per_cycle_counters_give():
    """Where only `.sum` counts were captured, counts / duration stand in for the per-cycle rate."""
    launch = BASE["planted_l_fp64"]
    by_rate = roofline_point(launch).flops_by_precision["fp64"]
    counts_only = Launch(launch.id, launch.kernel, metrics={k: v for k, v in launch.metrics.items()
                                                            if not k.endswith(".per_cycle_elapsed")})
    assert roofline_point(counts_only).flops_by_precision["fp64"] == pytest.approx(by_rate, rel=1e-3)


def test_the_export_units_do_not_move_the_point():
    """raw.csv is the same capture exported without --print-units base (Gbyte/s, Ghz, Kbyte/cycle)."""
    scaled = launches("raw.csv")
    for kernel in ("control_copy", "planted_l_fp64", "control_fma_poly"):
        a, b = roofline_point(BASE[kernel]), roofline_point(scaled[kernel])
        assert (a.bound, a.precision) == (b.bound, b.precision)
        assert b.intensity_flop_per_byte == pytest.approx(a.intensity_flop_per_byte, rel=1e-3)
        assert b.peak_bytes_per_s == pytest.approx(a.peak_bytes_per_s, rel=1e-3)


# ---- what is missing ------------------------------------------------------------------------

def test_lean_capture_without_the_roofline_section_says_what_is_missing():
    r = point("control_copy", "raw_lean.csv")
    assert r.bound is None and r.pct_of_roof is None and r.intensity_flop_per_byte is None
    assert r.achieved_bytes_per_s > 3e12            # what the capture does have is kept
    assert "dram__bytes.sum.peak_sustained" in r.reason and "SpeedOfLight_RooflineChart" in r.reason
    d = r.to_dict()
    assert d["available"] is False and d["summary"].startswith("no roofline data: ")


def test_a_launch_without_metrics_gives_reasons_not_errors():
    r = roofline_point(Launch("0", "k"))
    assert r.bound is None and r.reason and "DRAM bytes" in r.reason and "FP instruction counters" in r.reason
    json.dumps(r.to_dict())


def test_counters_and_peaks_of_different_precisions_do_not_make_a_point():
    """FP32 peak without FP32 counters, FP64 counters without the FP64 peak: no precision is whole."""
    launch = BASE["planted_l_fp64"]
    drop = ("smsp__sass_thread_inst_executed_op_f", "sm__sass_thread_inst_executed_op_dfma", "derived__sm__sass_thread_inst_executed_op_dfma")
    mixed = Launch(launch.id, launch.kernel, metrics={k: v for k, v in launch.metrics.items() if not k.startswith(drop)})
    r = roofline_point(mixed)
    assert r.flops_by_precision["fp32"] is None and r.peak_flops["fp64"] is None
    assert r.bound is None and "no precision has both" in r.reason


def test_no_dram_traffic_is_compute_bound_without_dividing_by_zero():
    launch = BASE["control_fma_poly"]
    quiet = Launch(launch.id, launch.kernel, metrics={**launch.metrics, "dram__bytes.sum.per_second": 0.0})
    r = roofline_point(quiet)
    assert r.bound == "compute" and r.intensity_flop_per_byte is None and "no DRAM traffic" in r.note
    assert r.pct_of_roof == pytest.approx(100 * r.achieved_flops / r.peak_flops["fp32"])


def test_no_fp_work_sits_at_zero_intensity():
    r = point("planted_g_atomics")
    assert r.achieved_flops == 0 and r.intensity_flop_per_byte == 0 and r.bound == "memory"
    assert "no floating-point" in r.note


# ---- in the JSON ----------------------------------------------------------------------------

def test_every_diagnosis_carries_its_roofline():
    for d in all_diagnoses():
        roof = d.to_dict()["roofline"]
        assert roof["available"] is True and roof["bound"] in ("memory", "compute"), d.launch.kernel
        assert set(roof["peak_flops"]) == {"fp32", "fp64", "fp16"}


def test_diagnose_json_and_text_carry_the_roofline(capsys):
    main(["diagnose", str(FIXTURES / "raw_base.csv.gz"), "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    copy = next(d for d in data if d["kernel"] == "control_copy")
    assert copy["roofline"]["bound"] == "memory" and copy["roofline"]["precision"] == "fp32"
    main(["diagnose", str(FIXTURES / "raw_base.csv.gz")])
    out = capsys.readouterr().out
    assert "roofline: " in out and "fp64), " in out


def test_profile_json_carries_the_roofline(monkeypatch, tmp_path, capsys):
    from .test_profile import FAKE, H200

    monkeypatch.setenv("TRITONIFY_NCU", str(FAKE))
    monkeypatch.setattr("tritonify.tools.ncu.profile_run.gpu_info", lambda: dict(H200))
    monkeypatch.chdir(tmp_path)
    main(["profile", f"{FIXTURES / 'planted_triton.py'}::planted_c_uncoalesced", "--format", "json",
          "-o", str(tmp_path / "x"), "--", sys.executable, "-c", "pass"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "tritonify.profile/1"
    roof = doc["launches"][0]["roofline"]
    assert roof["bound"] == "memory" and roof["intensity_flop_per_byte"] < roof["ridge_point"]


def test_any_subset_of_the_counters_gives_a_point_or_a_reason():
    """Whatever a capture lacks, the result is a complete point or a reason, never an exception."""
    import random

    rng = random.Random(4)
    for kernel in ("control_copy", "planted_l_fp64", "control_matmul_fp16", "planted_g_atomics"):
        launch = BASE[kernel]
        names = [k for k in launch.metrics if k.startswith(("smsp__sass_thread_inst", "sm__sass_thread_inst", "derived__",
                                                            "dram__", "sm__cycles", "smsp__cycles", "sm__pipe_tensor",
                                                            "gpu__time_duration", "gpu__dram", "launch__sm_count"))]
        for _ in range(60):
            kept = {k: v for k, v in launch.metrics.items() if k not in names or rng.random() < 0.5}
            r = roofline_point(Launch(launch.id, kernel, metrics=kept))
            assert (r.bound is not None) != (r.reason is not None), (kernel, r)
            json.dumps(r.to_dict())
