"""The written reading of each real kernel: why it runs at the speed it does, from its source and its
`--set full` report (H200, 2026-12-02, runs 1 and 2 of `gpu/realkernels/device_run.sh`), and the
pattern that names its limiter ("none" where the kernel is at a roof and no change of the kind the
patterns name would pay). Written after run 1's report and Tritonify's diagnosis of it were read, and
before the detectors were changed; Tritonify's first pattern is judged against `limiter`.

Ceilings used: the H200's measured copy bandwidth is 4.0-4.25 TB/s (/work/shared/facts/h200.md), about
85 % of the DRAM peak ncu reports against; "% of roof" below is ncu's (against the peak).
"""
from __future__ import annotations

READINGS: dict[str, tuple[str, str]] = {
    "liger_rms_norm_fwd": ("none", "One row of 4096 per program, 8 warps, one load, one sum, one store: 3.48 TB/s, 72 % of "
                           "the DRAM roof (about 85 % of the copy bandwidth). At the memory roof; nothing to change."),
    "liger_rms_norm_bwd": ("A", "132 programs (one per SM) of 8 warps loop over 62 rows each; the registers (113 per "
                           "thread) allow 2 such blocks per SM, so the launch fills half the block slots (0.50 waves, "
                           "12.5 % of warp slots), and each SM has one chain of row loads in flight: long-scoreboard "
                           "stalls 53 % of CPI, 43 % of the DRAM roof. More programs per SM is the fix."),
    "liger_layer_norm_fwd": ("none", "One row per program, two reductions (mean, variance): 3.06 TB/s, 64 % of the DRAM "
                             "roof (about 75 % of copy). Near the roof with no single cause; eager and compile are slower."),
    "liger_layer_norm_bwd": ("A", "Same shape of launch as the RMSNorm backward: 132 programs, 2 fit per SM (128 "
                             "registers), 0.50 waves, 12.5 % of warp slots, 41 % of the DRAM roof, latency-bound."),
    "liger_fused_add_rms_norm_bwd": ("A", "Same per-SM launch (132 programs, 2 fit per SM, 0.50 waves), two gradient "
                                     "inputs: 45 % of the DRAM roof, long scoreboard 63 % of CPI."),
    "liger_fused_add_rms_norm_fwd": ("none", "Reads x and r, writes s and y: 3.79 TB/s, 79 % of the DRAM roof. At the roof."),
    "liger_swiglu_fwd": ("none", "Elementwise over 8192 x 14336: 4.32 TB/s, 90 % of the DRAM roof. At the roof."),
    "liger_swiglu_bwd": ("none", "Elementwise, in place: 4.11 TB/s, 85 % of the DRAM roof. At the roof."),
    "liger_geglu_fwd": ("N", "Same traffic as SwiGLU but 270 us against 160: libdevice's tanh branches per lane on |x| "
                        "(23.8 of 32 lanes active), a long divergent instruction sequence at 25 % occupancy (91 "
                        "registers), 53 % of the DRAM roof, stalls spread (wait 28 %, long scoreboard 18 %). The tanh "
                        "is the limiter; a branch-free tanh is the fix."),
    "liger_cross_entropy": ("none", "Online softmax over 128256 logits per row, then the gradient written over the "
                            "logits: two reads and one write of 2.1 GB, 3.10 TB/s, 65 % of the DRAM roof. The cost is "
                            "the design (two passes); no detector's change applies."),
    "liger_rope": ("none", "q and k rotated in place, one program per token: 3.43 TB/s, 71 % of the DRAM roof."),
    "liger_softmax": ("none", "One 4096-wide row per program: 3.71 TB/s, 77 % of the DRAM roof. At the roof."),
    "liger_kl_div": ("none", "Streams two 4096 x 32000 fp32 inputs at 4.54 TB/s, 94 % of the DRAM roof. Its only "
                     "narrow access is one 4-byte loss store per row, a negligible share of the traffic."),
    "liger_group_norm_fwd": ("K", "BLOCK = 65536 (the whole group: 16 channels x 4096) with Triton's default 4 warps: "
                             "512 fp32 values per thread per tile, so most of them live in local memory (67 % of memory "
                             "instructions are spills); 1.79 ms where the bytes need about 70 us. The spill is the "
                             "limiter; a smaller BLOCK or more warps is the fix. (Its bf16 statistics also lose accuracy: "
                             "4e-2 against float64.)"),
    "liger_dyt_fwd": ("N", "tanh(alpha x) through libdevice: 22.1 of 32 lanes active, 55 % of the DRAM roof, stalls on "
                      "'wait' (22 %) and 'not selected' (21 %): the tanh's instruction stream, not memory, sets the pace."),
    "vllm_decode_grouped_stage1": ("none", "Paged GQA decode, 16 query heads per tile with mma.sync (M = 16 is below "
                                   "wgmma's 64): 3.70 TB/s of KV, 77 % of the DRAM roof (about 90 % of copy). At the "
                                   "memory roof; the narrow block-table and query loads are broadcasts, not waste."),
    "vllm_decode_stage2": ("P", "Merges 8 splits for 32 x 32 heads in 6.5 us: 1024 small programs, 0.48 waves; the "
                           "launch is over before it ramps up (42 % achieved occupancy, 14 % of the DRAM roof). Only "
                           "fusing it or graph replay changes its cost."),
    "vllm_decode_mha_stage1": ("E", "MHA decode without tensor cores: each block loads 64 page numbers, then the K rows "
                               "they point to, then V: a dependent load chain per iteration, at 37.5 % occupancy (80 "
                               "registers); long scoreboard 50 % of CPI, 2.89 TB/s, 60 % of the DRAM roof. The latency "
                               "of the chain is the cost; the shared-memory conflicts of its reductions (short "
                               "scoreboard 18 %) are second."),
    "inductor:triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0": (
        "none", "Inductor's RMSNorm of the block input (8192 rows of 2048, two per program): 19 us, "
                "51 % of the DRAM roof with part of its input still in L2; short, near its roof."),
    "inductor:triton_poi_fused__unsafe_view_add_cat_mul_neg_slice_transpose_view_1": (
        "none", "RoPE on q with the cat/neg/slice lowered to index arithmetic: SM throughput 67 % (issue-bound on "
                "integer index math), 35 % of the DRAM roof. At the SM roof; no pattern's change applies (the fix "
                "would be a different lowering)."),
    "inductor:triton_poi_fused__unsafe_view_add_cat_mul_neg_slice_transpose_view_2": (
        "P", "The same RoPE for the 4 KV heads: 4 MB in 5.6 us, 18 % of the DRAM roof: too short to ramp up."),
    "inductor:triton_red_fused__to_copy__unsafe_view_add_mean_mul_pow_rsqrt_3": (
        "none", "Residual add + RMSNorm: 72 % of the DRAM roof. At the roof."),
    "inductor:triton_poi_fused__unsafe_view_mul_silu_4": ("none", "SiLU(gate) * up: 85 % of the DRAM roof."),
    "inductor:triton_poi_fused__unsafe_view_add_5": ("none", "The residual add: 74 % of the DRAM roof."),
}
