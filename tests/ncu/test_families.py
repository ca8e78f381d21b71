"""A profiled convolution gets its family's fix for C (use NHWC) and A / N (pad the channels)."""
import pytest

from tritonify.diagnostics.ncu.diagnose import diagnose_launch
from tritonify.diagnostics.ncu.families import family_fix, family_of
from tritonify.diagnostics.ncu.raw_page import Launch

from tests.ncu.test_detectors import BENIGN


def _hits(kernel, **metrics):
    launch = Launch(id="0", kernel=kernel, grid=(1024, 1, 1), block=(128, 1, 1), metrics={**BENIGN, **metrics})
    return {h.pattern.letter: h for h in diagnose_launch(launch).hits}


UNCOALESCED = {"smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio": 4.0}
SMALL_GRID = {"launch__grid_size": 40}
DIVERGENT = {"smsp__average_thread_inst_executed_per_inst_executed.ratio": 6.0}


@pytest.mark.parametrize("kernel", ["conv2d_forward_kernel", "_conv2d_fwd_kernel",
                                    "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc",
                                    "implicit_convolve_sgemm", "_causal_conv1d_bwd_kernel"])
def test_a_convolution_gets_the_family_fix(kernel):
    hits = _hits(kernel, **UNCOALESCED, **SMALL_GRID, **DIVERGENT)
    assert "NHWC" in hits["C"].fix_text and hits["C"].to_dict()["fix"] == hits["C"].fix_text
    assert "pad the channels" in hits["A"].fix_text
    assert "pad the channels" in hits["N"].fix_text


def test_other_kernels_keep_the_pattern_fix():
    hits = _hits("_rms_norm_fwd_kernel", **UNCOALESCED, **SMALL_GRID)
    assert hits["C"].fix_text == hits["C"].pattern.fix and "NHWC" not in hits["C"].fix_text
    assert hits["A"].fix_text == hits["A"].pattern.fix


def test_only_c_a_and_n_have_a_convolution_fix():
    assert family_of("conv2d_kernel") == "convolution" and family_of("softmax_kernel") is None and family_of(None) is None
    assert family_fix("E", "conv2d_kernel") is None and family_fix("c", "conv2d_kernel") is not None
