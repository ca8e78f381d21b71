"""Conv2d as an implicit GEMM on ``tl.dot``, NHWC, forward + dgrad + wgrad, with fused epilogues.

Forward: ``y = act(conv2d(x, w) + bias + residual)`` (ResNet's order: the residual joins before the
activation; BatchNorm in eval mode folds into ``w`` and ``bias`` on the host, ``conv2d_fold_bn``).
The GEMM is M = batch * out_h * out_w (one row per output pixel), N = C_out, K = R * S * C_in:

* x is NHWC (``x.permute(0, 2, 3, 1)`` of an NCHW tensor, or a ``channels_last`` tensor, which is
  the same memory), so one output pixel's K slice of one filter tap is C_in contiguous values;
* the weight [C_out, R, S, C_in] is read as the matrix [C_out, R*S*C_in] (a 2-D load per K block);
* the flat row index m is decomposed into (n, out_y, out_x), and the input row of tap (r, s) is
  (n, out_y * stride - pad + r, out_x * stride - pad + s), masked outside the image (the zero padding);
* the K loop walks (tap, channel block); with fewer than 32 input channels (an RGB stem) it walks the
  filter rows instead (ROW_K): one row r's S taps x C_in channels are S * C_in contiguous input values
  per output pixel (9 for a 3x3 over RGB, padded to a K step of 16), so each step is one 2-D load with a
  mask per column, no per-element division, and three channels do not pad a 64-wide block per tap;
* on Hopper (and where the installed Triton has host tensor descriptors) some configurations read the
  weight through a TMA descriptor over [C_out, R*S, C_in_padded], its channels padded to a multiple
  of 8 (16 bytes of bf16) because a descriptor's strides must be 16-byte aligned, and for a 1x1 filter
  at stride 1 without padding (a plain GEMM) the input too, as the matrix [M, C_in] (A_TMA configs, with
  or without the weight's descriptor), and for 3x3 and strided layers the input as a 5-D view whose box
  is one tap's input for a box of output pixels (A_BOX configs: 1 image x 16 x 8 pixels at 56x56, 1 x 32 x
  4 at 28x28, 4 x 16 x 2 at 14x14, 16 x 8 x 1 at 7x7; the weight through pointers there, see
  ``_CONV2D_BOX_WITH_WEIGHT_DESCRIPTOR``); every TMA config has
  the descriptors' box as its tile, so no config needs a pre-hook (which would send every call
  through the autotuner's Python) and the launcher's recorded plan serves each later call;
* 3x3 layers (64-channel multiples) on Hopper may also run ``_conv2d_box_kernel``, a Gluon kernel with the
  A_BOX tiling whose input boxes stay in shared memory, reshaped there and read by wgmma from shared memory
  (``tl.dot`` reshapes them in registers); its first call for a layer times its configs against the path the
  layer takes otherwise and keeps the fastest (``_conv2d_box_choice``; ``TRITONIFY_CONV2D_BOX=auto|on|off``);
* a 1x1 filter without padding is a plain GEMM ([pixels, C_in] x [C_in, C_out]; at stride 2 the pixels
  read are the 3-D view [N * out_h, out_w, C_in] with doubled strides): ``_conv2d_gemm_kernel`` runs it with
  every operand, the epilogue's residual, z and y too, through descriptors made on the device (any tile;
  no host encoding per call), persistent and grouped for L2. Its first call for a layer times it against
  the implicit GEMM and keeps the faster (``_conv2d_gemm_choice``; ``TRITONIFY_CONV2D_GEMM=gemm|implicit``);
* split K for the layers whose output tiles do not fill the GPU (ResNet's 7x7 and 14x14 layers at
  batch 32: 13-49 row tiles of 128 for 132 SMs): SPLIT_K programs per tile each run a share of the K
  loop and store an fp32 partial tile; the tile's last program to arrive (an arrival counter per tile)
  sums the partials in slot order, so the result does not depend on which program came last, applies
  the epilogue and resets the counter. One launch, no atomics on the output, deterministic;
* the autotuner keys on (out_h, out_w, stride, C_in, C_out, R, S) and the bit length of M: the tiling
  depends on the output size and the stride, and a key on the batch or the input height would re-tune
  every batch size, while the bucket of M lets batch 32 and batch 128 choose their split and tile
  separately; it times each config under CUDA-graph replay (``_autotune_bench``);
* the forward rule (use whichever is faster per layer, as the backward's): ``conv2d`` and its autograd,
  on a GPU, for bf16 and fp16, time the template's kernels against cuDNN's conv followed by the template's
  epilogue kernel (``conv2d_cudnn_forward``: one pass, z = conv + bias + residual kept for the backward,
  y = silu(z)) on the layer's first call and keep the faster (``_conv2d_forward_choice``;
  ``TRITONIFY_CONV2D_FORWARD=template|cudnn`` forces one). ``conv2d_forward`` is the template's kernels.

Backward (``Conv2dFunction``): dz = dy * act'(z) (z, the pre-activation, is kept by the forward when
there is an activation), d residual = dz, d bias = dz summed over pixels,

* dgrad (dx) is an implicit GEMM over input pixels, M = batch * H * W, N = C_in, K = taps * C_out.
  With stride > 1 it is decomposed into stride_h * stride_w subproblems, one per input phase
  (y mod stride, x mod stride): each phase receives only the taps r with (y + pad - r) divisible by
  the stride, so no program walks (and masks away) the taps that do not reach its pixels. One GEMM
  over every tap would spend (stride_h * stride_w - 1) / (stride_h * stride_w) of its K loop (3/4 at
  stride 2) on masked-off loads;
* wgrad (dw) is grad_out^T x im2col(input): M = C_out, N = R*S*C_in, K = batch * out_h * out_w, the
  im2col rows gathered on the fly (never materialised), the long K split over programs that add into
  an fp32 buffer;
* the backward rule (use whichever is faster per layer): on a GPU, for bf16 and fp16, the first backward
  of each layer times the template's dgrad and wgrad against PyTorch's convolution backward (cuDNN,
  ``torch.ops.aten.convolution_backward`` on the channels-last views) and keeps the faster of each for
  that layer (``_conv2d_backward_choice``; ``TRITONIFY_CONV2D_BACKWARD=template|cudnn`` forces one).

Dilation 1 and groups 1 only. Accumulation is fp32; fp32 inputs use IEEE fp32 products, not TF32.
"""
import os
from typing import NamedTuple

import torch
import triton
import triton.language as tl

CONV2D_CHANNELS = 64
CONV2D_DTYPE = "bfloat16"

try:  # host-side tensor descriptors (Triton 3.4+): the TMA path
    from triton.tools.tensor_descriptor import TensorDescriptor as _TensorDescriptor
except ImportError:  # an older Triton: the pointer path alone
    _TensorDescriptor = None

try:  # Gluon (Triton 3.5+): the shared-memory box path (_conv2d_box_kernel) on Hopper
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier, tma
    from triton.experimental.gluon.language.nvidia.hopper import warpgroup_mma, warpgroup_mma_wait
except ImportError:  # an older Triton: the tl.dot paths alone
    gluon = None


def _interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def _autotune_configs(configs):
    """Every config on a GPU; the first alone on the CPU interpreter, which cannot time a choice."""
    return configs[:1] if _interpreting() or not torch.cuda.is_available() else configs


def _fp32_dot(dtype) -> bool:
    """tl.dot on fp32 operands with IEEE products: for fp32 tensors (no TF32 rounding), and for every
    dtype under the CPU interpreter, whose bf16 tl.dot returned garbage (Triton 3.9, seen here); bf16
    and fp16 values are exact in fp32, and the GPU's tensor cores accumulate in fp32 too."""
    return dtype == torch.float32 or _interpreting()


def _tma_available() -> bool:
    """TMA descriptors: Hopper or newer, a Triton with host descriptors, not the interpreter."""
    return (_TensorDescriptor is not None and not _interpreting() and torch.cuda.is_available()
            and torch.cuda.get_device_capability()[0] >= 9)


def _autotune_bench(kernel_call, quantiles):
    """The autotuner's timing of one config: CUDA-graph replay on a GPU, so a 10-40 us kernel is not
    timed through the Python launch path in front of it (Triton's default, CUDA events around eager
    launches, measures the host there and picks any config); None (Triton's default) elsewhere.

    do_bench_cudagraph runs the call on a stream of its own that does not wait for the caller's: the
    caller's stream is drained first, or the timed calls race the work still queued there (the wgrad's dw
    is zeroed on the caller's stream and the autotuner's restore_value clones it, and writes the clone
    back, on the timing stream; the forward's split-K counters are shared by every launch)."""
    torch.cuda.current_stream().synchronize()
    return triton.testing.do_bench_cudagraph(kernel_call, rep=20, quantiles=quantiles)


_AUTOTUNE_BENCH = None if _interpreting() or not torch.cuda.is_available() else _autotune_bench

_CONV2D_TMA_BLOCK = (128, 64)  # the weight descriptor's (BLOCK_N, BLOCK_K) box: every TMA config's tile
_CONV2D_TMA_ROWS = 128  # the input descriptor's box is (BLOCK_M, BLOCK_K) = (128, 64): 1x1 layers' TMA configs


def _conv2d_sms(device_index: int) -> int:
    """The GPU's SMs (a negative index, a tensor off the GPU: the current device's; 132 without a GPU)."""
    if not torch.cuda.is_available():
        return 132
    return torch.cuda.get_device_properties(device_index if device_index >= 0 else torch.cuda.current_device()).multi_processor_count


def _conv2d_tiles(config, M: int, c_out: int) -> int:
    return -(-M // config.kwargs["BLOCK_M"]) * -(-c_out // config.kwargs["BLOCK_N"])


def _conv2d_k_iterations(config, c_in: int, R: int, S: int, rows: bool) -> int:
    """The K loop's length: (tap, channel block) pairs, or with ``rows`` (few input channels: ROW_K) one
    step per filter row."""
    return R if rows else R * S * -(-c_in // config.kwargs["BLOCK_K"])


def _conv2d_row_k(c_in: int, S: int) -> int:
    """ROW_K for a layer with fewer than _CONV2D_GATHER_BELOW_CHANNELS input channels: one filter row's
    S * C_in input elements (contiguous in NHWC), rounded up to a power of 2 of at least 16 (a dot's K);
    0 (the channel-block loop) for the others."""
    return max(16, triton.next_power_of_2(S * c_in)) if c_in < _CONV2D_GATHER_BELOW_CHANNELS else 0


def _conv2d_split_fits(config, M: int, c_out: int, k_iterations: int, sms: int) -> bool:
    """A split-K config only where the output tiles do not fill two waves of the SMs (the deep layers:
    7x7 and 14x14 outputs, few pixels, many channels), at most four programs per SM in all, and every
    split keeps at least four K iterations (the software pipeline needs a few to overlap)."""
    split = config.kwargs["SPLIT_K"]
    if split == 1:
        return True
    tiles = _conv2d_tiles(config, M, c_out)
    return tiles < 2 * sms and tiles * split <= 4 * sms and k_iterations >= 4 * split


def _conv2d_shared_memory_limit(device_index: int) -> int:
    """Bytes of shared memory one program may use (232,448 on the H100/H200)."""
    if not torch.cuda.is_available():
        return 232448
    return getattr(torch.cuda.get_device_properties(device_index), "shared_memory_per_block_optin", 232448)


def _conv2d_shared_memory_fits(config, element_size: int, limit: int, row_k: int = 0) -> bool:
    """The software pipeline's buffers, (num_stages - 1) x the A and B tiles, fit the shared memory
    (fp32 operands need twice bf16's: a 128x128x128 three-stage config fits bf16, not fp32); a K step
    of ``row_k`` elements instead of BLOCK_K on the filter-row loop."""
    k = config.kwargs
    return (config.num_stages - 1) * (k["BLOCK_M"] + k["BLOCK_N"]) * (row_k or k["BLOCK_K"]) * element_size <= limit


def _conv2d_prune(configs, named_args, **kwargs):
    """What each key can run: TMA configs where the launcher made the descriptors they read (bf16/fp16
    on Hopper, not the filter-row loop; the input's matrix for a 1x1 at stride 1, its box view elsewhere); K blocks of 128 for 128 or more input channels; split K where it fits; the
    pipeline's buffers within the shared memory for the operands' dtype."""
    args = {**named_args, **kwargs}
    M, c_in, c_out = args["batch"] * args["out_h"] * args["out_w"], args["C_in"], args["C_out"]
    R, S, row_k = args["R"], args["S"], args["ROW_K"]
    x = args["x_ptr"]
    device_index = (x.device.index or 0) if hasattr(x, "device") else 0
    sms, limit = _conv2d_sms(device_index), _conv2d_shared_memory_limit(device_index)
    element_size = 4 if args["FP32_DOT"] else x.element_size()
    kept = [c for c in configs
            if (not c.kwargs["USE_TMA"] or args["w_desc"] is not None)
            and (not c.kwargs["A_TMA"] or (args["x_desc"] is not None and args["BOX_B"] == 0))
            and (not c.kwargs["A_BOX"] or args["BOX_B"] > 0)
            and (c.kwargs["BLOCK_K"] == 64 or (c_in >= 128 and not row_k))
            and _conv2d_shared_memory_fits(c, element_size, limit, row_k)
            and _conv2d_split_fits(c, M, c_out, _conv2d_k_iterations(c, c_in, R, S, bool(row_k)), sms)]
    return kept or [_conv2d_config(64, 64, 64, 4, 4)]


def _conv2d_config(bm, bn, bk, warps, stages, tma=False, split=1, a_tma=False, a_box=False):
    """USE_TMA: the weight through its descriptor (the tile's (BLOCK_N, BLOCK_K) is its box); A_TMA: a
    1x1's input through its matrix descriptor, A_BOX: any other layer's input through its 5-D view, one box
    of BOX_B x BOX_H x BOX_W output pixels per tap (the tile's (BLOCK_M, BLOCK_K) is the box), where the
    launcher made them."""
    if tma:
        assert (bn, bk) == _CONV2D_TMA_BLOCK, "a TMA config's tile is the descriptor's box"
    if a_tma or a_box:
        assert (bm, bk) == (_CONV2D_TMA_ROWS, _CONV2D_TMA_BLOCK[1]), "an input-descriptor config's tile is its box"
    assert not (a_box and split > 1), "a box config's tiles are not the split-K buffers' (M / BLOCK_M) tiles"
    return triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8, "SPLIT_K": split, "USE_TMA": tma,
                          "A_TMA": a_tma, "A_BOX": a_box}, num_warps=warps, num_stages=stages)


_CONV2D_FWD_POINTER_CONFIGS = [
    _conv2d_config(128, 128, 64, 8, 3),
    _conv2d_config(128, 64, 64, 4, 4),
    _conv2d_config(64, 64, 64, 4, 4),
    _conv2d_config(128, 256, 64, 8, 3),
    _conv2d_config(64, 128, 64, 4, 4),
    _conv2d_config(128, 128, 128, 8, 3),
    _conv2d_config(128, 256, 64, 8, 4),
    _conv2d_config(256, 128, 64, 8, 3),
    _conv2d_config(128, 128, 64, 4, 4),
]
# split K: the deep layers' few output tiles, each K range summed by the tile's last program (below)
_CONV2D_FWD_SPLIT_CONFIGS = [
    _conv2d_config(128, 128, 64, 8, 3, split=2),
    _conv2d_config(128, 128, 64, 8, 4, split=3),
    _conv2d_config(64, 128, 64, 4, 4, split=2),
    _conv2d_config(128, 64, 64, 4, 4, split=2),
    _conv2d_config(64, 128, 64, 4, 4, split=4),
    _conv2d_config(128, 128, 128, 8, 3, split=2),
]
_CONV2D_FWD_TMA_CONFIGS = [_conv2d_config(128, 128, 64, 8, 3, tma=True), _conv2d_config(128, 128, 64, 8, 4, tma=True),
                           _conv2d_config(128, 128, 64, 8, 3, tma=True, split=2),
                           _conv2d_config(64, 128, 64, 4, 4, tma=True, split=2),
                           # the input through its descriptor too (a 1x1 at stride 1 unpadded)
                           _conv2d_config(128, 128, 64, 8, 3, tma=True, a_tma=True),
                           _conv2d_config(128, 128, 64, 8, 4, tma=True, a_tma=True),
                           _conv2d_config(128, 128, 64, 8, 3, tma=True, split=2, a_tma=True),
                           # the input's descriptor alone, the weight through pointers: any BLOCK_N
                           _conv2d_config(128, 64, 64, 4, 4, a_tma=True),
                           _conv2d_config(128, 256, 64, 8, 3, a_tma=True),
                           _conv2d_config(128, 128, 64, 8, 4, split=2, a_tma=True),
                           # the input as boxes of output pixels (3x3 layers, strided 1x1 layers), the
                           # weight through pointers: with the weight's descriptor too the outputs were
                           # wrong on the H200 (_CONV2D_BOX_WITH_WEIGHT_DESCRIPTOR)
                           _conv2d_config(128, 64, 64, 4, 4, a_box=True),
                           _conv2d_config(128, 128, 64, 8, 3, a_box=True),
                           _conv2d_config(128, 256, 64, 8, 3, a_box=True),
                           # both descriptors at 4 warps (one warp group): right and bit-identical in 3
                           # launches on 6 layers x batch 32, 128 (gpu/conv/probe_box.py, 14:40Z), unlike
                           # the 8-warp ones (_CONV2D_BOX_WITH_WEIGHT_DESCRIPTOR)
                           _conv2d_config(128, 128, 64, 4, 4, tma=True, a_box=True)]
_CONV2D_FWD_ALL_CONFIGS = (_CONV2D_FWD_POINTER_CONFIGS + _CONV2D_FWD_SPLIT_CONFIGS
                           + (_CONV2D_FWD_TMA_CONFIGS if _tma_available() else []))
_CONV2D_FWD_CONFIGS = _autotune_configs(_CONV2D_FWD_ALL_CONFIGS)

_CONV2D_DGRAD_ALL_CONFIGS = [
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 64}, num_warps=4, num_stages=4),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=8, num_stages=3),
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64}, num_warps=4, num_stages=4),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64}, num_warps=8, num_stages=3),
]
_CONV2D_WGRAD_ALL_CONFIGS = [
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64}, num_warps=4, num_stages=4),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=8, num_stages=3),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 64}, num_warps=4, num_stages=4),
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=4, num_stages=4),
]
_CONV2D_DGRAD_CONFIGS = _autotune_configs(_CONV2D_DGRAD_ALL_CONFIGS)
_CONV2D_WGRAD_CONFIGS = _autotune_configs(_CONV2D_WGRAD_ALL_CONFIGS)

# fewer input channels than this: the forward's K loop walks the filter rows (ROW_K), wgrad's columns are the
# flat (r, s, c) index
_CONV2D_GATHER_BELOW_CHANNELS = 32


@triton.jit
def _conv2d_epilogue(acc, offs_n, n_ok, out, ok, bias_ptr, res_ptr, z_ptr, y_ptr, HAS_BIAS: tl.constexpr,
                     HAS_RESIDUAL: tl.constexpr, STORE_Z: tl.constexpr, SILU: tl.constexpr):
    """The fused epilogue of an fp32 [rows, channels] tile ``acc`` at element offsets ``out`` (mask ``ok``;
    channels ``offs_n``, mask ``n_ok``): z = acc + bias + residual (kept when STORE_Z), y = silu(z) or z."""
    if HAS_BIAS:
        acc += tl.load(bias_ptr + offs_n, mask=n_ok, other=0.0).to(tl.float32)[None, :]
    if HAS_RESIDUAL:
        acc += tl.load(res_ptr + out, mask=ok, other=0.0).to(tl.float32)
    if STORE_Z:
        tl.store(z_ptr + out, acc.to(z_ptr.dtype.element_ty), mask=ok)
    if SILU:
        acc = acc * tl.sigmoid(acc)
    tl.store(y_ptr + out, acc.to(y_ptr.dtype.element_ty), mask=ok)


@triton.autotune(configs=_CONV2D_FWD_CONFIGS,
                 key=["out_h", "out_w", "stride_h", "stride_w", "C_in", "C_out", "R", "S", "rows_bucket"],
                 prune_configs_by={"early_config_prune": _conv2d_prune}, do_bench=_AUTOTUNE_BENCH)
@triton.jit
def _conv2d_fwd_kernel(x_ptr, x_desc, w_ptr, w_desc, bias_ptr, res_ptr, z_ptr, y_ptr, partial_ptr, arrivals_ptr,
                       batch, H, W, C_in, out_h, out_w, C_out, stride_h, stride_w, pad_h, pad_w, rows_bucket,
                       R: tl.constexpr, S: tl.constexpr, HAS_BIAS: tl.constexpr, HAS_RESIDUAL: tl.constexpr,
                       SILU: tl.constexpr, STORE_Z: tl.constexpr, ROW_K: tl.constexpr, FP32_DOT: tl.constexpr,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                       SPLIT_K: tl.constexpr, USE_TMA: tl.constexpr, A_TMA: tl.constexpr, A_BOX: tl.constexpr,
                       BOX_B: tl.constexpr, BOX_H: tl.constexpr, BOX_W: tl.constexpr):
    """One [BLOCK_M pixels, BLOCK_N output channels] tile of y = act(x (*) w + bias + residual), or with
    SPLIT_K > 1 one of SPLIT_K programs (program_id(1)) that each sum a share of the tile's K loop.

    Split K: each program stores its fp32 partial tile in ``partial_ptr`` (SPLIT_K slots per tile) and
    counts itself in the tile's arrival counter; the program that arrives last sums the SPLIT_K slots in
    slot order (deterministic: the same sum whichever program arrives last), applies the epilogue, stores
    y and sets the counter back to zero for the next launch. ``rows_bucket`` (the bit length of M, unused
    here) is in the autotune key so batch 32 and batch 128 choose their split separately.

    A_TMA (a 1x1 filter at stride 1 without padding: the input is the plain matrix [M, C_in]): the input
    through ``x_desc``, a [BLOCK_M, BLOCK_K] box from [M, C_in] (the launcher makes it for such layers
    alone; without it the config reads the input through pointers).

    A_BOX (the launcher made ``x_desc`` the 5-D view [N, H / stride_h, stride_h, W / stride_w,
    stride_w * C_in] of the input, BOX_B > 0): the tile's rows are a box of BOX_B images x BOX_H output
    rows x BOX_W output columns (BOX_B * BOX_H * BOX_W = BLOCK_M), not BLOCK_M consecutive pixels, so each
    tap's input is one TMA box of that view: input row stride_h * oy + r - pad_h is view row oy + qy, phase
    py (qy, py: the floor quotient and remainder of r - pad_h by stride_h), and the same for columns with
    the column phase in the channel coordinate. Coordinates outside the view (the padding, and the rows of
    a box past the output or the batch) read as zeros; those past the output are not stored. The launcher
    reads the weight through pointers in these configs (``_CONV2D_BOX_WITH_WEIGHT_DESCRIPTOR``)."""
    M = batch * out_h * out_w
    if A_BOX and BOX_B > 0:
        tiles_w = tl.cdiv(out_w, BOX_W)
        tiles_h = tl.cdiv(out_h, BOX_H)
        num_m = tl.cdiv(batch, BOX_B) * tiles_h * tiles_w
    else:
        num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(C_out, BLOCK_N)
    pid = tl.program_id(0)
    group = pid // (GROUP_M * num_n)  # GROUP_M row tiles share each weight tile while it is in L2
    first_m = group * GROUP_M
    rows = tl.minimum(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % (GROUP_M * num_n)) % rows
    pid_n = (pid % (GROUP_M * num_n)) // rows

    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    n_ok = offs_n < C_out
    if A_BOX and BOX_B > 0:
        box_x = (pid_m % tiles_w) * BOX_W
        box_y = ((pid_m // tiles_w) % tiles_h) * BOX_H
        box_n = (pid_m // (tiles_w * tiles_h)) * BOX_B
        row = tl.arange(0, BLOCK_M)
        out_x = box_x + row % BOX_W
        out_y = box_y + (row // BOX_W) % BOX_H
        img = box_n + row // (BOX_W * BOX_H)
        m_ok = (out_x < out_w) & (out_y < out_h) & (img < batch)
        offs_m = (img * out_h + out_y) * out_w + out_x
    else:
        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        m_ok = offs_m < M
        out_x = offs_m % out_w
        out_y = (offs_m // out_w) % out_h
        img = offs_m // (out_w * out_h)
    in_y0 = out_y * stride_h - pad_h
    in_x0 = out_x * stride_w - pad_w
    K = R * S * C_in
    c_blocks = tl.cdiv(C_in, BLOCK_K)
    iterations = R if ROW_K > 0 else R * S * c_blocks
    per_split = tl.cdiv(iterations, SPLIT_K)
    first = tl.program_id(1) * per_split
    last = tl.minimum(first + per_split, iterations)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    if ROW_K > 0:  # few input channels: one step per filter row r, its S * C_in elements contiguous
        offs_j = tl.arange(0, ROW_K)  # element j of a row: tap column j // C_in, channel j % C_in
        j_ok = offs_j < S * C_in
        ix = in_x0[:, None] + (offs_j // C_in)[None, :]
        col_ok = j_ok[None, :] & (ix >= 0) & (ix < W)
        for r in range(first, last):
            iy = in_y0 + r
            row_ok = m_ok & (iy >= 0) & (iy < H)
            start = ((img * H + iy) * W + in_x0).to(tl.int64) * C_in  # the row's first element (tap column 0)
            a = tl.load(x_ptr + start[:, None] + offs_j[None, :], mask=row_ok[:, None] & col_ok, other=0.0)
            b = tl.load(w_ptr + offs_n[None, :].to(tl.int64) * K + (r * S * C_in + offs_j)[:, None],
                        mask=n_ok[None, :] & j_ok[:, None], other=0.0)
            if FP32_DOT:
                acc = tl.dot(a.to(tl.float32), b.to(tl.float32), acc, input_precision="ieee")
            else:
                acc = tl.dot(a, b, acc)
    else:
        for it in range(first, last):
            tap = it // c_blocks
            c0 = (it - tap * c_blocks) * BLOCK_K
            iy = in_y0 + tap // S
            ix = in_x0 + tap % S
            row_ok = m_ok & (iy >= 0) & (iy < H) & (ix >= 0) & (ix < W)
            offs_c = c0 + tl.arange(0, BLOCK_K)
            c_ok = offs_c < C_in
            if A_TMA and x_desc is not None and BOX_B == 0:  # rows past M and channels past C_in read as zeros
                a = x_desc.load([pid_m * BLOCK_M, c0])
            elif A_BOX and BOX_B > 0:
                ty = tap // S - pad_h  # (non-negative numerators before //: floor division either way)
                tx = tap % S - pad_w
                qy = (ty + stride_h * R) // stride_h - R
                qx = (tx + stride_w * S) // stride_w - S
                a = x_desc.load([box_n, box_y + qy, ty - qy * stride_h, box_x + qx,
                                 (tx - qx * stride_w) * C_in + c0]).reshape(BLOCK_M, BLOCK_K)
            else:
                pixel = ((img * H + iy) * W + ix).to(tl.int64) * C_in
                a = tl.load(x_ptr + pixel[:, None] + offs_c[None, :], mask=row_ok[:, None] & c_ok[None, :], other=0.0)
            if USE_TMA:  # [BLOCK_N, 1, BLOCK_K] from [C_out, R*S, C_in_padded]; out-of-range reads are zeros
                b = tl.trans(w_desc.load([pid_n * BLOCK_N, tap, c0]).reshape(BLOCK_N, BLOCK_K))
            else:
                b = tl.load(w_ptr + offs_n[None, :].to(tl.int64) * K + (tap * C_in + offs_c)[:, None],
                            mask=n_ok[None, :] & c_ok[:, None], other=0.0)
            if FP32_DOT:
                acc = tl.dot(a.to(tl.float32), b.to(tl.float32), acc, input_precision="ieee")
            else:
                acc = tl.dot(a, b, acc)

    out = offs_m[:, None].to(tl.int64) * C_out + offs_n[None, :]
    ok = m_ok[:, None] & n_ok[None, :]
    if SPLIT_K > 1:
        tile = pid_m * num_n + pid_n
        slot = tl.arange(0, BLOCK_M)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
        slots = partial_ptr + tile.to(tl.int64) * (SPLIT_K * BLOCK_M * BLOCK_N)
        tl.store(slots + tl.program_id(1) * (BLOCK_M * BLOCK_N) + slot, acc, cache_modifier=".cg")
        tl.debug_barrier()  # every thread's share of the partial is written before the count (release)
        arrived = tl.atomic_add(arrivals_ptr + tile, 1, sem="acq_rel", scope="gpu")
        tl.debug_barrier()
        # the last program to arrive finishes the tile (the count broadcast to the tile before the
        # comparison: the CPU interpreter rejects a mask made from a scalar comparison)
        ok = ok & ((tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32) + arrived) == SPLIT_K - 1)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for i in tl.static_range(SPLIT_K):
            acc += tl.load(slots + i * (BLOCK_M * BLOCK_N) + slot, mask=ok, other=0.0, cache_modifier=".cg")
        # the last program takes the count back to zero for the next launch (the others add nothing)
        tl.atomic_add(arrivals_ptr + tile, tl.where(arrived == SPLIT_K - 1, -SPLIT_K, 0), sem="relaxed", scope="gpu")
    _conv2d_epilogue(acc, offs_n, n_ok, out, ok, bias_ptr, res_ptr, z_ptr, y_ptr, HAS_BIAS, HAS_RESIDUAL, STORE_Z, SILU)


# --------------------------------------------------------------------------- 1x1 layers as a plain GEMM
def _conv2d_gemm_config(bm, bn, bk, warps, stages, ctas=1, flatten=True, warp_specialize=False):
    """A tile of the 1x1 GEMM kernel: [BLOCK_M pixels, BLOCK_N channels], BLOCK_K input channels per step;
    CTAS programs per SM in the persistent grid (each program walks tiles program_id, + grid, ...);
    FLATTEN: the tile and K loops pipelined as one (the next tile's loads overlap this tile's epilogue);
    warp_specialize: Triton's own warp specialization of the tile loop (WS; Hopper wants FLATTEN off), in no
    shipped config: gpu/conv/probe_gemm.py tries it (PROBE_GEMM_WS=1)."""
    kwargs = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8, "CTAS": ctas, "FLATTEN": flatten}
    if warp_specialize:
        kwargs["WS"] = True
    return triton.Config(kwargs, num_warps=warps, num_stages=stages)


_CONV2D_GEMM_ALL_CONFIGS = [
    _conv2d_gemm_config(128, 128, 64, 8, 3),
    _conv2d_gemm_config(128, 128, 64, 8, 4),
    _conv2d_gemm_config(128, 256, 64, 8, 3),
    _conv2d_gemm_config(128, 128, 64, 4, 4),
    _conv2d_gemm_config(128, 64, 64, 4, 4, ctas=2),
    _conv2d_gemm_config(128, 128, 128, 8, 3),
    _conv2d_gemm_config(128, 128, 64, 8, 3, ctas=2),
    _conv2d_gemm_config(128, 128, 64, 8, 3, flatten=False),
    _conv2d_gemm_config(64, 128, 64, 4, 4, ctas=2),
    # long K (1024-2048 channels) over few pixels (the 14x14 and 7x7 layers): narrower tiles, more of them
    _conv2d_gemm_config(128, 64, 128, 4, 3),
    _conv2d_gemm_config(64, 128, 128, 4, 3, ctas=2),
]
_CONV2D_GEMM_CONFIGS = _autotune_configs(_CONV2D_GEMM_ALL_CONFIGS)


def _conv2d_gemm_prune(configs, named_args, **kwargs):
    """K blocks of 128 for 128 or more input channels; the pipeline's buffers within the shared memory."""
    args = {**named_args, **kwargs}
    x = args["x_ptr"]
    device_index = (x.device.index or 0) if hasattr(x, "device") else 0
    limit = _conv2d_shared_memory_limit(device_index)
    kept = [c for c in configs if (c.kwargs["BLOCK_K"] == 64 or args["C_in"] >= 128)
            and _conv2d_gemm_shared_memory_fits(c, x.element_size(), args["HAS_RESIDUAL"], args["STORE_Z"], limit)]
    return kept or configs[:1]


def _conv2d_gemm_shared_memory_fits(config, element_size: int, residual: bool, store_z: bool, limit: int) -> bool:
    """The GEMM kernel's shared memory: num_stages A and B tiles plus one [BLOCK_M, BLOCK_N] buffer per
    descriptor the epilogue reads or writes (y, the residual, z). Matches what the H200's compiler asked
    for (2026-12-02 14:40Z: 128 x 256 x 64 at 3 stages 213 KB plain, 278 KB with the residual)."""
    k = config.kwargs
    tiles = config.num_stages * (k["BLOCK_M"] + k["BLOCK_N"]) * k["BLOCK_K"]
    return (tiles + (1 + residual + store_z) * k["BLOCK_M"] * k["BLOCK_N"]) * element_size <= limit


@triton.autotune(configs=_CONV2D_GEMM_CONFIGS, key=["out_w", "stride_h", "stride_w", "C_in", "C_out", "rows_bucket"],
                 prune_configs_by={"early_config_prune": _conv2d_gemm_prune}, do_bench=_AUTOTUNE_BENCH)
@triton.jit
def _conv2d_gemm_kernel(x_ptr, w_ptr, bias_ptr, res_ptr, z_ptr, y_ptr, batch, H, W, C_in, out_h, out_w, C_out,
                        stride_h, stride_w, rows_bucket, HAS_BIAS: tl.constexpr, HAS_RESIDUAL: tl.constexpr,
                        SILU: tl.constexpr, STORE_Z: tl.constexpr, BOX_W: tl.constexpr, FP32_DOT: tl.constexpr,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                        CTAS: tl.constexpr, FLATTEN: tl.constexpr, WS: tl.constexpr = False):
    """y = act(x (*) w + bias + residual) for a 1x1 filter without padding: the GEMM [pixels, C_in] x
    [C_in, C_out], every operand through a tensor descriptor made on the device (its box is the config's
    tile, so any tile size serves), persistent: program p runs tiles p, p + programs, ... in GROUP_M-row
    groups (the rows sharing a weight tile run together, while it is in L2).

    BOX_W == 0 (stride 1): the input is the matrix [batch * H * W, C_in], the output [M, C_out].
    BOX_W > 0 (stride > 1, H and W multiples of the stride): the input is the 3-D view [batch * out_h,
    out_w, C_in] with strides [stride_h * W * C_in, stride_w * C_in, 1] (the pixels the filter reads,
    the others stepped over), a tile is BLOCK_M / BOX_W of its rows x BOX_W columns (columns past out_w
    read as zeros and are not stored: the descriptor clips them), and the output the same view of y."""
    if BOX_W == 0:
        M = batch * out_h * out_w
        x_desc = tl.make_tensor_descriptor(x_ptr, shape=[M, C_in], strides=[C_in, 1], block_shape=[BLOCK_M, BLOCK_K])
        y_desc = tl.make_tensor_descriptor(y_ptr, shape=[M, C_out], strides=[C_out, 1], block_shape=[BLOCK_M, BLOCK_N])
        if HAS_RESIDUAL:
            r_desc = tl.make_tensor_descriptor(res_ptr, shape=[M, C_out], strides=[C_out, 1],
                                               block_shape=[BLOCK_M, BLOCK_N])
        if STORE_Z:
            z_desc = tl.make_tensor_descriptor(z_ptr, shape=[M, C_out], strides=[C_out, 1],
                                               block_shape=[BLOCK_M, BLOCK_N])
        num_m = tl.cdiv(M, BLOCK_M)
        tiles_w = 1
    else:
        BOX_H: tl.constexpr = BLOCK_M // BOX_W
        P = batch * out_h
        x_desc = tl.make_tensor_descriptor(x_ptr, shape=[P, out_w, C_in], strides=[stride_h * W * C_in, stride_w * C_in, 1],
                                           block_shape=[BOX_H, BOX_W, BLOCK_K])
        y_desc = tl.make_tensor_descriptor(y_ptr, shape=[P, out_w, C_out], strides=[out_w * C_out, C_out, 1],
                                           block_shape=[BOX_H, BOX_W, BLOCK_N])
        if HAS_RESIDUAL:
            r_desc = tl.make_tensor_descriptor(res_ptr, shape=[P, out_w, C_out], strides=[out_w * C_out, C_out, 1],
                                               block_shape=[BOX_H, BOX_W, BLOCK_N])
        if STORE_Z:
            z_desc = tl.make_tensor_descriptor(z_ptr, shape=[P, out_w, C_out], strides=[out_w * C_out, C_out, 1],
                                               block_shape=[BOX_H, BOX_W, BLOCK_N])
        tiles_w = tl.cdiv(out_w, BOX_W)
        num_m = tl.cdiv(P, BOX_H) * tiles_w
    w_desc = tl.make_tensor_descriptor(w_ptr, shape=[C_out, C_in], strides=[C_in, 1], block_shape=[BLOCK_N, BLOCK_K])
    num_n = tl.cdiv(C_out, BLOCK_N)
    k_tiles = tl.cdiv(C_in, BLOCK_K)
    tiles = num_m * num_n
    in_group = GROUP_M * num_n
    for tile in tl.range(tl.program_id(0), tiles, tl.num_programs(0), flatten=FLATTEN, warp_specialize=WS):
        group = tile // in_group
        first_m = group * GROUP_M
        rows = tl.minimum(num_m - first_m, GROUP_M)
        pid_m = first_m + (tile % in_group) % rows
        pid_n = (tile % in_group) // rows
        n0 = pid_n * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for kb in range(k_tiles):
            if BOX_W == 0:
                a = x_desc.load([pid_m * BLOCK_M, kb * BLOCK_K])
            else:
                a = x_desc.load([(pid_m // tiles_w) * BOX_H, (pid_m % tiles_w) * BOX_W, kb * BLOCK_K])
                a = a.reshape(BLOCK_M, BLOCK_K)
            b = w_desc.load([n0, kb * BLOCK_K])
            if FP32_DOT:  # the CPU interpreter (_fp32_dot)
                acc = tl.dot(a.to(tl.float32), b.T.to(tl.float32), acc, input_precision="ieee")
            else:
                acc = tl.dot(a, b.T, acc)
        if HAS_BIAS:
            offs_n = n0 + tl.arange(0, BLOCK_N)
            acc += tl.load(bias_ptr + offs_n, mask=offs_n < C_out, other=0.0).to(tl.float32)[None, :]
        if BOX_W == 0:
            if HAS_RESIDUAL:
                acc += r_desc.load([pid_m * BLOCK_M, n0]).to(tl.float32)
            if STORE_Z:
                z_desc.store([pid_m * BLOCK_M, n0], acc.to(z_ptr.dtype.element_ty))
            if SILU:
                acc = acc * tl.sigmoid(acc)
            y_desc.store([pid_m * BLOCK_M, n0], acc.to(y_ptr.dtype.element_ty))
        else:
            p0 = (pid_m // tiles_w) * BOX_H
            q0 = (pid_m % tiles_w) * BOX_W
            if HAS_RESIDUAL:
                acc += r_desc.load([p0, q0, n0]).reshape(BLOCK_M, BLOCK_N).to(tl.float32)
            if STORE_Z:
                z_desc.store([p0, q0, n0], acc.to(z_ptr.dtype.element_ty).reshape(BOX_H, BOX_W, BLOCK_N))
            if SILU:
                acc = acc * tl.sigmoid(acc)
            y_desc.store([p0, q0, n0], acc.to(y_ptr.dtype.element_ty).reshape(BOX_H, BOX_W, BLOCK_N))


# --------------------------------------------------------------------------- 3x3 and strided layers: boxes in shared memory
class _BoxConfig(NamedTuple):
    """One Gluon box kernel config: the tile, the warps of the MMA partition, the ring's stages, programs per
    SM, and whether a separate load warp fills the ring (``specialized``: _conv2d_box_ws_kernel) or the MMA
    warps issue the loads between their wgmmas (_conv2d_box_kernel, which alone can split K)."""
    block_m: int
    block_n: int
    block_k: int
    warps: int
    stages: int
    ctas: int
    specialized: bool = False


# the fastest of 8 single-partition configs on ResNet-50's 3x3 layers at batch 128 on the H200, each correct and
# three launches bit-identical there (gpu/conv/probe_gluon.py, 2026-12-02 20:05Z; 180 and 107 KB of shared
# memory), and their warp-specialized forms (a 4-stage ring where it fits, the epilogue in the wgmma layout: no
# shared memory for a layout conversion) with a 64-channel N tile for C_out = 64; each layer's first call times
# them against the path it takes otherwise (_conv2d_box_choice)
_CONV2D_BOX_CONFIGS = [_BoxConfig(128, 256, 64, 8, 3, 1), _BoxConfig(128, 128, 64, 4, 3, 2),
                       _BoxConfig(128, 256, 64, 8, 3, 1, True), _BoxConfig(128, 128, 64, 4, 3, 2, True),
                       _BoxConfig(128, 64, 64, 4, 4, 2, True)]
_CONV2D_BOX_MAX_SPLITS = 8

if gluon is not None:
    @gluon.jit
    def _conv2d_box_load(x_desc, w_desc, a_smem, b_smem, ready, g, j, c_blocks, box_n, box_y, box_x, n0, C_in,
                         stride_h, stride_w, pad_h, pad_w, R: gl.constexpr, S: gl.constexpr, BLOCK_K: gl.constexpr):
        """K step j of the tile into the ring's stage for the program's g-th load: tap j // c_blocks's input
        box (the A_BOX view's coordinates, _conv2d_fwd_kernel) and the weight's [BLOCK_N, BLOCK_K] block."""
        stage = g % a_smem.shape[0]
        tap = j // c_blocks
        c0 = (j - tap * c_blocks) * BLOCK_K
        ty = tap // S - pad_h
        tx = tap % S - pad_w
        qy = (ty + stride_h * R) // stride_h - R
        qx = (tx + stride_w * S) // stride_w - S
        bar = ready.index(stage)
        mbarrier.expect(bar, x_desc.block_type.nbytes + w_desc.block_type.nbytes)
        tma.async_copy_global_to_shared(x_desc, [box_n, box_y + qy, ty - qy * stride_h, box_x + qx,
                                                 (tx - qx * stride_w) * C_in + c0], bar, a_smem.index(stage))
        tma.async_copy_global_to_shared(w_desc, [n0, tap * C_in + c0], bar, b_smem.index(stage))

    @gluon.jit
    def _conv2d_box_grid(batch, out_h, out_w, C_in, C_out, R: gl.constexpr, S: gl.constexpr, BOX_B: gl.constexpr,
                         BOX_H: gl.constexpr, BOX_W: gl.constexpr, BLOCK_N: gl.constexpr, BLOCK_K: gl.constexpr):
        """(row tiles, N tiles, boxes across, boxes down, channel blocks, K steps per tile) of a layer."""
        tiles_w = gl.cdiv(out_w, BOX_W)
        tiles_h = gl.cdiv(out_h, BOX_H)
        c_blocks = gl.cdiv(C_in, BLOCK_K)
        return (gl.cdiv(batch, BOX_B) * tiles_h * tiles_w, gl.cdiv(C_out, BLOCK_N), tiles_w, tiles_h, c_blocks,
                R * S * c_blocks)

    @gluon.jit
    def _conv2d_box_unit(unit, splits, iterations, num_m, num_n, tiles_w, tiles_h, BOX_B: gl.constexpr,
                         BOX_H: gl.constexpr, BOX_W: gl.constexpr, BLOCK_N: gl.constexpr, GROUP_M: gl.constexpr):
        """Work unit ``unit`` (splits per output tile, the tiles in GROUP_M-row groups so GROUP_M row tiles
        share each weight tile while it is in L2) -> (tile, split, box_n, box_y, box_x, n0, first and last K
        step: the split's share of the K loop, every share within one step of the others)."""
        tile = unit // splits
        part = unit - tile * splits
        in_group = GROUP_M * num_n
        first_m = (tile // in_group) * GROUP_M
        rows = gl.minimum(num_m - first_m, GROUP_M)
        pid_m = first_m + (tile % in_group) % rows
        pid_n = (tile % in_group) // rows
        box_x = (pid_m % tiles_w) * BOX_W
        box_y = ((pid_m // tiles_w) % tiles_h) * BOX_H
        box_n = (pid_m // (tiles_w * tiles_h)) * BOX_B
        return (pid_m * num_n + pid_n, part, box_n, box_y, box_x, pid_n * BLOCK_N, part * iterations // splits,
                (part + 1) * iterations // splits)

    @gluon.jit
    def _conv2d_box_epilogue(acc, tile, part, splits, partial_ptr, arrivals_ptr, bias_ptr, res_ptr, z_ptr, y_ptr,
                             box_n, box_y, box_x, n0, batch, out_h, out_w, C_out, HAS_BIAS: gl.constexpr,
                             HAS_RESIDUAL: gl.constexpr, SILU: gl.constexpr, STORE_Z: gl.constexpr,
                             REDUCE: gl.constexpr, BOX_H: gl.constexpr, BOX_W: gl.constexpr, BLOCK_M: gl.constexpr,
                             BLOCK_N: gl.constexpr, LAYOUT: gl.constexpr):
        """y (and z) = act(acc + bias + residual) for the tile's box of output pixels, in ``acc``'s layout.
        REDUCE (split K): the split's fp32 partial into its slot of the tile (``_conv2d_fwd_kernel``'s split
        protocol: the program that arrives last sums the slots in slot order, finishes the tile and sets the
        tile's counter back to zero)."""
        row = gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, LAYOUT))
        out_x = box_x + row % BOX_W
        out_y = box_y + (row // BOX_W) % BOX_H
        img = box_n + row // (BOX_W * BOX_H)
        m_ok = (out_x < out_w) & (out_y < out_h) & (img < batch)
        offs_n = n0 + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, LAYOUT))
        n_ok = offs_n < C_out
        offs = (gl.expand_dims(((img * out_h + out_y) * out_w + out_x).to(gl.int64) * C_out, 1)
                + gl.expand_dims(offs_n, 0))
        ok = gl.expand_dims(m_ok, 1) & gl.expand_dims(n_ok, 0)
        finish = True
        if REDUCE:
            slot = (gl.expand_dims(gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, LAYOUT)), 1) * BLOCK_N
                    + gl.expand_dims(gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, LAYOUT)), 0))
            slots = partial_ptr + tile.to(gl.int64) * splits * (BLOCK_M * BLOCK_N)
            gl.store(slots + part * (BLOCK_M * BLOCK_N) + slot, acc, cache_modifier=".cg")
            gl.thread_barrier()  # every thread's share of the partial is written before the count (release)
            arrived = gl.atomic_add(arrivals_ptr + tile, 1, sem="acq_rel", scope="gpu")
            gl.thread_barrier()
            finish = arrived == splits - 1
            if finish:
                acc = gl.zeros((BLOCK_M, BLOCK_N), dtype=gl.float32, layout=LAYOUT)
                for i in range(splits):
                    acc += gl.load(slots + i * (BLOCK_M * BLOCK_N) + slot, cache_modifier=".cg")
                gl.atomic_xchg(arrivals_ptr + tile, 0, sem="relaxed", scope="gpu")  # for the next launch
        if finish:
            if HAS_BIAS:
                acc += gl.expand_dims(gl.load(bias_ptr + offs_n, mask=n_ok, other=0.0).to(gl.float32), 0)
            if HAS_RESIDUAL:
                acc += gl.load(res_ptr + offs, mask=ok, other=0.0).to(gl.float32)
            if STORE_Z:
                gl.store(z_ptr + offs, acc.to(z_ptr.dtype.element_ty), mask=ok)
            if SILU:
                acc = acc * (1.0 / (1.0 + gl.exp(-acc)))
            gl.store(y_ptr + offs, acc.to(y_ptr.dtype.element_ty), mask=ok)

    @gluon.jit
    def _conv2d_box_descriptors(x_ptr, w_ptr, batch, H, W, C_in, C_out, stride_h, stride_w, R: gl.constexpr,
                                S: gl.constexpr, BOX_B: gl.constexpr, BOX_H: gl.constexpr, BOX_W: gl.constexpr,
                                BLOCK_N: gl.constexpr, BLOCK_K: gl.constexpr, A_LAYOUT: gl.constexpr,
                                B_LAYOUT: gl.constexpr):
        """The input's 5-D box view (the A_BOX view of _conv2d_fwd_kernel) and the weight's [C_out, R*S*C_in]
        matrix, made on the device."""
        x_desc = tma.make_tensor_descriptor(x_ptr, shape=[batch, H // stride_h, stride_h, W // stride_w, stride_w * C_in],
                                            strides=[H * W * C_in, stride_h * W * C_in, W * C_in, stride_w * C_in, 1],
                                            block_shape=[BOX_B, BOX_H, 1, BOX_W, BLOCK_K], layout=A_LAYOUT)
        K = R * S * C_in
        w_desc = tma.make_tensor_descriptor(w_ptr, shape=[C_out, K], strides=[K, 1], block_shape=[BLOCK_N, BLOCK_K],
                                            layout=B_LAYOUT)
        return x_desc, w_desc

    @gluon.jit
    def _conv2d_box_kernel(x_ptr, w_ptr, bias_ptr, res_ptr, z_ptr, y_ptr, partial_ptr, arrivals_ptr, batch, H, W,
                           C_in, out_h, out_w, C_out, stride_h, stride_w, pad_h, pad_w, splits, R: gl.constexpr,
                           S: gl.constexpr, HAS_BIAS: gl.constexpr, HAS_RESIDUAL: gl.constexpr, SILU: gl.constexpr,
                           STORE_Z: gl.constexpr, REDUCE: gl.constexpr, BOX_B: gl.constexpr, BOX_H: gl.constexpr,
                           BOX_W: gl.constexpr, BLOCK_N: gl.constexpr, BLOCK_K: gl.constexpr, STAGES: gl.constexpr,
                           GROUP_M: gl.constexpr, A_LAYOUT: gl.constexpr, B_LAYOUT: gl.constexpr,
                           MMA_LAYOUT: gl.constexpr, OUT_LAYOUT: gl.constexpr):
        """The A_BOX tiling of _conv2d_fwd_kernel (a tile's rows are a box of BOX_B images x BOX_H x BOX_W
        output pixels, one TMA box of the input's 5-D view per tap and channel block), with the box kept in
        shared memory: reshaped there to the tile's [BLOCK_M, BLOCK_K] rows and read by wgmma from shared
        memory (tl.dot's reshape goes through registers). A STAGES-deep ring of boxes and weight blocks, each
        stage's TMA tracked by its mbarrier; wgmma i runs while step i + STAGES - 1 loads into the stage
        wgmma i - 1 read. Persistent: program p runs units p, p + programs, ... (``splits`` units per tile,
        REDUCE where there are more than one); the ring's count carries over from unit to unit."""
        BLOCK_M: gl.constexpr = BOX_B * BOX_H * BOX_W
        x_desc, w_desc = _conv2d_box_descriptors(x_ptr, w_ptr, batch, H, W, C_in, C_out, stride_h, stride_w, R, S,
                                                 BOX_B, BOX_H, BOX_W, BLOCK_N, BLOCK_K, A_LAYOUT, B_LAYOUT)
        a_smem = gl.allocate_shared_memory(x_ptr.dtype.element_ty, [STAGES, BOX_B, BOX_H, 1, BOX_W, BLOCK_K], A_LAYOUT)
        b_smem = gl.allocate_shared_memory(w_ptr.dtype.element_ty, [STAGES, BLOCK_N, BLOCK_K], B_LAYOUT)
        ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
        for st in gl.static_range(STAGES):
            mbarrier.init(ready.index(st), count=1)
        fence_async_shared()

        num_m, num_n, tiles_w, tiles_h, c_blocks, iterations = _conv2d_box_grid(
            batch, out_h, out_w, C_in, C_out, R, S, BOX_B, BOX_H, BOX_W, BLOCK_N, BLOCK_K)
        done = gl.program_id(0) * 0  # the program's loads consumed so far: the ring's stage and phase
        for unit in range(gl.program_id(0), num_m * num_n * splits, gl.num_programs(0)):
            tile, part, box_n, box_y, box_x, n0, first, last = _conv2d_box_unit(
                unit, splits, iterations, num_m, num_n, tiles_w, tiles_h, BOX_B, BOX_H, BOX_W, BLOCK_N, GROUP_M)
            steps = last - first
            for j in gl.static_range(STAGES - 1):
                if j < steps:
                    _conv2d_box_load(x_desc, w_desc, a_smem, b_smem, ready, done + j, first + j, c_blocks, box_n,
                                     box_y, box_x, n0, C_in, stride_h, stride_w, pad_h, pad_w, R, S, BLOCK_K)
            acc = gl.zeros((BLOCK_M, BLOCK_N), dtype=gl.float32, layout=MMA_LAYOUT)
            for i in range(steps):
                g = done + i
                stage = g % STAGES
                mbarrier.wait(ready.index(stage), (g // STAGES) & 1)
                acc = warpgroup_mma(a_smem.index(stage).reshape([BLOCK_M, BLOCK_K]),
                                    b_smem.index(stage).permute((1, 0)), acc, is_async=True)
                acc = warpgroup_mma_wait(num_outstanding=1, deps=(acc,))
                if i + STAGES - 1 < steps:  # into the stage wgmma i - 1 read, which has finished
                    _conv2d_box_load(x_desc, w_desc, a_smem, b_smem, ready, g + STAGES - 1, first + i + STAGES - 1,
                                     c_blocks, box_n, box_y, box_x, n0, C_in, stride_h, stride_w, pad_h, pad_w, R, S,
                                     BLOCK_K)
            acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc,))
            done += steps
            _conv2d_box_epilogue(gl.convert_layout(acc, OUT_LAYOUT), tile, part, splits, partial_ptr, arrivals_ptr,
                                 bias_ptr, res_ptr, z_ptr, y_ptr, box_n, box_y, box_x, n0, batch, out_h, out_w, C_out,
                                 HAS_BIAS, HAS_RESIDUAL, SILU, STORE_Z, REDUCE, BOX_H, BOX_W, BLOCK_M, BLOCK_N,
                                 OUT_LAYOUT)
        for st in gl.static_range(STAGES):
            mbarrier.invalidate(ready.index(st))

    @gluon.jit
    def _conv2d_box_ws_loads(x_desc, w_desc, a_smem, b_smem, ready, empty, batch, C_in, out_h, out_w, C_out,
                             stride_h, stride_w, pad_h, pad_w, R: gl.constexpr, S: gl.constexpr, BOX_B: gl.constexpr,
                             BOX_H: gl.constexpr, BOX_W: gl.constexpr, BLOCK_N: gl.constexpr, BLOCK_K: gl.constexpr,
                             GROUP_M: gl.constexpr):
        """The load warp of _conv2d_box_ws_kernel: every K step of the program's tiles into the ring, each
        stage once the MMA partition has released it (``empty``; the first pass over the ring waits on
        nothing: a fresh barrier's phase before 0 counts as complete)."""
        stages: gl.constexpr = a_smem.shape[0]
        num_m, num_n, tiles_w, tiles_h, c_blocks, iterations = _conv2d_box_grid(
            batch, out_h, out_w, C_in, C_out, R, S, BOX_B, BOX_H, BOX_W, BLOCK_N, BLOCK_K)
        done = gl.program_id(0) * 0
        for unit in range(gl.program_id(0), num_m * num_n, gl.num_programs(0)):
            tile, part, box_n, box_y, box_x, n0, first, last = _conv2d_box_unit(
                unit, 1, iterations, num_m, num_n, tiles_w, tiles_h, BOX_B, BOX_H, BOX_W, BLOCK_N, GROUP_M)
            for j in range(iterations):
                g = done + j
                mbarrier.wait(empty.index(g % stages), ((g // stages) & 1) ^ 1)
                _conv2d_box_load(x_desc, w_desc, a_smem, b_smem, ready, g, j, c_blocks, box_n, box_y, box_x, n0,
                                 C_in, stride_h, stride_w, pad_h, pad_w, R, S, BLOCK_K)
            done += iterations

    @gluon.jit
    def _conv2d_box_ws_mma(a_smem, b_smem, ready, empty, bias_ptr, res_ptr, z_ptr, y_ptr, batch, C_in, out_h, out_w,
                           C_out, R: gl.constexpr, S: gl.constexpr, HAS_BIAS: gl.constexpr,
                           HAS_RESIDUAL: gl.constexpr, SILU: gl.constexpr, STORE_Z: gl.constexpr,
                           BOX_B: gl.constexpr, BOX_H: gl.constexpr, BOX_W: gl.constexpr, BLOCK_N: gl.constexpr,
                           BLOCK_K: gl.constexpr, GROUP_M: gl.constexpr, MMA_LAYOUT: gl.constexpr,
                           OUT_LAYOUT: gl.constexpr):
        """The MMA partition of _conv2d_box_ws_kernel: wgmma on each stage as its TMA lands, the stage released
        to the load warp once the next wgmma has been issued and the one reading it has finished; the epilogue
        (in OUT_LAYOUT: in the wgmma layout each thread's 64-bit pointers alone take 256 registers at 128 x 256)
        while the load warp fills the ring with the next tile's steps."""
        stages: gl.constexpr = a_smem.shape[0]
        BLOCK_M: gl.constexpr = BOX_B * BOX_H * BOX_W
        num_m, num_n, tiles_w, tiles_h, c_blocks, iterations = _conv2d_box_grid(
            batch, out_h, out_w, C_in, C_out, R, S, BOX_B, BOX_H, BOX_W, BLOCK_N, BLOCK_K)
        done = gl.program_id(0) * 0
        for unit in range(gl.program_id(0), num_m * num_n, gl.num_programs(0)):
            tile, part, box_n, box_y, box_x, n0, first, last = _conv2d_box_unit(
                unit, 1, iterations, num_m, num_n, tiles_w, tiles_h, BOX_B, BOX_H, BOX_W, BLOCK_N, GROUP_M)
            acc = gl.zeros((BLOCK_M, BLOCK_N), dtype=gl.float32, layout=MMA_LAYOUT)
            for i in range(iterations):
                g = done + i
                mbarrier.wait(ready.index(g % stages), (g // stages) & 1)
                acc = warpgroup_mma(a_smem.index(g % stages).reshape([BLOCK_M, BLOCK_K]),
                                    b_smem.index(g % stages).permute((1, 0)), acc, is_async=True)
                acc = warpgroup_mma_wait(num_outstanding=1, deps=(acc,))
                mbarrier.arrive(empty.index((g + stages - 1) % stages), pred=i > 0)  # wgmma i - 1's stage
            acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc,))
            done += iterations
            mbarrier.arrive(empty.index((done + stages - 1) % stages))  # the tile's last stage
            _conv2d_box_epilogue(gl.convert_layout(acc, OUT_LAYOUT), tile, part, 1, y_ptr, y_ptr, bias_ptr, res_ptr,
                                 z_ptr, y_ptr, box_n, box_y, box_x, n0, batch, out_h, out_w, C_out, HAS_BIAS,
                                 HAS_RESIDUAL, SILU, STORE_Z, False, BOX_H, BOX_W, BLOCK_M, BLOCK_N, OUT_LAYOUT)

    @gluon.jit
    def _conv2d_box_ws_kernel(x_ptr, w_ptr, bias_ptr, res_ptr, z_ptr, y_ptr, batch, H, W, C_in, out_h, out_w, C_out,
                              stride_h, stride_w, pad_h, pad_w, R: gl.constexpr, S: gl.constexpr,
                              HAS_BIAS: gl.constexpr, HAS_RESIDUAL: gl.constexpr, SILU: gl.constexpr,
                              STORE_Z: gl.constexpr, BOX_B: gl.constexpr, BOX_H: gl.constexpr, BOX_W: gl.constexpr,
                              BLOCK_N: gl.constexpr, BLOCK_K: gl.constexpr, STAGES: gl.constexpr,
                              GROUP_M: gl.constexpr, A_LAYOUT: gl.constexpr, B_LAYOUT: gl.constexpr,
                              MMA_LAYOUT: gl.constexpr, OUT_LAYOUT: gl.constexpr):
        """_conv2d_box_kernel's tiles with its two jobs in separate warps: one load warp (_conv2d_box_ws_loads)
        runs ahead through the program's K steps, tile after tile, as far as the ring allows, while the MMA
        warps (_conv2d_box_ws_mma) multiply and write each tile; a stage goes back to the load warp through
        its ``empty`` barrier. No split K."""
        x_desc, w_desc = _conv2d_box_descriptors(x_ptr, w_ptr, batch, H, W, C_in, C_out, stride_h, stride_w, R, S,
                                                 BOX_B, BOX_H, BOX_W, BLOCK_N, BLOCK_K, A_LAYOUT, B_LAYOUT)
        a_smem = gl.allocate_shared_memory(x_ptr.dtype.element_ty, [STAGES, BOX_B, BOX_H, 1, BOX_W, BLOCK_K], A_LAYOUT)
        b_smem = gl.allocate_shared_memory(w_ptr.dtype.element_ty, [STAGES, BLOCK_N, BLOCK_K], B_LAYOUT)
        ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
        empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
        for st in gl.static_range(STAGES):
            mbarrier.init(ready.index(st), count=1)
            mbarrier.init(empty.index(st), count=1)
        fence_async_shared()
        gl.warp_specialize([
            (_conv2d_box_ws_mma, (a_smem, b_smem, ready, empty, bias_ptr, res_ptr, z_ptr, y_ptr, batch, C_in, out_h,
                                  out_w, C_out, R, S, HAS_BIAS, HAS_RESIDUAL, SILU, STORE_Z, BOX_B, BOX_H, BOX_W,
                                  BLOCK_N, BLOCK_K, GROUP_M, MMA_LAYOUT, OUT_LAYOUT)),
            (_conv2d_box_ws_loads, (x_desc, w_desc, a_smem, b_smem, ready, empty, batch, C_in, out_h, out_w, C_out,
                                    stride_h, stride_w, pad_h, pad_w, R, S, BOX_B, BOX_H, BOX_W, BLOCK_N, BLOCK_K,
                                    GROUP_M)),
        ], [1], [48])


@triton.autotune(configs=_CONV2D_DGRAD_CONFIGS, key=["H", "W", "stride_h", "stride_w", "C_in", "C_out", "R", "S", "rows_bucket"],
                 do_bench=_AUTOTUNE_BENCH)
@triton.jit
def _conv2d_dgrad_kernel(dz_ptr, w_ptr, dx_ptr, batch, H, W, C_in, out_h, out_w, C_out,
                         stride_h, stride_w, pad_h, pad_w, rows_bucket, R: tl.constexpr, S: tl.constexpr, FP32_DOT: tl.constexpr,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """dx for the input pixels of one phase (y mod stride_h, x mod stride_w) = program_id(2): only the
    taps that reach that phase are walked (stride 1: one phase, every tap)."""
    phase = tl.program_id(2)
    phase_y = phase // stride_w
    phase_x = phase % stride_w
    rows_y = tl.cdiv(H, stride_h)  # the phase's pixels: y = phase_y + stride_h * j (masked at H)
    rows_x = tl.cdiv(W, stride_w)
    # tap r reaches phase_y when (phase_y + pad_h - r) is a multiple of stride_h
    r_first = (phase_y + pad_h) % stride_h
    s_first = (phase_x + pad_w) % stride_w
    taps_r = tl.maximum(tl.cdiv(R - r_first, stride_h), 0)
    taps_s = tl.maximum(tl.cdiv(S - s_first, stride_w), 0)

    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    jx = offs_m % rows_x
    jy = (offs_m // rows_x) % rows_y
    img = offs_m // (rows_x * rows_y)
    in_y = phase_y + jy * stride_h
    in_x = phase_x + jx * stride_w
    m_ok = (img < batch) & (in_y < H) & (in_x < W)
    n_ok = offs_n < C_in
    K = R * S * C_in
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    co_blocks = tl.cdiv(C_out, BLOCK_K)
    for it in range(0, taps_r * taps_s * co_blocks):
        tap = it // co_blocks
        co0 = (it - tap * co_blocks) * BLOCK_K
        r = r_first + (tap // taps_s) * stride_h
        s = s_first + (tap % taps_s) * stride_w
        # exact divisions: (in_y + pad_h - r) is a multiple of stride_h (kept non-negative before //)
        oy = (in_y + pad_h - r + stride_h * R) // stride_h - R
        ox = (in_x + pad_w - s + stride_w * S) // stride_w - S
        row_ok = m_ok & (oy >= 0) & (oy < out_h) & (ox >= 0) & (ox < out_w)
        offs_co = co0 + tl.arange(0, BLOCK_K)
        co_ok = offs_co < C_out
        pixel = ((img * out_h + oy) * out_w + ox).to(tl.int64) * C_out
        a = tl.load(dz_ptr + pixel[:, None] + offs_co[None, :], mask=row_ok[:, None] & co_ok[None, :], other=0.0)
        b = tl.load(w_ptr + offs_co[:, None].to(tl.int64) * K + (r * S + s) * C_in + offs_n[None, :],
                    mask=co_ok[:, None] & n_ok[None, :], other=0.0)
        if FP32_DOT:
            acc = tl.dot(a.to(tl.float32), b.to(tl.float32), acc, input_precision="ieee")
        else:
            acc = tl.dot(a, b, acc)
    out = (((img * H + in_y) * W + in_x).to(tl.int64) * C_in)[:, None] + offs_n[None, :]
    tl.store(dx_ptr + out, acc.to(dx_ptr.dtype.element_ty), mask=m_ok[:, None] & n_ok[None, :])


@triton.autotune(configs=_CONV2D_WGRAD_CONFIGS,
                 key=["out_h", "out_w", "stride_h", "stride_w", "C_in", "C_out", "R", "S", "rows_bucket"],
                 restore_value=["dw_ptr"], do_bench=_AUTOTUNE_BENCH)
@triton.jit
def _conv2d_wgrad_kernel(dz_ptr, x_ptr, dw_ptr, batch, H, W, C_in, out_h, out_w, C_out,
                         stride_h, stride_w, pad_h, pad_w, rows_bucket, R: tl.constexpr, S: tl.constexpr,
                         GATHER_K: tl.constexpr, FP32_DOT: tl.constexpr,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """dw[C_out, R*S*C_in] += dz^T @ im2col(x) over this program's share (program_id(2)) of the pixels;
    dw is an fp32 buffer the launcher zeroed."""
    M = batch * out_h * out_w  # the reduction
    RSC = R * S * C_in
    offs_co = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    co_ok = offs_co < C_out
    if GATHER_K:  # columns are the flat (r, s, c) index
        offs_col = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
        col_ok = offs_col < RSC
        c = offs_col % C_in
        tap_r = (offs_col // C_in) // S
        tap_s = (offs_col // C_in) % S
    else:  # columns are one tap's block of channels
        c_blocks = tl.cdiv(C_in, BLOCK_N)
        tap = tl.program_id(1) // c_blocks
        c = (tl.program_id(1) - tap * c_blocks) * BLOCK_N + tl.arange(0, BLOCK_N)
        col_ok = c < C_in
        tap_r = tap // S + tl.zeros((BLOCK_N,), dtype=tl.int32)
        tap_s = tap % S + tl.zeros((BLOCK_N,), dtype=tl.int32)
        offs_col = (tap // S * S + tap % S) * C_in + c
    splits = tl.num_programs(2)
    chunk = tl.cdiv(tl.cdiv(M, BLOCK_K), splits) * BLOCK_K
    start = tl.program_id(2) * chunk
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(start, tl.minimum(start + chunk, M), BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K)
        k_ok = offs_k < M
        ox = offs_k % out_w
        oy = (offs_k // out_w) % out_h
        img = offs_k // (out_w * out_h)
        dzt = tl.load(dz_ptr + offs_k[:, None].to(tl.int64) * C_out + offs_co[None, :],
                      mask=k_ok[:, None] & co_ok[None, :], other=0.0)
        iy = (oy * stride_h - pad_h)[:, None] + tap_r[None, :]
        ix = (ox * stride_w - pad_w)[:, None] + tap_s[None, :]
        b_ok = k_ok[:, None] & col_ok[None, :] & (iy >= 0) & (iy < H) & (ix >= 0) & (ix < W)
        pixel = (img[:, None] * H + iy) * W + ix
        b = tl.load(x_ptr + pixel.to(tl.int64) * C_in + c[None, :], mask=b_ok, other=0.0)
        if FP32_DOT:
            acc = tl.dot(tl.trans(dzt).to(tl.float32), b.to(tl.float32), acc, input_precision="ieee")
        else:
            acc = tl.dot(tl.trans(dzt), b, acc)
    out = offs_co[:, None].to(tl.int64) * RSC + offs_col[None, :]
    tl.atomic_add(dw_ptr + out, acc, mask=co_ok[:, None] & col_ok[None, :])


@triton.jit
def _conv2d_rows_tile(row_tile, rows, C, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """Tile ``row_tile`` of channel block program_id(1) of a row-major [rows, C] matrix, [BLOCK_R, BLOCK_C]:
    (element offsets, their mask, the channels, the channels' mask)."""
    offs_r = tl.cast(row_tile, tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)  # (tl.cast: the interpreter's ints)
    offs_c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    c_ok = offs_c < C
    return offs_r[:, None] * C + offs_c[None, :], (offs_r < rows)[:, None] & c_ok[None, :], offs_c, c_ok


@triton.jit
def _conv2d_dz_kernel(dy_ptr, z_ptr, dz_ptr, partial_ptr, rows, C, row_blocks, SILU: tl.constexpr,
                      SUM: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """The backward's epilogue over the [rows, C] matrix in [BLOCK_R pixels, BLOCK_C channels] tiles: program
    (p, c) walks row tiles p, p + P, p + 2P, ... (P = num_programs(0)) of channel block c, computing
    dz = dy * silu'(z) with silu'(z) = s (1 + z (1 - s)), s = sigmoid(z) (SILU; dz = dy otherwise), and (SUM)
    adds dz into an fp32 tile, summed over its rows once at the end into row p of ``partial``: one pass over
    dy and z instead of a second one over dz, and P partial rows for ``_conv2d_column_sum_kernel`` to sum
    into d bias, not one a tile."""
    if SUM:
        acc = tl.zeros((BLOCK_R, BLOCK_C), dtype=tl.float32)
    for row_tile in range(tl.program_id(0), row_blocks, tl.num_programs(0)):
        offs, mask, offs_c, c_ok = _conv2d_rows_tile(row_tile, rows, C, BLOCK_R, BLOCK_C)
        dz = tl.load(dy_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        if SILU:
            z = tl.load(z_ptr + offs, mask=mask, other=0.0).to(tl.float32)
            s = tl.sigmoid(z)
            dz = dz * s * (1.0 + z * (1.0 - s))
            tl.store(dz_ptr + offs, dz.to(dz_ptr.dtype.element_ty), mask=mask)
        if SUM:
            acc += dz
    if SUM:
        offs_c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
        tl.store(partial_ptr + tl.program_id(0).to(tl.int64) * C + offs_c, tl.sum(acc, axis=0), mask=offs_c < C)


@triton.jit
def _conv2d_column_sum_kernel(partial_ptr, out_ptr, parts, C, BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr):
    """out[c] = the sum of column c of the fp32 [parts, C] partial sums, in out's dtype: BLOCK_P rows at a
    time into an fp32 tile, summed once at the end (a fixed order: deterministic)."""
    offs_c = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    c_ok = offs_c < C
    acc = tl.zeros((BLOCK_P, BLOCK_C), dtype=tl.float32)
    for start in range(0, parts, BLOCK_P):
        offs_p = start + tl.arange(0, BLOCK_P)
        acc += tl.load(partial_ptr + offs_p[:, None].to(tl.int64) * C + offs_c[None, :],
                       mask=(offs_p < parts)[:, None] & c_ok[None, :], other=0.0)
    tl.store(out_ptr + offs_c, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty), mask=c_ok)


@triton.jit
def _conv2d_epilogue_kernel(c_ptr, bias_ptr, res_ptr, z_ptr, y_ptr, rows, C, HAS_BIAS: tl.constexpr,
                            HAS_RESIDUAL: tl.constexpr, STORE_Z: tl.constexpr, SILU: tl.constexpr,
                            BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """The template's epilogue after a conv it did not run (cuDNN's, ``conv2d_cudnn_forward``), one pass over
    the [rows, C] output c: z = c + bias + residual (kept when STORE_Z), y = silu(z) (SILU) or z; y may be c."""
    offs, mask, offs_c, c_ok = _conv2d_rows_tile(tl.program_id(0), rows, C, BLOCK_R, BLOCK_C)
    acc = tl.load(c_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    _conv2d_epilogue(acc, offs_c, c_ok, offs, mask, bias_ptr, res_ptr, z_ptr, y_ptr, HAS_BIAS, HAS_RESIDUAL, STORE_Z, SILU)


class _Launcher:
    """``kernel[grid](*args, **constexprs)``; after the first call for a key, the compiled kernel itself.

    The first call for a key goes through Triton (autotuning, compilation, heuristics) and records a
    plan: the compiled kernel, the grid it was launched on and the value of every constexpr parameter.
    Later calls with the same key launch that plan directly: no autotuner lookup, no argument binding,
    no grid function. The caller builds ``key`` from what it already knows of its arguments, and the key
    must hold everything Triton specialises on or the grid depends on: each tensor's dtype and 16-byte
    alignment (``data_ptr() & 15``), the device, and the value of every scalar argument. Under the
    interpreter (or with a config pre-hook) every call goes through Triton."""

    def __init__(self, kernel):
        self.kernel, self.heuristics, self.plans = kernel, [], {}
        self.direct = not _interpreting() and hasattr(triton, "knobs") and not any(
            c.pre_hook for c in getattr(kernel, "configs", []))
        jit = kernel
        while self.direct and not isinstance(jit, triton.runtime.jit.JITFunction):
            if hasattr(jit, "values"):  # a triton.heuristics layer
                self.heuristics.append(jit.values)
            jit = getattr(jit, "fn", None)
            self.direct = jit is not None
        self.params = jit.params if self.direct else []
        self.runtime = triton.knobs.runtime if self.direct else None
        self.raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        self.direct = self.direct and self.raw_stream is not None

    def __call__(self, key, grid, *args, **constexprs):
        plan = self.plans.get(key)
        if plan is None:
            return self._first(key, grid, args, constexprs)
        run, grid, function, packed, tail, compiled = plan
        enter, leave = self.runtime.launch_enter_hook, self.runtime.launch_exit_hook
        stream = self.raw_stream(torch._C._cuda_getDevice())
        if (enter is None or not getattr(enter, "calls", True)) and (leave is None or not getattr(leave, "calls", True)):
            run(grid[0], grid[1], grid[2], stream, function, packed, None, None, None, *args, *tail)
        else:  # a launch hook is installed (a profiler): give it what Triton's own launch would
            values = (*args, *tail)
            run(grid[0], grid[1], grid[2], stream, function, packed, compiled.launch_metadata(grid, stream, *values),
                enter, leave, *values)
        return compiled

    def _first(self, key, grid, args, constexprs):
        compiled = self.kernel[grid](*args, **constexprs)
        if not self.direct or compiled is None:
            return compiled
        config = getattr(self.kernel, "best_config", None)
        meta = {**constexprs, **(config.all_kwargs() if config is not None else {})}
        named = {p.name: a for p, a in zip(self.params, args)}
        for values in reversed(self.heuristics):
            meta.update({name: rule({**named, **meta}) for name, rule in values.items()})
        tail = tuple(meta[p.name] if p.name in meta else p.default for p in self.params[len(args):])
        grid = tuple(grid({**named, **meta}) if callable(grid) else grid)
        if len(self.plans) > 1024:
            self.plans.clear()
        self.plans[key] = (compiled.run, (*grid, 1, 1)[:3], compiled.function, compiled.packed_metadata, tail, compiled)
        return compiled


_conv2d_fwd_launch = _Launcher(_conv2d_fwd_kernel)
_conv2d_dgrad_launch = _Launcher(_conv2d_dgrad_kernel)
_conv2d_wgrad_launch = _Launcher(_conv2d_wgrad_kernel)
_conv2d_dz_launch = _Launcher(_conv2d_dz_kernel)
_conv2d_column_sum_launch = _Launcher(_conv2d_column_sum_kernel)
_conv2d_epilogue_launch = _Launcher(_conv2d_epilogue_kernel)
_conv2d_gemm_launch = _Launcher(_conv2d_gemm_kernel)


def _pair(v) -> tuple[int, int]:
    return (int(v), int(v)) if isinstance(v, int) else (int(v[0]), int(v[1]))


def conv2d_out_size(size: int, kernel: int, stride: int, pad: int) -> int:
    return (size + 2 * pad - kernel) // stride + 1


def _conv2d_nhwc(t: torch.Tensor) -> torch.Tensor:
    """The NHWC [N, H, W, C] view of ``t`` (given NHWC), contiguous."""
    return t if t.is_contiguous() else t.contiguous()


_CONV2D_PADDED_WEIGHTS: dict = {}
_CONV2D_DESCRIPTORS: dict = {}  # (pointer, shape, strides, dtype) of the weight -> its descriptor (host time)
# forward keys whose autotuner chose a config that reads the weight's or the input's descriptor not: key ->
# (weight descriptor, input descriptor) the chosen config reads, the others left out from then on; emptied
# when the autotuner's config list is replaced (a list of TMA configs alone needs its descriptors)
_CONV2D_POINTER_KEYS: dict = {"configs": None, "keys": {}}


def _conv2d_weight_descriptor(weight: torch.Tensor):
    """A TMA descriptor over the weight as [C_out, R*S, C_in_padded] (channels padded with zeros to a
    multiple of 8, so every stride is a multiple of 16 bytes); None where the path is unavailable."""
    if not _tma_available() or weight.element_size() != 2:
        return None
    c_out, r, s, c_in = weight.shape
    padded = -(-c_in // 8) * 8
    w3 = weight.reshape(c_out, r * s, c_in)
    if padded != c_in or w3.data_ptr() % 16:
        key = (weight.data_ptr(), weight._version, tuple(weight.shape), weight.dtype)
        w3 = _CONV2D_PADDED_WEIGHTS.get(key)
        if w3 is None:
            w3 = torch.zeros(c_out, r * s, padded, dtype=weight.dtype, device=weight.device)
            w3[:, :, :c_in] = weight.reshape(c_out, r * s, c_in)
            _CONV2D_PADDED_WEIGHTS.clear()  # one padded copy at a time: the last weight seen
            _CONV2D_PADDED_WEIGHTS[key] = w3
    bn, bk = _CONV2D_TMA_BLOCK
    key = (w3.data_ptr(), tuple(w3.shape), tuple(w3.stride()), w3.dtype)
    desc = _CONV2D_DESCRIPTORS.get(key)  # the cached one holds w3, so its memory cannot be reused meanwhile
    if desc is None:
        desc = _TensorDescriptor(w3, list(w3.shape), list(w3.stride()), [bn, 1, bk])
        if len(_CONV2D_DESCRIPTORS) >= 64:
            _CONV2D_DESCRIPTORS.clear()
        _CONV2D_DESCRIPTORS[key] = desc
    return desc


def _conv2d_input_descriptor(x: torch.Tensor, R: int, S: int, stride, padding):
    """A TMA descriptor over a 1x1, stride-1, unpadded conv's input as the matrix [M, C_in] (the GEMM's
    A operand), box (128, 64); None where the filter gathers (any other shape), the channels are not a
    multiple of 8 (16 bytes of bf16) or the path is unavailable.

    Measured and dropped (H200, 2026-12-02 06:39Z, ``results/conv_h200/conv_explore_taps.jsonl``): the same
    matrix for a 3x3 at stride 1 padded by 1, each tap's box shifted by (r - 1) * W + (s - 1) rows and the
    rows in the padding zeroed in registers before the dot: every 3x3 layer ran 12-33% slower with it than
    with its best config without it (the masked operand goes through registers, not straight from shared
    memory to the tensor cores)."""
    batch, H, W, c_in = x.shape
    if (R, S, *stride, *padding) != (1, 1, 1, 1, 0, 0) or c_in % 8 or x.data_ptr() % 16:
        return None
    if not _tma_available() or x.element_size() != 2:
        return None
    return _TensorDescriptor(x, [batch * H * W, c_in], [c_in, 1], [_CONV2D_TMA_ROWS, _CONV2D_TMA_BLOCK[1]])


def _conv2d_box_shape(out_h: int, out_w: int, rows: int = _CONV2D_TMA_ROWS) -> tuple[int, int, int]:
    """(BOX_B, BOX_H, BOX_W) with BOX_B * BOX_H * BOX_W = rows: BOX_W the largest power of 2 that divides
    out_w (no column of a box past the output), BOX_H out_h rounded up to a power of 2 (at most what is
    left), BOX_B images for the rest (ResNet's 56, 28, 14, 7: 1x16x8, 1x32x4, 4x16x2, 16x8x1; one row of
    boxes in eight, 12.5%, past the output)."""
    bw = 1
    while bw * 2 <= rows and out_w % (bw * 2) == 0:
        bw *= 2
    bh = min(triton.next_power_of_2(out_h), rows // bw)
    return rows // (bw * bh), bh, bw


_CONV2D_BOX_WITH_WEIGHT_DESCRIPTOR = """Why no A_BOX config reads the weight through its descriptor (USE_TMA):
gpu/conv/probe_box.py on the H200 (2026-12-02 12:22Z, results/conv_h200/probe_box.jsonl) ran each A_BOX
config alone on 7 layers at batch 32, 64 and 128, twice on the same inputs, against float64. The two configs
with the weight's descriptor too (128 x 128, 8 warps, 3 and 4 stages) computed wrong outputs (max relative
error 0.06-0.15) on every stride-1 3x3 layer at batch 128 and on some at 32 and 64, boxes of one image
(s1.3x3, s2.3x3) and of several (s3.3x3, s4.3x3) alike, and two launches on the same inputs differed: a
race, not the box arithmetic. The configs with the weight through pointers were right, and the same
from launch to launch, on every layer and batch, including boxes of 4 and 16 images. Their compiled
loop (TTGIR/PTX dumped by that probe) keeps the input's box in 3 buffers and the weight's in 4, reads
the box into registers (the reshape to the tile's rows) and syncs the CTA before each refill; where the
race is was not found."""


def _conv2d_box_descriptor(x: torch.Tensor, stride, out_h: int, out_w: int):
    """(descriptor, (BOX_B, BOX_H, BOX_W)) over the input as the 5-D view [N, H / stride_h, stride_h,
    W / stride_w, stride_w * C_in] (the row and column phases split off, the column phase beside the
    channels), box [BOX_B, BOX_H, 1, BOX_W, 64]: one tap's input for a box of output pixels is one box of
    it (BOX_B images: several at the 14x14 and 7x7 outputs); (None, (0, 0, 0)) where the strides do not
    divide H and W, a strided layer's channels are no multiple of 64 (a channel block must not run into
    the next column phase's channels), the channels are no multiple of 8 (16 bytes of bf16) or the path
    is unavailable. Only configs that read the weight through pointers read it
    (``_CONV2D_BOX_WITH_WEIGHT_DESCRIPTOR``)."""
    batch, H, W, c_in = x.shape
    sh, sw = stride
    if (H % sh or W % sw or (sw > 1 and c_in % _CONV2D_TMA_BLOCK[1]) or c_in % 8 or x.data_ptr() % 16
            or not _tma_available() or x.element_size() != 2):
        return None, (0, 0, 0)
    box = _conv2d_box_shape(out_h, out_w)
    shape = [batch, H // sh, sh, W // sw, sw * c_in]
    strides = [H * W * c_in, sh * W * c_in, W * c_in, sw * c_in, 1]
    return _TensorDescriptor(x, shape, strides, [box[0], box[1], 1, box[2], _CONV2D_TMA_BLOCK[1]]), box


_CONV2D_SPLIT_NEEDS: dict = {"configs": None}
_CONV2D_SPLIT_BUFFERS: dict = {}  # (device, stream) -> (partials, arrivals), the most recently made last
_CONV2D_SPLIT_STREAMS = 8


def _conv2d_split_needs(M: int, c_out: int, c_in: int, R: int, S: int, rows: bool, device_index: int):
    """(fp32 partial elements, tiles) the split-K configs the autotuner may run here need at most: the
    ones the prune keeps, or the one config when the autotuner holds a single config (it runs without
    pruning). Cached per shape until the autotuner's config list changes."""
    configs = _conv2d_fwd_kernel.configs
    if _CONV2D_SPLIT_NEEDS["configs"] is not configs:
        _CONV2D_SPLIT_NEEDS.clear()
        _CONV2D_SPLIT_NEEDS["configs"] = configs
    key = (M, c_out, c_in, R, S, rows, device_index)
    needs = _CONV2D_SPLIT_NEEDS.get(key)
    if needs is None:
        sms = _conv2d_sms(device_index) if device_index >= 0 else 132
        partials, tiles = 1, 1
        for c in configs:
            runs = len(configs) == 1 or _conv2d_split_fits(c, M, c_out, _conv2d_k_iterations(c, c_in, R, S, rows), sms)
            if c.kwargs["SPLIT_K"] > 1 and runs:
                t = _conv2d_tiles(c, M, c_out)
                partials = max(partials, t * c.kwargs["SPLIT_K"] * c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"])
                tiles = max(tiles, t)
        needs = _CONV2D_SPLIT_NEEDS[key] = (partials, tiles)
    return needs


def _conv2d_split_buffers(device: torch.device, needs):
    """The split-K partial tiles (fp32) and the per-tile arrival counters (int32, zero between launches:
    each tile's last program resets its counter), one pair per (device, stream), grown as needed."""
    index = device.index if device.type == "cuda" else -1
    stream = torch._C._cuda_getCurrentRawStream(index) if index >= 0 else 0
    buffers = _CONV2D_SPLIT_BUFFERS.get((index, stream))
    if buffers is None or buffers[0].numel() < needs[0] or buffers[1].numel() < needs[1]:
        size = needs if buffers is None else (max(needs[0], buffers[0].numel()), max(needs[1], buffers[1].numel()))
        buffers = (torch.empty(size[0], dtype=torch.float32, device=device),
                   torch.zeros(size[1], dtype=torch.int32, device=device))
        _CONV2D_SPLIT_BUFFERS.pop((index, stream), None)
        while len(_CONV2D_SPLIT_BUFFERS) >= _CONV2D_SPLIT_STREAMS:  # streams come and go: keep the latest few
            # the caching allocator reuses a dropped buffer only on its stream, after the work queued there
            _CONV2D_SPLIT_BUFFERS.pop(next(iter(_CONV2D_SPLIT_BUFFERS)))
        _CONV2D_SPLIT_BUFFERS[(index, stream)] = buffers
    return buffers


def _conv2d_checked_out_size(x, weight, residual, stride, padding, activation) -> tuple[int, int]:
    """(out_h, out_w), or a ValueError naming what does not fit: NHWC x, [C_out, R, S, C_in] weight, the
    residual in the output's NHWC shape, activation None or "silu"."""
    if x.dim() != 4 or weight.dim() != 4:
        raise ValueError(f"conv2d: x must be NHWC [N, H, W, C] and weight [C_out, R, S, C_in]; got {tuple(x.shape)} and {tuple(weight.shape)}")
    if x.shape[3] != weight.shape[3]:
        raise ValueError(f"conv2d: x has {x.shape[3]} channels, weight expects {weight.shape[3]}")
    if activation not in (None, "silu"):
        raise ValueError(f"conv2d: activation {activation!r} is not one of None, 'silu'")
    (sh, sw), (ph, pw) = stride, padding
    H, W, R, S = x.shape[1], x.shape[2], weight.shape[1], weight.shape[2]
    out_h, out_w = conv2d_out_size(H, R, sh, ph), conv2d_out_size(W, S, sw, pw)
    if out_h <= 0 or out_w <= 0:
        raise ValueError(f"conv2d: a {R}x{S} filter with padding {list(padding)} does not fit a {H}x{W} input")
    out = (x.shape[0], out_h, out_w, weight.shape[0])
    if residual is not None and tuple(residual.shape) != out:
        raise ValueError(f"conv2d: residual {tuple(residual.shape)} is not the output's NHWC shape {out}")
    return out_h, out_w


def conv2d_forward(x: torch.Tensor, weight: torch.Tensor, bias=None, residual=None, stride=1, padding=0,
                   activation: str | None = None, keep_z: bool = False):
    """(y, z) for NHWC x [N, H, W, C_in] and weight [C_out, R, S, C_in]: y = act(conv + bias + residual)
    as NHWC [N, out_h, out_w, C_out]; z, the pre-activation, when ``keep_z`` and there is an activation."""
    (sh, sw), (ph, pw) = _pair(stride), _pair(padding)
    out_h, out_w = _conv2d_checked_out_size(x, weight, residual, (sh, sw), (ph, pw), activation)
    batch, H, W, c_in = x.shape
    c_out, R, S, _ = weight.shape
    x, weight = _conv2d_nhwc(x), weight.contiguous()
    y = x.new_empty(batch, out_h, out_w, c_out)
    residual = _conv2d_nhwc(residual) if residual is not None else None
    silu = activation == "silu"
    z = torch.empty_like(y) if keep_z and silu else None
    if y.numel() == 0:
        return y, z
    if _conv2d_gemm_fits(x, weight, bias, residual, (sh, sw), (ph, pw)) and _conv2d_gemm_choice(
            x, weight, bias, residual, z, y, (sh, sw), (ph, pw), out_h, out_w, silu) == "gemm":
        otherwise = lambda: _conv2d_gemm_forward(x, weight, bias, residual, z, y, (sh, sw), out_h, out_w, silu)  # noqa: E731
    else:
        otherwise = lambda: _conv2d_implicit_forward(x, weight, bias, residual, z, y, (sh, sw), (ph, pw),  # noqa: E731
                                                     out_h, out_w, silu)
    box = _conv2d_box_choice(x, weight, bias, residual, z, y, (sh, sw), (ph, pw), out_h, out_w, silu, otherwise)
    if box is not None:
        _conv2d_box_forward(x, weight, bias, residual, z, y, (sh, sw), (ph, pw), out_h, out_w, silu, *box)
    else:
        otherwise()
    return y, z


def _conv2d_implicit_forward(x, weight, bias, residual, z, y, stride, padding, out_h, out_w, silu):
    """The implicit-GEMM kernel (_conv2d_fwd_kernel) into y (and z): any filter, stride and padding."""
    (sh, sw), (ph, pw) = stride, padding
    batch, H, W, c_in = x.shape
    c_out, R, S, _ = weight.shape
    row_k = _conv2d_row_k(c_in, S)
    M = batch * out_h * out_w
    device_index = x.get_device()
    base = (x.shape, weight.shape, sh, sw, ph, pw, x.dtype, weight.dtype, device_index, x.data_ptr() & 15,
            weight.data_ptr() & 15, bias is not None, residual is not None, silu, z is not None,
            None if bias is None else (bias.dtype, bias.data_ptr() & 15),
            None if residual is None else (residual.dtype, residual.data_ptr() & 15))
    # descriptors cost the host about 30 us each per launch (Triton encodes them on every call): none that
    # this key's chosen config does not read
    pointer_keys = _CONV2D_POINTER_KEYS["keys"]
    if _CONV2D_POINTER_KEYS["configs"] is not _conv2d_fwd_kernel.configs:
        _CONV2D_POINTER_KEYS["configs"] = _conv2d_fwd_kernel.configs
        pointer_keys.clear()
    use_w, use_x = pointer_keys.get(base, (True, True))
    w_desc = _conv2d_weight_descriptor(weight) if use_w and not row_k else None
    x_desc = _conv2d_input_descriptor(x, R, S, (sh, sw), (ph, pw)) if use_x and not row_k else None
    box = (0, 0, 0)
    if x_desc is None and use_x and not row_k:
        x_desc, box = _conv2d_box_descriptor(x, (sh, sw), out_h, out_w)
    partials, arrivals = _conv2d_split_buffers(x.device, _conv2d_split_needs(M, c_out, c_in, R, S, bool(row_k), device_index))
    def grid(meta):
        if meta["A_BOX"] and meta["BOX_B"] > 0:
            row_tiles = -(-batch // box[0]) * -(-out_h // box[1]) * -(-out_w // box[2])
        else:
            row_tiles = -(-M // meta["BLOCK_M"])
        return (row_tiles * -(-c_out // meta["BLOCK_N"]), meta["SPLIT_K"])

    flags = dict(R=R, S=S, HAS_BIAS=bias is not None, HAS_RESIDUAL=residual is not None, SILU=silu,
                 STORE_Z=z is not None, ROW_K=row_k, FP32_DOT=_fp32_dot(x.dtype),
                 BOX_B=box[0], BOX_H=box[1], BOX_W=box[2])
    key = (*base, tuple(flags.values()), w_desc is None, x_desc is None)
    first = key not in _conv2d_fwd_launch.plans
    _conv2d_fwd_launch(key, grid, x, x_desc, weight, w_desc, bias, residual, z, y, partials, arrivals,
                       batch, H, W, c_in, out_h, out_w, c_out, sh, sw, ph, pw, M.bit_length(), **flags)
    if first and (w_desc is not None or x_desc is not None):
        chosen = getattr(_conv2d_fwd_kernel, "best_config", None)
        reads = None if chosen is None else (bool(chosen.kwargs.get("USE_TMA")),
                                             bool(chosen.kwargs.get("A_TMA") or chosen.kwargs.get("A_BOX")))
        if reads is not None and reads != (w_desc is not None, x_desc is not None):
            if len(pointer_keys) >= 4096:
                pointer_keys.clear()
            pointer_keys[base] = reads  # later calls: only the descriptors it reads (the same config, its other compile)


# the 1x1 layers' path: "auto" times the GEMM kernel against the implicit GEMM once per key on a GPU and keeps the
# faster; "gemm" or "implicit" forces one (TRITONIFY_CONV2D_GEMM)
_CONV2D_GEMM = {"mode": os.environ.get("TRITONIFY_CONV2D_GEMM", "auto"), "choices": {}}


def _conv2d_gemm_fits(x, weight, bias, residual, stride, padding) -> bool:
    """Whether the GEMM kernel runs this layer: a 1x1 filter without padding, the strides dividing H and W,
    2-byte operands of one dtype on a GPU with TMA, channels and every tensor's address 16-byte aligned
    (a descriptor's strides and base must be)."""
    batch, H, W, c_in = x.shape
    c_out, R, S, _ = weight.shape
    if (R, S, *padding) != (1, 1, 0, 0) or H % stride[0] or W % stride[1] or c_in % 8 or c_out % 8:
        return False
    if x.element_size() != 2 or weight.dtype != x.dtype or not _tma_available():
        return False
    return (x.data_ptr() % 16 == 0 and weight.data_ptr() % 16 == 0
            and (residual is None or (residual.data_ptr() % 16 == 0 and residual.element_size() == 2)))


def _conv2d_gemm_allocator(size: int, alignment: int, stream):
    """The device descriptors' workspace (128 bytes per descriptor per program)."""
    return torch.empty(size, dtype=torch.int8, device="cpu" if _interpreting() or not torch.cuda.is_available() else "cuda")


def _conv2d_gemm_box_w(out_w: int, stride) -> int:
    """0 at stride 1 (the [M, C_in] matrix); else the tile's columns: out_w rounded up to a power of 2."""
    return 0 if tuple(stride) == (1, 1) else triton.next_power_of_2(out_w)


def _conv2d_gemm_forward(x, weight, bias, residual, z, y, stride, out_h, out_w, silu):
    """The GEMM kernel into y (and z) for a layer ``_conv2d_gemm_fits`` accepts."""
    from triton.runtime import _allocation

    if _allocation._allocator.get() is _allocation._NULL_ALLOCATOR:  # the device descriptors need a workspace
        triton.set_allocator(_conv2d_gemm_allocator)
    (sh, sw) = stride
    batch, H, W, c_in = x.shape
    c_out = weight.shape[0]
    M = batch * out_h * out_w
    box_w = _conv2d_gemm_box_w(out_w, stride)
    sms = _conv2d_sms(x.get_device())

    def grid(meta):
        if box_w:
            rows = -(-(batch * out_h) // (meta["BLOCK_M"] // box_w)) * -(-out_w // box_w)
        else:
            rows = -(-M // meta["BLOCK_M"])
        return (min(rows * -(-c_out // meta["BLOCK_N"]), sms * meta["CTAS"]),)

    key = (x.shape, weight.shape, sh, sw, x.dtype, x.get_device(), bias is not None, residual is not None, silu,
           z is not None, None if bias is None else (bias.dtype, bias.data_ptr() & 15),
           None if residual is None else residual.dtype)
    _conv2d_gemm_launch(key, grid, x, weight, bias, residual, z, y, batch, H, W, c_in, out_h, out_w, c_out, sh, sw,
                        M.bit_length(), HAS_BIAS=bias is not None, HAS_RESIDUAL=residual is not None, SILU=silu,
                        STORE_Z=z is not None, BOX_W=box_w, FP32_DOT=_fp32_dot(x.dtype))


def _conv2d_gemm_choice(x, weight, bias, residual, z, y, stride, padding, out_h, out_w, silu) -> str:
    """"gemm" or "implicit" for this 1x1 layer: in "auto" mode, the first call for a key runs both (each
    autotuned), times each (graph replay, as the autotuner times its configs) and keeps the faster for the
    key; inside a graph capture before that, the implicit GEMM."""
    mode = _CONV2D_GEMM["mode"]
    if mode in ("gemm", "implicit"):
        return mode
    if _AUTOTUNE_BENCH is None:
        return "implicit"
    key = (tuple(x.shape), tuple(weight.shape), tuple(stride), x.dtype, x.get_device(), bias is not None,
           residual is not None, silu, z is not None)
    gemm = lambda: _conv2d_gemm_forward(x, weight, bias, residual, z, y, stride, out_h, out_w, silu)  # noqa: E731
    implicit = lambda: _conv2d_implicit_forward(x, weight, bias, residual, z, y, stride, padding,  # noqa: E731
                                                out_h, out_w, silu)
    return _conv2d_timed_choice(_CONV2D_GEMM, key, {"gemm": gemm, "implicit": implicit}, "implicit")


# the box path: "auto" times the Gluon box kernel's configs against the path the layer takes otherwise once per
# key on a Hopper GPU and keeps the fastest; "off" never runs it, "on" always where it fits, with the first config
# split TRITONIFY_CONV2D_BOX_SPLITS ways (default 1)
_CONV2D_BOX = {"mode": os.environ.get("TRITONIFY_CONV2D_BOX", "auto"), "choices": {}, "times": {},
               "splits": os.environ.get("TRITONIFY_CONV2D_BOX_SPLITS", "1")}


def _conv2d_forced_splits() -> int:
    """The "on" mode's split count (TRITONIFY_CONV2D_BOX_SPLITS): 1 to _CONV2D_BOX_MAX_SPLITS."""
    value = str(_CONV2D_BOX["splits"]).strip()
    if not value.isdigit() or not 1 <= int(value) <= _CONV2D_BOX_MAX_SPLITS:
        raise ValueError(f"TRITONIFY_CONV2D_BOX_SPLITS={value!r}: expected a whole number from 1 to {_CONV2D_BOX_MAX_SPLITS}")
    return int(value)


def _conv2d_box_fits(x, weight, stride) -> bool:
    """Whether the Gluon box kernel may run this layer: Gluon and TMA on the GPU, 2-byte operands of one dtype,
    the strides dividing H and W, the channels a multiple of the 64-channel K step (the weight's block for one
    tap must not run into the next tap's channels), 16-byte aligned addresses. A 1x1 at stride 1 without
    padding runs as one row of pixels (``_conv2d_box_geometry``)."""
    batch, H, W, c_in = x.shape
    c_out, R, S, _ = weight.shape
    if gluon is None or not _tma_available() or x.element_size() != 2 or weight.dtype != x.dtype:
        return False
    if H % stride[0] or W % stride[1] or c_in % 64 or c_out % 8:
        return False
    return x.data_ptr() % 16 == 0 and weight.data_ptr() % 16 == 0


def _conv2d_box_geometry(x, weight, stride, padding, out_h, out_w, block_m: int):
    """(batch, H, W, out_h, out_w, (BOX_B, BOX_H, BOX_W)) the box kernel sees: the layer's own, with boxes
    from _conv2d_box_shape; for a 1x1 at stride 1 without padding the pixels as one image of one row
    (the [M, C_in] matrix), boxes of BLOCK_M consecutive pixels (none past the output but the last)."""
    batch, H, W, _ = x.shape
    if tuple(weight.shape[1:3]) == (1, 1) and tuple(stride) == (1, 1) and tuple(padding) == (0, 0):
        M = batch * H * W
        return 1, 1, M, 1, M, (1, 1, block_m)
    return batch, H, W, out_h, out_w, _conv2d_box_shape(out_h, out_w, block_m)


def _conv2d_box_tiles(box, batch: int, out_h: int, out_w: int, c_out: int, block_n: int) -> int:
    return -(-batch // box[0]) * -(-out_h // box[1]) * -(-out_w // box[2]) * -(-c_out // block_n)


def _conv2d_box_forward(x, weight, bias, residual, z, y, stride, padding, out_h, out_w, silu, config, splits=1):
    """The Gluon box kernel into y (and z) with ``config`` (a _BoxConfig); ``splits`` > 1 splits each tile's
    K loop over that many programs (the single-partition kernel only)."""
    from triton.runtime import _allocation

    if _allocation._allocator.get() is _allocation._NULL_ALLOCATOR:  # the device descriptors need a workspace
        triton.set_allocator(_conv2d_gemm_allocator)
    bm, bn, bk, warps, stages, ctas, specialized = config
    assert splits == 1 or not specialized, "the warp-specialized box kernel does not split K"
    (sh, sw), (ph, pw) = stride, padding
    c_in = x.shape[3]
    c_out, R, S, _ = weight.shape
    batch, H, W, out_h, out_w, box = _conv2d_box_geometry(x, weight, stride, padding, out_h, out_w, bm)
    dtype = gl.bfloat16 if x.dtype == torch.bfloat16 else gl.float16
    a_layout = gl.NVMMASharedLayout.get_default_for([box[0], box[1], 1, box[2], bk], dtype)
    b_layout = gl.NVMMASharedLayout.get_default_for([bn, bk], dtype)
    mma = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[warps, 1], instr_shape=[16, bn, 16])
    tiles = _conv2d_box_tiles(box, batch, out_h, out_w, c_out, bn)
    grid = (min(tiles * splits, _conv2d_sms(x.get_device()) * ctas),)
    bias, residual, z = (t if t is not None else y for t in (bias, residual, z))
    lanes_n = min(32, bn // 8)
    out_layout = gl.BlockedLayout(size_per_thread=[1, 8], threads_per_warp=[32 // lanes_n, lanes_n],
                                  warps_per_cta=[warps, 1], order=[1, 0])
    shape = dict(R=R, S=S, HAS_BIAS=bias is not y, HAS_RESIDUAL=residual is not y, SILU=silu, STORE_Z=z is not y,
                 BOX_B=box[0], BOX_H=box[1], BOX_W=box[2], BLOCK_N=bn, BLOCK_K=bk, STAGES=stages, GROUP_M=8,
                 A_LAYOUT=a_layout, B_LAYOUT=b_layout, MMA_LAYOUT=mma, OUT_LAYOUT=out_layout)
    if specialized:
        # registers: the MMA warps and one warpgroup for the load warp share the SM's 64K with ``ctas`` programs
        maxnreg = min(255, 65536 // (32 * (warps + 4) * ctas)) // 8 * 8
        _conv2d_box_ws_kernel[grid](x, weight, bias, residual, z, y, batch, H, W, c_in, out_h, out_w, c_out, sh, sw,
                                    ph, pw, **shape, num_warps=warps, maxnreg=maxnreg)
        return
    partials, arrivals = y, y
    if splits > 1:
        partials, arrivals = _conv2d_split_buffers(x.device, (tiles * splits * bm * bn, tiles))
    _conv2d_box_kernel[grid](x, weight, bias, residual, z, y, partials, arrivals, batch, H, W, c_in, out_h, out_w,
                             c_out, sh, sw, ph, pw, splits, **shape, REDUCE=splits > 1, num_warps=warps)


def _conv2d_box_candidates(x, weight, stride, padding, out_h, out_w):
    """(config, splits) pairs the choice times for this layer: the configs whose N tile suits C_out (64 for
    C_out <= 64, 128 for up to 128, 128 or 256 above), each at one split and, for the single-partition
    kernel where the tiles leave programs idle, at 2, 4 and 8 splits while the previous count left some
    idle and every split keeps at least four K steps."""
    c_out, R, S, c_in = weight.shape
    wide = triton.next_power_of_2(c_out)
    sms = _conv2d_sms(x.get_device())
    pairs = []
    for config in _CONV2D_BOX_CONFIGS:
        if not min(128, wide) <= config.block_n <= max(64, wide):
            continue
        pairs.append((config, 1))
        if config.specialized:
            continue
        batch, _, _, oh, ow, box = _conv2d_box_geometry(x, weight, stride, padding, out_h, out_w, config.block_m)
        tiles = _conv2d_box_tiles(box, batch, oh, ow, c_out, config.block_n)
        steps = R * S * -(-c_in // config.block_k)
        splits = 2
        while splits <= _CONV2D_BOX_MAX_SPLITS and tiles * splits // 2 < sms * config.ctas and steps >= 4 * splits:
            pairs.append((config, splits))
            splits *= 2
    return pairs


def _conv2d_box_choice(x, weight, bias, residual, z, y, stride, padding, out_h, out_w, silu, otherwise):
    """The (config, splits) to run this layer's box kernel with, or None for ``otherwise`` (the path the
    layer takes without the box kernel, a no-argument call): in "auto" mode the first call for a key runs
    each candidate (_conv2d_box_candidates; compiling it), times each (graph replay, as the autotuner times
    its configs) and keeps the fastest for the key; inside a graph capture before that, None. Candidates
    this GPU or Triton cannot compile or run are skipped."""
    mode = _CONV2D_BOX["mode"]
    if mode == "off" or not _conv2d_box_fits(x, weight, stride):
        return None
    if mode == "on":  # forced: the first config, whatever the layer, split as asked where it can be
        config = _CONV2D_BOX_CONFIGS[0]
        return config, 1 if config.specialized else _conv2d_forced_splits()
    candidates = _conv2d_box_candidates(x, weight, stride, padding, out_h, out_w)
    if _AUTOTUNE_BENCH is None or not candidates:
        return None
    key = (tuple(x.shape), tuple(weight.shape), tuple(stride), tuple(padding), x.dtype, x.get_device(),
           bias is not None, residual is not None, silu, z is not None)
    choices = _CONV2D_BOX["choices"]
    if key in choices:
        return choices[key]
    if torch.cuda.is_current_stream_capturing():
        return None
    otherwise()
    best, best_ms = None, _conv2d_path_ms(otherwise)
    times = {"otherwise": best_ms}
    for config, splits in candidates:
        call = lambda: _conv2d_box_forward(x, weight, bias, residual, z, y, stride, padding, out_h,  # noqa: E731
                                           out_w, silu, config, splits)
        try:
            call()
        except Exception as exc:  # noqa: BLE001 - a config this GPU or Triton cannot compile or run is not a candidate
            times[(config, splits)] = f"{type(exc).__name__}: {str(exc)[:200]}"
            continue
        ms = times[(config, splits)] = _conv2d_path_ms(call)
        if ms < best_ms:
            best, best_ms = (config, splits), ms
    if len(choices) >= 4096:
        choices.clear()
        _CONV2D_BOX["times"].clear()
    choices[key] = best
    _CONV2D_BOX["times"][key] = times  # what the choice measured (ms), for gpu/conv/bench.py's records
    return best


def conv2d_dgrad(dz: torch.Tensor, weight: torch.Tensor, x_shape, stride=1, padding=0) -> torch.Tensor:
    """dx [N, H, W, C_in] from dz [N, out_h, out_w, C_out] (stride > 1: one subproblem per input phase)."""
    (sh, sw), (ph, pw) = _pair(stride), _pair(padding)
    batch, H, W, c_in = x_shape
    c_out, R, S, _ = weight.shape
    out_h, out_w = dz.shape[1], dz.shape[2]
    dz, weight = _conv2d_nhwc(dz), weight.contiguous()
    dx = dz.new_empty(batch, H, W, c_in)
    if dx.numel() == 0:
        return dx
    M = batch * (-(-H // sh)) * (-(-W // sw))
    grid = lambda meta: (-(-M // meta["BLOCK_M"]), -(-c_in // meta["BLOCK_N"]), sh * sw)  # noqa: E731
    key = (tuple(x_shape), dz.shape, weight.shape, sh, sw, ph, pw, dz.dtype, weight.dtype, dz.get_device(),
           dz.data_ptr() & 15, weight.data_ptr() & 15)
    _conv2d_dgrad_launch(key, grid, dz, weight, dx, batch, H, W, c_in, out_h, out_w, c_out, sh, sw, ph, pw,
                         M.bit_length(), R=R, S=S, FP32_DOT=_fp32_dot(dz.dtype))
    return dx


def _conv2d_wgrad_splits(tiles: int, reduction: int, block_k: int) -> int:
    """Programs along the pixel reduction: about two waves of 132 SMs, each at least 8 K blocks long."""
    want = max(1, -(-264 // max(tiles, 1)))
    return max(1, min(want, reduction // (8 * block_k)))


def conv2d_wgrad(dz: torch.Tensor, x: torch.Tensor, weight_shape, stride=1, padding=0) -> torch.Tensor:
    """dw [C_out, R, S, C_in] = dz^T @ im2col(x), in x's dtype (summed in fp32)."""
    (sh, sw), (ph, pw) = _pair(stride), _pair(padding)
    batch, H, W, c_in = x.shape
    c_out, R, S, _ = weight_shape
    out_h, out_w = dz.shape[1], dz.shape[2]
    dz, x = _conv2d_nhwc(dz), _conv2d_nhwc(x)
    dw = torch.zeros(c_out, R * S * c_in, dtype=torch.float32, device=x.device)
    M = batch * out_h * out_w
    if M == 0:
        return dw.reshape(c_out, R, S, c_in).to(x.dtype)
    gather = c_in < _CONV2D_GATHER_BELOW_CHANNELS

    def grid(meta):
        cols = -(-(R * S * c_in) // meta["BLOCK_N"]) if gather else R * S * -(-c_in // meta["BLOCK_N"])
        tiles = -(-c_out // meta["BLOCK_M"]) * cols
        return (-(-c_out // meta["BLOCK_M"]), cols, _conv2d_wgrad_splits(tiles, M, meta["BLOCK_K"]))

    key = (x.shape, dz.shape, tuple(weight_shape), sh, sw, ph, pw, dz.dtype, x.dtype, x.get_device(),
           dz.data_ptr() & 15, x.data_ptr() & 15)
    _conv2d_wgrad_launch(key, grid, dz, x, dw, batch, H, W, c_in, out_h, out_w, c_out, sh, sw, ph, pw,
                         M.bit_length(), R=R, S=S, GATHER_K=gather, FP32_DOT=_fp32_dot(x.dtype))
    return dw.reshape(c_out, R, S, c_in).to(x.dtype)


def conv2d_dz_dbias(dy: torch.Tensor, z: torch.Tensor | None, has_bias: bool):
    """(dz, d bias) in one pass: dz = d loss / d (conv + bias + residual) = dy * silu'(z) where there is an
    activation (z, the pre-activation, kept by the forward; a new tensor) and dy itself otherwise; d bias =
    dz summed over the pixels (fp32, in dy's dtype), None without a bias."""
    dy = _conv2d_nhwc(dy.reshape(z.shape) if z is not None else dy)
    z = _conv2d_nhwc(z) if z is not None else None  # the kernel reads both as row-major [rows, C]
    C = dy.shape[-1]
    rows = dy.numel() // max(C, 1)
    if (z is None and not has_bias) or dy.numel() == 0:
        return dy, (torch.zeros(C, dtype=dy.dtype, device=dy.device) if has_bias else None)
    return _conv2d_dz_dbias_tiled(dy, z, has_bias, *_conv2d_elementwise_tile(C))


def _conv2d_elementwise_tile(C: int) -> tuple[int, int, int]:
    """(BLOCK_R, BLOCK_C, warps) of the elementwise kernels over [pixels, C]: the backward's epilogue (dz, d
    bias) and the forward's epilogue after cuDNN (gpu/conv/probe_dz.py found no other tile worth switching to
    for the first on the training rows)."""
    block_c = min(128, triton.next_power_of_2(C))
    return max(16, 8192 // block_c), block_c, 8


# the dz kernel's programs per SM with d bias: each walks its row tiles with a stride of the grid's rows, so the
# partial rows d bias sums are a wave or two's worth, not one a tile (gpu/conv/probe_dz.py, the 12 training rows;
# 02:28Z: with 2, 10.8 against 14.8 us for one program a tile on s1.3x3 at batch 32, 43.4 against 60.5 at 128, and
# 4 or 8 slower than 2 on 11 of 12 rows; 02:48Z, as shipped: 6.2-44.1 us against torch.compile's 7.9-73.0). The
# 02:28Z probe retired the kernel's own finish of d bias (its last program summing the partial rows): 6.46 against
# 6.41 us for the column-sum kernel where it applied. dz alone (no bias) keeps a program a tile: walking with 2 per
# SM cost it 9.9 against 9.0 us on s1.3x3 at batch 32, 53.3 against 39.7 at 128 (02:48Z against 02:20Z).
_CONV2D_DZ_PROGRAMS_PER_SM = 2


def _conv2d_dz_grid(rows: int, C: int, block_r: int, block_c: int, device_index: int, summing: bool = True):
    """(row programs, channel blocks) of the dz kernel over [rows, C] in this tile, with d bias (summing) or not."""
    row_blocks, col_blocks = -(-rows // block_r), -(-C // block_c)
    if not summing:
        return row_blocks, col_blocks
    parts = int(_CONV2D_DZ_PROGRAMS_PER_SM * _conv2d_sms(device_index)) // col_blocks
    return max(1, min(row_blocks, parts)), col_blocks


def _conv2d_dz_dbias_tiled(dy, z, has_bias, block_r, block_c, warps):
    """conv2d_dz_dbias with the given tile (dy contiguous, in z's shape)."""
    C = dy.shape[-1]
    rows = dy.numel() // max(C, 1)
    dz = torch.empty_like(z) if z is not None else dy
    parts, col_blocks = _conv2d_dz_grid(rows, C, block_r, block_c, dy.get_device(), has_bias)
    partial = torch.empty(parts, C, dtype=torch.float32, device=dy.device) if has_bias else None
    key = (rows, C, dy.dtype, dy.get_device(), dy.data_ptr() & 15, z is not None, has_bias,
           None if z is None else (z.dtype, z.data_ptr() & 15), block_r, block_c, warps, parts)
    _conv2d_dz_launch(key, (parts, col_blocks), dy, z if z is not None else dy, dz, partial, rows, C,
                      -(-rows // block_r), SILU=z is not None, SUM=has_bias, BLOCK_R=block_r, BLOCK_C=block_c,
                      num_warps=warps)
    if not has_bias:
        return dz, None
    db = torch.empty(C, dtype=dy.dtype, device=dy.device)
    block_p = min(512, triton.next_power_of_2(parts))
    sum_c = max(4, min(triton.next_power_of_2(C), 4096 // block_p))
    _conv2d_column_sum_launch((parts, C, dy.dtype, dy.get_device(), block_p, sum_c), (-(-C // sum_c),),
                              partial, db, parts, C, BLOCK_P=block_p, BLOCK_C=sum_c, num_warps=4)
    return dz, db


def conv2d_cudnn_grads(dz, x, weight, stride, padding, needs=(True, True)):
    """(dx, dweight) through PyTorch's own convolution backward (cuDNN on a GPU) on the channels-last
    NCHW views of the same NHWC memory; the results back in NHWC / [C_out, R, S, C_in]."""
    (sh, sw), (ph, pw) = _pair(stride), _pair(padding)
    tf32 = torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.allow_tf32 = False  # fp32 stays fp32 (the template's products are IEEE fp32 too)
    try:
        dx, dw, _ = torch.ops.aten.convolution_backward(
            dz.permute(0, 3, 1, 2), x.permute(0, 3, 1, 2), weight.permute(0, 3, 1, 2), None, [sh, sw], [ph, pw],
            [1, 1], False, [0, 0], 1, [bool(needs[0]), bool(needs[1]), False])
    finally:
        torch.backends.cudnn.allow_tf32 = tf32
    return (_conv2d_nhwc(dx.permute(0, 2, 3, 1)) if needs[0] else None,
            _conv2d_nhwc(dw.permute(0, 2, 3, 1)) if needs[1] else None)


def conv2d_cudnn_forward(x, weight, bias=None, residual=None, stride=1, padding=0, activation=None, keep_z=False):
    """``conv2d_forward``'s (y, z) with the conv through PyTorch's (cuDNN on a GPU, on the channels-last NCHW
    views of the same NHWC memory) and the epilogue through ``_conv2d_epilogue_kernel``, one pass after it."""
    (sh, sw), (ph, pw) = _pair(stride), _pair(padding)
    _conv2d_checked_out_size(x, weight, residual, (sh, sw), (ph, pw), activation)
    tf32 = torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.allow_tf32 = False  # fp32 stays fp32, as in the template's products
    try:
        c = torch.nn.functional.conv2d(x.permute(0, 3, 1, 2), weight.permute(0, 3, 1, 2), None, (sh, sw), (ph, pw))
    finally:
        torch.backends.cudnn.allow_tf32 = tf32
    y = _conv2d_nhwc(c.permute(0, 2, 3, 1))
    silu = activation == "silu"
    z = torch.empty_like(y) if keep_z and silu else None
    if (bias is None and residual is None and not silu) or y.numel() == 0:
        return y, z
    residual = _conv2d_nhwc(residual) if residual is not None else None
    C = y.shape[-1]
    rows = y.numel() // C
    block_r, block_c, warps = _conv2d_elementwise_tile(C)
    key = (rows, C, y.dtype, y.get_device(), y.data_ptr() & 15, bias is not None, residual is not None, silu,
           None if bias is None else (bias.dtype, bias.data_ptr() & 15),
           None if residual is None else (residual.dtype, residual.data_ptr() & 15),
           None if z is None else z.data_ptr() & 15)
    _conv2d_epilogue_launch(key, (-(-rows // block_r), -(-C // block_c)), y, bias, residual, z, y, rows, C,
                            HAS_BIAS=bias is not None, HAS_RESIDUAL=residual is not None, STORE_Z=z is not None,
                            SILU=silu, BLOCK_R=block_r, BLOCK_C=block_c, num_warps=warps)
    return y, z


# the forward's choice per layer, for ``conv2d`` and its autograd: "auto" times the template's kernels against
# cuDNN's conv followed by the template's epilogue kernel once per key on a GPU (bf16, fp16) and keeps the faster;
# "template" or "cudnn" forces one (TRITONIFY_CONV2D_FORWARD). ``conv2d_forward`` is always the template's kernels.
_CONV2D_FORWARD = {"mode": os.environ.get("TRITONIFY_CONV2D_FORWARD", "auto"), "choices": {}}


def _conv2d_forward_choice(x, weight, bias, residual, stride, padding, activation, keep_z) -> str:
    """"template" or "cudnn" for this layer's forward: in "auto" mode on a GPU, for bf16 and fp16, the first
    call for a key runs both (the template autotuned), times each (graph replay, as the autotuner times its
    configs) and keeps the faster for the key; elsewhere, or inside a graph capture before that, the template."""
    mode = _CONV2D_FORWARD["mode"]
    if mode in ("template", "cudnn"):
        return mode
    if mode != "auto":
        raise ValueError(f"TRITONIFY_CONV2D_FORWARD={mode!r}: expected auto, template or cudnn")
    if _AUTOTUNE_BENCH is None or x.device.type != "cuda" or x.dtype not in (torch.bfloat16, torch.float16):
        return "template"
    key = (tuple(x.shape), tuple(weight.shape), _pair(stride), _pair(padding), x.dtype, weight.dtype, x.get_device(),
           None if bias is None else bias.dtype, None if residual is None else residual.dtype, activation,
           bool(keep_z))
    template = lambda: conv2d_forward(x, weight, bias, residual, stride, padding, activation, keep_z)  # noqa: E731
    cudnn = lambda: conv2d_cudnn_forward(x, weight, bias, residual, stride, padding, activation, keep_z)  # noqa: E731
    return _conv2d_timed_choice(_CONV2D_FORWARD, key, {"template": template, "cudnn": cudnn}, "template")


def conv2d_fastest_forward(x, weight, bias=None, residual=None, stride=1, padding=0, activation=None, keep_z=False):
    """``conv2d_forward``'s (y, z) from the template's kernels or from cuDNN's conv and the template's epilogue
    kernel, whichever ``_conv2d_forward_choice`` found faster for the layer."""
    path = _conv2d_forward_choice(x, weight, bias, residual, stride, padding, activation, keep_z)
    run = conv2d_cudnn_forward if path == "cudnn" else conv2d_forward
    return run(x, weight, bias, residual, stride, padding, activation, keep_z)


# the backward's choice per layer: "auto" times the template's dgrad and wgrad against PyTorch's convolution
# backward (cuDNN) once per key on a GPU and keeps the faster of each; "template" or "cudnn" forces one
_CONV2D_BACKWARD = {"mode": os.environ.get("TRITONIFY_CONV2D_BACKWARD", "auto"), "choices": {}}


def _conv2d_backward_choice(dz, x, weight, stride, padding):
    """(dgrad, wgrad), each "template" or "cudnn", for this layer. In "auto" mode on a GPU, for bf16 and
    fp16 (fp32 stays on the template: PyTorch's convolution may use TF32), the first call for a key times
    each of the four (graph replay, as the autotuner times its configs) after the template has tuned, and
    the faster of each pair is kept for the key; elsewhere the template."""
    mode = _CONV2D_BACKWARD["mode"]
    if mode in ("template", "cudnn"):
        return mode, mode
    if _AUTOTUNE_BENCH is None or dz.device.type != "cuda" or dz.dtype not in (torch.bfloat16, torch.float16):
        return "template", "template"
    key = (tuple(x.shape), tuple(weight.shape), tuple(dz.shape), _pair(stride), _pair(padding), dz.dtype,
           x.dtype, weight.dtype, dz.get_device())
    choices = _CONV2D_BACKWARD["choices"]
    choice = choices.get(key)
    if choice is None and torch.cuda.is_current_stream_capturing():  # no timing inside a graph capture
        return "template", "template"
    if choice is None:
        conv2d_dgrad(dz, weight, x.shape, stride, padding)  # the template's autotuning first
        conv2d_wgrad(dz, x, weight.shape, stride, padding)
        times = [_conv2d_path_ms(f) for f in (
            lambda: conv2d_dgrad(dz, weight, x.shape, stride, padding),
            lambda: conv2d_cudnn_grads(dz, x, weight, stride, padding, (True, False)),
            lambda: conv2d_wgrad(dz, x, weight.shape, stride, padding),
            lambda: conv2d_cudnn_grads(dz, x, weight, stride, padding, (False, True)))]
        choice = ("template" if times[0] <= times[1] else "cudnn", "template" if times[2] <= times[3] else "cudnn")
        if len(choices) >= 4096:
            choices.clear()
        choices[key] = choice
    return choice


def _conv2d_timed_choice(table: dict, key, paths: dict, default: str) -> str:
    """The name of the faster of ``paths`` (name -> a call) for ``key``, from ``table["choices"]``; on a miss
    each path runs once (its own autotuning), then is timed (graph replay, as the autotuner times its configs)
    and the fastest is kept (ties to the first named); inside a graph capture before that, ``default``."""
    choices = table["choices"]
    choice = choices.get(key)
    if choice is None and torch.cuda.is_current_stream_capturing():
        return default
    if choice is None:
        for call in paths.values():
            call()
        times = {name: _conv2d_path_ms(call) for name, call in paths.items()}
        choice = min(times, key=times.get)
        if len(choices) >= 4096:
            choices.clear()
        choices[key] = choice
    return choice


def _conv2d_path_ms(call) -> float:
    t = _AUTOTUNE_BENCH(call, (0.5, 0.2, 0.8))  # the median first
    return float(t[0] if isinstance(t, (list, tuple)) else t)


def conv2d_grads(dz, x, weight, db, stride, padding, needs=(True, True, True, True)):
    """(dx, dweight, dbias, dresidual) from dz = d loss / d (conv + bias + residual) and d bias (from
    ``conv2d_dz_dbias``, or None); dx and dweight each from the template or from cuDNN, whichever
    ``_conv2d_backward_choice`` found faster for the layer."""
    dgrad, wgrad = _conv2d_backward_choice(dz, x, weight, stride, padding) if needs[0] or needs[1] else (None, None)
    cudnn = (needs[0] and dgrad == "cudnn", needs[1] and wgrad == "cudnn")
    dx, dw = conv2d_cudnn_grads(dz, x, weight, stride, padding, cudnn) if any(cudnn) else (None, None)
    if needs[0] and dgrad == "template":
        dx = conv2d_dgrad(dz, weight, x.shape, stride, padding)
    if needs[1] and wgrad == "template":
        dw = conv2d_wgrad(dz, x, weight.shape, stride, padding)
    return dx, dw, (db if needs[2] else None), (dz if needs[3] else None)


class Conv2dFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, residual, stride, padding, activation):
        y, z = conv2d_fastest_forward(x, weight, bias, residual, stride, padding, activation, keep_z=True)
        ctx.save_for_backward(x, weight, z)
        ctx.conv = (bias is not None, residual is not None, stride, padding)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, weight, z = ctx.saved_tensors
        has_bias, has_residual, stride, padding = ctx.conv
        needs = ctx.needs_input_grad
        dz, db = conv2d_dz_dbias(dy, z, has_bias and needs[2])
        dx, dw, db, dr = conv2d_grads(dz, x, weight, db, stride, padding,
                                      (needs[0], needs[1], needs[2], has_residual and needs[3]))
        return dx, dw, db, dr, None, None, None


def conv2d(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None,
           residual: torch.Tensor | None = None, stride=1, padding=0, activation: str | None = None) -> torch.Tensor:
    """``act(F.conv2d(x, w, bias) + residual)`` on NHWC tensors: x [N, H, W, C_in], weight
    [C_out, R, S, C_in] (an nn.Conv2d weight ``.permute(0, 2, 3, 1)``), residual and the result
    [N, out_h, out_w, C_out]; activation None or "silu"."""
    if torch.compiler.is_compiling():  # one custom op: no graph break
        return _conv2d_fwd_op(x, weight, bias, residual, list(_pair(stride)), list(_pair(padding)), activation)[0]
    tensors = [t for t in (x, weight, bias, residual) if t is not None]
    if not (torch.is_grad_enabled() and any(t.requires_grad for t in tensors)):
        return conv2d_fastest_forward(x, weight, bias, residual, stride, padding, activation)[0]
    return Conv2dFunction.apply(x, weight, bias, residual, stride, padding, activation)


def conv2d_fold_bn(weight: torch.Tensor, bias: torch.Tensor | None, bn: torch.nn.BatchNorm2d):
    """(weight, bias) of the conv followed by ``bn`` in eval mode (running statistics), folded:
    w' = w * gamma / sqrt(var + eps) per output channel, b' = (b - mean) * gamma / sqrt(var + eps) + beta.
    ``weight`` is [C_out, ...] in either layout; computed in fp32, returned in weight's dtype."""
    scale = bn.weight.float() * torch.rsqrt(bn.running_var.float() + bn.eps)
    folded_w = (weight.float() * scale.reshape(-1, *([1] * (weight.dim() - 1)))).to(weight.dtype)
    b = bias.float() if bias is not None else torch.zeros_like(scale)
    folded_b = ((b - bn.running_mean.float()) * scale + bn.bias.float()).to(weight.dtype)
    return folded_w, folded_b


def _custom_op(fn, fake, grad=None, setup=None):
    """``fn`` as a torch custom op, so ``torch.compile`` keeps the call whole (no graph break) and never
    traces its body; ``fake`` gives its outputs' shapes, ``grad``/``setup`` its autograd formula. The
    op is named after this module and the function, so copies of a template in several files do not
    collide."""
    namespace = "tritonify_" + "".join(c if c.isalnum() else "_" for c in __name__)
    op = torch.library.custom_op(f"{namespace}::{fn.__name__}", fn, mutates_args=())
    op.register_fake(fake)
    if grad is not None:
        op.register_autograd(grad, setup_context=setup)
    return op


def _conv2d_fwd(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, residual: torch.Tensor | None,
                stride: list[int], padding: list[int], activation: str | None) -> tuple[torch.Tensor, torch.Tensor]:
    y, z = conv2d_fastest_forward(x, weight, bias, residual, stride, padding, activation, keep_z=True)
    return y, (z if z is not None else y.new_empty(0))


def _conv2d_fwd_fake(x, weight, bias, residual, stride, padding, activation):
    out_h = conv2d_out_size(x.shape[1], weight.shape[1], stride[0], padding[0])
    out_w = conv2d_out_size(x.shape[2], weight.shape[2], stride[1], padding[1])
    y = x.new_empty(x.shape[0], out_h, out_w, weight.shape[0])
    return y, (torch.empty_like(y) if activation == "silu" else y.new_empty(0))


def _conv2d_bwd(dy: torch.Tensor, z: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, has_bias: bool,
                stride: list[int], padding: list[int]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    dz, db = conv2d_dz_dbias(dy, z if z.numel() else None, has_bias)
    dz = dz.clone() if not z.numel() else dz  # a custom op's output may not alias its input
    dx, dw, db, _ = conv2d_grads(dz, x, weight, db, stride, padding, (True, True, has_bias, False))
    return dx, dw, (db if db is not None else dz.new_empty(0)), dz


def _conv2d_bwd_fake(dy, z, x, weight, has_bias, stride, padding):
    return (torch.empty_like(x), torch.empty_like(weight),
            dy.new_empty(weight.shape[0] if has_bias else 0), torch.empty_like(dy))


def _conv2d_grad(ctx, dy, dz_unused):
    x, weight, z = ctx.saved_tensors
    has_bias, has_residual, stride, padding = ctx.conv
    dx, dw, db, dz = _conv2d_bwd_op(dy, z, x, weight, has_bias, stride, padding)
    return dx, dw, (db if has_bias else None), (dz if has_residual else None), None, None, None


def _conv2d_setup(ctx, inputs, output):
    x, weight, bias, residual, stride, padding, _ = inputs
    ctx.save_for_backward(x, weight, output[1])
    ctx.conv = (bias is not None, residual is not None, stride, padding)


_conv2d_bwd_op = _custom_op(_conv2d_bwd, _conv2d_bwd_fake)
_conv2d_fwd_op = _custom_op(_conv2d_fwd, _conv2d_fwd_fake, grad=_conv2d_grad, setup=_conv2d_setup)


def conv2d_reference(x, weight, bias=None, residual=None, stride=1, padding=0, activation=None):
    """PyTorch eager on the same NHWC tensors: cuDNN's conv on channels-last views, then the epilogue ops."""
    xc = x.permute(0, 3, 1, 2)  # NCHW view of NHWC memory: channels_last
    wc = weight.permute(0, 3, 1, 2)
    z = torch.nn.functional.conv2d(xc, wc, bias, stride=stride, padding=padding).permute(0, 2, 3, 1)
    if residual is not None:
        z = z + residual
    return torch.nn.functional.silu(z) if activation == "silu" else z


def conv2d_inputs(shape, dtype, device):
    """(x, weight, bias, residual, stride, padding, activation) for shape (N, H, W, C_in, C_out, R, stride)."""
    batch, H, W, c_in, c_out, R, stride = shape
    x = torch.randn(batch, H, W, c_in, dtype=dtype, device=device)
    weight = torch.randn(c_out, R, R, c_in, dtype=dtype, device=device) / (R * R * c_in) ** 0.5
    out_h, out_w = conv2d_out_size(H, R, stride, R // 2), conv2d_out_size(W, R, stride, R // 2)
    bias = 0.1 * torch.randn(c_out, dtype=dtype, device=device)
    residual = torch.randn(batch, out_h, out_w, c_out, dtype=dtype, device=device)
    return x, weight, bias, residual, stride, R // 2, "silu"


def _conv2d_contract():
    """The benchmark contract (``tritonify bench THIS_FILE::conv2d``); None without tritonify."""
    try:
        from tritonify.kernels.bench import Contract
    except ImportError:
        return None
    return Contract(kernel="_conv2d_fwd_kernel", name="conv2d", entry=conv2d, inputs=conv2d_inputs,
                    reference=conv2d_reference,
                    shapes=[(32, 56, 56, CONV2D_CHANNELS, CONV2D_CHANNELS, 3, 1)], dtype=CONV2D_DTYPE, liger=None,
                    flops=lambda s: 2 * s[0] * (s[1] // s[6]) * (s[2] // s[6]) * s[4] * s[5] * s[5] * s[3],
                    target=0.9)


CONV2D_CONTRACT = _conv2d_contract()
