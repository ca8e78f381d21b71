"""The occupancy calculator against hand-worked cases and the H200 figures of the ncu pages."""
import pytest
from tritonify.diagnostics.compile.occupancy import theoretical_occupancy
from tritonify.diagnostics.compile.targets import ARCHS, TargetError, parse_target

SM90 = ARCHS[90]


def test_register_limited_matmul():
    # 115 registers -> 120 allocated (8 per thread units); 3840 per warp; 16384 per sub-partition -> 4 warps
    # each, 16 per SM: two 8-warp blocks
    occ = theoretical_occupancy(SM90, 115, 98304 + 1024, 8)
    assert occ.regs_per_thread_allocated == 120
    assert occ.limits["registers"] == 2
    assert occ.limits["shared memory"] == 2          # 233472 // (98304 + 1024 + 1024 reserved)
    assert occ.blocks_per_sm == 2 and occ.percent == 25.0
    assert occ.limiter == "registers"                # a tie names registers first


def test_shared_memory_limiter():
    occ = theoretical_occupancy(SM90, 64, 5 * 16384 + 1024, 4)
    assert occ.limiter == "shared memory" and occ.blocks_per_sm == 2 and occ.percent == 12.5


def test_warps_limit_small_kernel():
    occ = theoretical_occupancy(SM90, 18, 0, 8)
    assert occ.limiter == "warps" and occ.percent == 100.0


def test_block_limit_for_tiny_blocks():
    occ = theoretical_occupancy(SM90, 16, 0, 1)
    assert occ.limiter == "blocks" and occ.blocks_per_sm == 32 and occ.percent == 50.0


def test_too_much_shared_memory_fits_no_block():
    occ = theoretical_occupancy(SM90, 32, 240 * 1024, 4)
    assert occ.blocks_per_sm == 0 and occ.limiter == "shared memory"


def test_sm80_has_less_shared_memory_than_sm90():
    smem = 80 * 1024
    assert theoretical_occupancy(ARCHS[80], 32, smem, 4).limits["shared memory"] == 2
    assert theoretical_occupancy(SM90, 32, smem, 4).limits["shared memory"] == 2
    assert theoretical_occupancy(ARCHS[80], 32, 60 * 1024, 4).limits["shared memory"] == 2
    assert theoretical_occupancy(SM90, 32, 60 * 1024, 4).limits["shared memory"] == 3


@pytest.mark.parametrize("text,cap", [("sm_90", 90), ("sm_90a", 90), ("90", 90), ("9.0", 90), ("h200", 90),
                                      ("sm_80", 80), ("sm_100", 100), ("cuda:120", 120)])
def test_parse_target(text, cap):
    assert parse_target(text).capability == cap


def test_unknown_target_is_a_clear_error():
    with pytest.raises(TargetError, match="sm_80"):
        parse_target("sm_70")


def test_default_target_is_the_local_gpu_else_sm90(monkeypatch):
    from tritonify.diagnostics.compile import targets

    monkeypatch.setattr(targets, "local_gpu_capability", lambda: None)
    arch, why = targets.default_target()
    assert arch.name == "sm_90" and "no local GPU" in why
    monkeypatch.setattr(targets, "local_gpu_capability", lambda: 80)
    assert targets.default_target()[0].name == "sm_80"
    monkeypatch.setattr(targets, "local_gpu_capability", lambda: 75)
    arch, why = targets.default_target()
    assert arch.name == "sm_90" and "not supported" in why


def test_a_tie_with_the_warp_limit_names_warps():
    # 32 registers x 8 warps: registers allow 8 blocks, so do warps; occupancy is full
    occ = theoretical_occupancy(SM90, 32, 0, 8)
    assert occ.percent == 100.0 and occ.limiter == "warps"
