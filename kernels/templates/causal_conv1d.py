"""Depthwise causal conv1d, NLC, forward + backward with a fused SiLU (the Mamba / SSM short conv).

``y[b, t, c] = act(bias[c] + sum_k weight[c, k] * x[b, t - (width - 1) + k, c])`` with x [batch, seqlen,
channels] (channels contiguous: the layout the in-projection writes, no transpose), weight [channels,
width] (an ``nn.Conv1d(C, C, width, groups=C)`` weight ``[:, 0, :]``), width 2 to 4 (a narrower filter
is zero-padded on the left to 4 on the host, so one kernel serves them all), activation None or "silu".

Forward: one program per [BLOCK_L time steps, BLOCK_C channels] tile; the four shifted reads of x
are of the same rows (L1/L2 hits), so x is read from memory once and y written once.

Backward: one program per (channel block, batch row, chunk of time steps) walks its chunk block by
block. The SiLU is recomputed, not stored: dz(t + d) for d = 0..3 needs the pre-activation there,
z(t + d) from x(t + d - 3 .. t + d), so each block reads x at shifts -3..+3 and dy at 0..+3 (again the
same rows), then dx(t) = sum_d weight[3 - d] dz(t + d), and dweight, dbias accumulate in registers
over the chunk and are written as one partial per program (summed on the host in fp32: deterministic,
no atomics). Math is fp32 in registers.
"""
import os

import torch
import triton
import triton.language as tl

CAUSAL_CONV1D_CHANNELS = 4096
CAUSAL_CONV1D_DTYPE = "bfloat16"
CAUSAL_CONV1D_MAX_WIDTH = 4


def _interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def _autotune_configs(configs):
    """Every config on a GPU; the first alone on the CPU interpreter, which cannot time a choice."""
    return configs[:1] if _interpreting() or not torch.cuda.is_available() else configs


_CAUSAL_CONV1D_FWD_ALL_CONFIGS = [
    triton.Config({"BLOCK_L": 64, "BLOCK_C": 128}, num_warps=4),
    triton.Config({"BLOCK_L": 32, "BLOCK_C": 256}, num_warps=4),
    triton.Config({"BLOCK_L": 128, "BLOCK_C": 64}, num_warps=4),
    triton.Config({"BLOCK_L": 128, "BLOCK_C": 128}, num_warps=8),
]
_CAUSAL_CONV1D_BWD_ALL_CONFIGS = [
    triton.Config({"BLOCK_L": 32, "BLOCK_C": 128, "CHUNK_L": 512}, num_warps=4),
    triton.Config({"BLOCK_L": 64, "BLOCK_C": 64, "CHUNK_L": 512}, num_warps=4),
    triton.Config({"BLOCK_L": 16, "BLOCK_C": 256, "CHUNK_L": 256}, num_warps=4),
    triton.Config({"BLOCK_L": 64, "BLOCK_C": 128, "CHUNK_L": 1024}, num_warps=8),
]
_CAUSAL_CONV1D_FWD_CONFIGS = _autotune_configs(_CAUSAL_CONV1D_FWD_ALL_CONFIGS)
_CAUSAL_CONV1D_BWD_CONFIGS = _autotune_configs(_CAUSAL_CONV1D_BWD_ALL_CONFIGS)


@triton.jit
def _causal_conv1d_tap(x_ptr, rows, cols, t, seqlen, c_ok):
    """x[b, t, c] as fp32 for the tile's time steps t (zero outside [0, seqlen): the causal padding)."""
    ok = (t >= 0) & (t < seqlen)
    return tl.load(x_ptr + rows + t[:, None].to(tl.int64) * cols, mask=ok[:, None] & c_ok[None, :], other=0.0).to(tl.float32)


@triton.autotune(configs=_CAUSAL_CONV1D_FWD_CONFIGS, key=["seqlen", "channels"])
@triton.jit
def _causal_conv1d_fwd_kernel(x_ptr, w_ptr, bias_ptr, y_ptr, seqlen, channels, HAS_BIAS: tl.constexpr,
                              SILU: tl.constexpr, BLOCK_L: tl.constexpr, BLOCK_C: tl.constexpr):
    t = tl.program_id(0) * BLOCK_L + tl.arange(0, BLOCK_L)
    offs_c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    c_ok = offs_c < channels
    rows = tl.program_id(2).to(tl.int64) * seqlen * channels + offs_c[None, :]  # batch row b, channel c
    w0 = tl.load(w_ptr + offs_c * 4 + 0, mask=c_ok, other=0.0).to(tl.float32)[None, :]
    w1 = tl.load(w_ptr + offs_c * 4 + 1, mask=c_ok, other=0.0).to(tl.float32)[None, :]
    w2 = tl.load(w_ptr + offs_c * 4 + 2, mask=c_ok, other=0.0).to(tl.float32)[None, :]
    w3 = tl.load(w_ptr + offs_c * 4 + 3, mask=c_ok, other=0.0).to(tl.float32)[None, :]
    acc = (w0 * _causal_conv1d_tap(x_ptr, rows, channels, t - 3, seqlen, c_ok)
           + w1 * _causal_conv1d_tap(x_ptr, rows, channels, t - 2, seqlen, c_ok)
           + w2 * _causal_conv1d_tap(x_ptr, rows, channels, t - 1, seqlen, c_ok)
           + w3 * _causal_conv1d_tap(x_ptr, rows, channels, t, seqlen, c_ok))
    if HAS_BIAS:
        acc += tl.load(bias_ptr + offs_c, mask=c_ok, other=0.0).to(tl.float32)[None, :]
    if SILU:
        acc = acc * tl.sigmoid(acc)
    ok = (t < seqlen)[:, None] & c_ok[None, :]
    tl.store(y_ptr + rows + t[:, None].to(tl.int64) * channels, acc.to(y_ptr.dtype.element_ty), mask=ok)


@triton.jit
def _causal_conv1d_dz(dy_ptr, rows, cols, t, seqlen, c_ok, z, SILU: tl.constexpr):
    """d loss / d z at time steps t: dy there, times silu'(z) when the activation is fused."""
    dy = _causal_conv1d_tap(dy_ptr, rows, cols, t, seqlen, c_ok)
    if SILU:
        s = tl.sigmoid(z)
        dy = dy * s * (1.0 + z * (1.0 - s))
    return dy


@triton.autotune(configs=_CAUSAL_CONV1D_BWD_CONFIGS, key=["seqlen", "channels"], restore_value=["dw_part_ptr"])
@triton.jit
def _causal_conv1d_bwd_kernel(x_ptr, w_ptr, bias_ptr, dy_ptr, dx_ptr, dw_part_ptr, seqlen, channels,
                              HAS_BIAS: tl.constexpr, SILU: tl.constexpr,
                              BLOCK_L: tl.constexpr, BLOCK_C: tl.constexpr, CHUNK_L: tl.constexpr):
    """dx for this program's chunk of time steps; its partial sums [dweight (4 rows), dbias] as [5, BLOCK_C]."""
    offs_c = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    c_ok = offs_c < channels
    rows = tl.program_id(1).to(tl.int64) * seqlen * channels + offs_c[None, :]
    w0 = tl.load(w_ptr + offs_c * 4 + 0, mask=c_ok, other=0.0).to(tl.float32)[None, :]
    w1 = tl.load(w_ptr + offs_c * 4 + 1, mask=c_ok, other=0.0).to(tl.float32)[None, :]
    w2 = tl.load(w_ptr + offs_c * 4 + 2, mask=c_ok, other=0.0).to(tl.float32)[None, :]
    w3 = tl.load(w_ptr + offs_c * 4 + 3, mask=c_ok, other=0.0).to(tl.float32)[None, :]
    b = tl.zeros((1, BLOCK_C), dtype=tl.float32)
    if HAS_BIAS:
        b += tl.load(bias_ptr + offs_c, mask=c_ok, other=0.0).to(tl.float32)[None, :]
    dw0 = tl.zeros((BLOCK_L, BLOCK_C), dtype=tl.float32)
    dw1 = tl.zeros((BLOCK_L, BLOCK_C), dtype=tl.float32)
    dw2 = tl.zeros((BLOCK_L, BLOCK_C), dtype=tl.float32)
    dw3 = tl.zeros((BLOCK_L, BLOCK_C), dtype=tl.float32)
    db = tl.zeros((BLOCK_L, BLOCK_C), dtype=tl.float32)
    start = tl.program_id(2) * CHUNK_L
    for t0 in range(start, tl.minimum(start + CHUNK_L, seqlen), BLOCK_L):
        t = t0 + tl.arange(0, BLOCK_L)
        xm3 = _causal_conv1d_tap(x_ptr, rows, channels, t - 3, seqlen, c_ok)
        xm2 = _causal_conv1d_tap(x_ptr, rows, channels, t - 2, seqlen, c_ok)
        xm1 = _causal_conv1d_tap(x_ptr, rows, channels, t - 1, seqlen, c_ok)
        x0 = _causal_conv1d_tap(x_ptr, rows, channels, t, seqlen, c_ok)
        z0 = x0  # the z arguments are unused without the activation
        z1 = x0
        z2 = x0
        z3 = x0
        if SILU:  # the pre-activation at t .. t+3, recomputed from x at t-3 .. t+3
            xp1 = _causal_conv1d_tap(x_ptr, rows, channels, t + 1, seqlen, c_ok)
            xp2 = _causal_conv1d_tap(x_ptr, rows, channels, t + 2, seqlen, c_ok)
            xp3 = _causal_conv1d_tap(x_ptr, rows, channels, t + 3, seqlen, c_ok)
            z0 = b + w0 * xm3 + w1 * xm2 + w2 * xm1 + w3 * x0
            z1 = b + w0 * xm2 + w1 * xm1 + w2 * x0 + w3 * xp1
            z2 = b + w0 * xm1 + w1 * x0 + w2 * xp1 + w3 * xp2
            z3 = b + w0 * x0 + w1 * xp1 + w2 * xp2 + w3 * xp3
        dz0 = _causal_conv1d_dz(dy_ptr, rows, channels, t, seqlen, c_ok, z0, SILU)
        dz1 = _causal_conv1d_dz(dy_ptr, rows, channels, t + 1, seqlen, c_ok, z1, SILU)
        dz2 = _causal_conv1d_dz(dy_ptr, rows, channels, t + 2, seqlen, c_ok, z2, SILU)
        dz3 = _causal_conv1d_dz(dy_ptr, rows, channels, t + 3, seqlen, c_ok, z3, SILU)
        dx = w3 * dz0 + w2 * dz1 + w1 * dz2 + w0 * dz3
        ok = (t < seqlen)[:, None] & c_ok[None, :]
        tl.store(dx_ptr + rows + t[:, None].to(tl.int64) * channels, dx.to(dx_ptr.dtype.element_ty), mask=ok)
        dw0 += dz0 * xm3
        dw1 += dz0 * xm2
        dw2 += dz0 * xm1
        dw3 += dz0 * x0
        db += dz0
    part = (tl.program_id(1) * tl.num_programs(2) + tl.program_id(2)).to(tl.int64) * 5 * channels + offs_c
    tl.store(dw_part_ptr + part, tl.sum(dw0, axis=0), mask=c_ok)
    tl.store(dw_part_ptr + part + channels, tl.sum(dw1, axis=0), mask=c_ok)
    tl.store(dw_part_ptr + part + 2 * channels, tl.sum(dw2, axis=0), mask=c_ok)
    tl.store(dw_part_ptr + part + 3 * channels, tl.sum(dw3, axis=0), mask=c_ok)
    tl.store(dw_part_ptr + part + 4 * channels, tl.sum(db, axis=0), mask=c_ok)


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


_causal_conv1d_fwd_launch = _Launcher(_causal_conv1d_fwd_kernel)
_causal_conv1d_bwd_launch = _Launcher(_causal_conv1d_bwd_kernel)


def _causal_conv1d_width4(weight: torch.Tensor) -> torch.Tensor:
    """weight [C, width] as [C, 4], contiguous, zero-padded on the left (the oldest taps)."""
    width = weight.shape[1]
    if not 1 <= width <= CAUSAL_CONV1D_MAX_WIDTH:
        raise ValueError(f"causal_conv1d: filter width {width} is not 1..{CAUSAL_CONV1D_MAX_WIDTH}")
    if width == 4:
        return weight.contiguous()
    return torch.nn.functional.pad(weight, (4 - width, 0))


def _causal_conv1d_check(x: torch.Tensor, weight: torch.Tensor, activation) -> None:
    if x.dim() != 3 or weight.dim() != 2:
        raise ValueError(f"causal_conv1d: x must be [batch, seqlen, channels] and weight [channels, width]; "
                         f"got {tuple(x.shape)} and {tuple(weight.shape)}")
    if x.shape[2] != weight.shape[0]:
        raise ValueError(f"causal_conv1d: x has {x.shape[2]} channels, weight has {weight.shape[0]}")
    if activation not in (None, "silu"):
        raise ValueError(f"causal_conv1d: activation {activation!r} is not one of None, 'silu'")


def causal_conv1d_forward(x: torch.Tensor, weight: torch.Tensor, bias=None, activation=None) -> torch.Tensor:
    _causal_conv1d_check(x, weight, activation)
    x = x if x.is_contiguous() else x.contiguous()
    w4 = _causal_conv1d_width4(weight)
    y = torch.empty_like(x)
    batch, seqlen, channels = x.shape
    if y.numel():
        grid = lambda meta: (-(-seqlen // meta["BLOCK_L"]), -(-channels // meta["BLOCK_C"]), batch)  # noqa: E731
        key = (x.shape, x.dtype, w4.dtype, x.get_device(), x.data_ptr() & 15, bias is None, activation)
        _causal_conv1d_fwd_launch(key, grid, x, w4, bias, y, seqlen, channels,
                                  HAS_BIAS=bias is not None, SILU=activation == "silu")
    return y


def causal_conv1d_backward(dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, bias=None, activation=None):
    """(dx, dweight [C, width], dbias or None), the SiLU recomputed from x."""
    x = x if x.is_contiguous() else x.contiguous()
    dy = dy if dy.is_contiguous() else dy.contiguous()
    w4 = _causal_conv1d_width4(weight)
    batch, seqlen, channels = x.shape
    dx = torch.empty_like(x)
    if x.numel() == 0:
        return dx, torch.zeros_like(weight), (torch.zeros_like(bias) if bias is not None else None)
    # one partial per (batch row, chunk): CHUNK_L is a config value, so the buffer holds the most chunks
    smallest_chunk = min(c.kwargs["CHUNK_L"] for c in _causal_conv1d_bwd_kernel.configs)
    parts = torch.zeros(batch * -(-seqlen // smallest_chunk), 5, channels, dtype=torch.float32, device=x.device)
    grid = lambda meta: (-(-channels // meta["BLOCK_C"]), batch, -(-seqlen // meta["CHUNK_L"]))  # noqa: E731
    key = (x.shape, x.dtype, dy.dtype, w4.dtype, x.get_device(), x.data_ptr() & 15, dy.data_ptr() & 15,
           bias is None, activation)
    _causal_conv1d_bwd_launch(key, grid, x, w4, bias, dy, dx, parts, seqlen, channels,
                              HAS_BIAS=bias is not None, SILU=activation == "silu")
    sums = parts.sum(0)  # unused partials (a longer chunk) are zeros
    width = weight.shape[1]
    dw = sums[4 - width:4].t().to(weight.dtype, copy=True)  # copies: no output aliases another
    db = sums[4].to(bias.dtype, copy=True) if bias is not None else None
    return dx, dw, db


class CausalConv1dFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, activation):
        y = causal_conv1d_forward(x, weight, bias, activation)
        ctx.save_for_backward(x, weight, bias)
        ctx.activation = activation
        return y

    @staticmethod
    def backward(ctx, dy):
        x, weight, bias = ctx.saved_tensors
        dx, dw, db = causal_conv1d_backward(dy, x, weight, bias, ctx.activation)
        return dx, dw, db, None


def causal_conv1d(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None,
                  activation: str | None = None) -> torch.Tensor:
    """Depthwise causal conv over the sequence of x [batch, seqlen, channels]; weight [channels, width]."""
    if torch.compiler.is_compiling():  # one custom op: no graph break
        return _causal_conv1d_fwd_op(x, weight, bias, activation)
    tensors = [t for t in (x, weight, bias) if t is not None]
    if not (torch.is_grad_enabled() and any(t.requires_grad for t in tensors)):
        return causal_conv1d_forward(x, weight, bias, activation)
    return CausalConv1dFunction.apply(x, weight, bias, activation)


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


def _causal_conv1d_fwd(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
                       activation: str | None) -> torch.Tensor:
    return causal_conv1d_forward(x, weight, bias, activation)


def _causal_conv1d_bwd(dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
                       activation: str | None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    dx, dw, db = causal_conv1d_backward(dy, x, weight, bias, activation)
    return dx, dw, (db if db is not None else dx.new_empty(0))


def _causal_conv1d_grad(ctx, dy):
    x, weight, bias = ctx.saved_tensors
    dx, dw, db = _causal_conv1d_bwd_op(dy, x, weight, bias, ctx.activation)
    return dx, dw, (db if bias is not None else None), None


def _causal_conv1d_setup(ctx, inputs, output):
    x, weight, bias, activation = inputs
    ctx.save_for_backward(x, weight, bias)
    ctx.activation = activation


_causal_conv1d_bwd_op = _custom_op(
    _causal_conv1d_bwd,
    lambda dy, x, weight, bias, activation: (torch.empty_like(x), torch.empty_like(weight),
                                             torch.empty_like(bias) if bias is not None else x.new_empty(0)))
_causal_conv1d_fwd_op = _custom_op(_causal_conv1d_fwd, lambda x, weight, bias, activation: torch.empty_like(x),
                                   grad=_causal_conv1d_grad, setup=_causal_conv1d_setup)


def causal_conv1d_reference(x, weight, bias=None, activation=None):
    """PyTorch eager: F.conv1d (groups = channels) on the [batch, channels, seqlen] view of x, left
    padding width - 1 (the output's first seqlen steps), then the activation."""
    seqlen, width = x.shape[1], weight.shape[1]
    y = torch.nn.functional.conv1d(x.transpose(1, 2), weight.unsqueeze(1), bias, padding=width - 1,
                                   groups=x.shape[2])[..., :seqlen].transpose(1, 2)
    return torch.nn.functional.silu(y) if activation == "silu" else y


def causal_conv1d_inputs(shape, dtype, device):
    batch, seqlen, channels = shape
    x = torch.randn(batch, seqlen, channels, dtype=dtype, device=device)
    weight = torch.randn(channels, 4, dtype=dtype, device=device) / 2
    bias = 0.1 * torch.randn(channels, dtype=dtype, device=device)
    return x, weight, bias, "silu"


def _causal_conv1d_contract():
    """The benchmark contract (``tritonify bench THIS_FILE::causal_conv1d``); None without tritonify."""
    try:
        from tritonify.kernels.bench import Contract
    except ImportError:
        return None
    return Contract(kernel="_causal_conv1d_fwd_kernel", name="causal_conv1d", entry=causal_conv1d,
                    inputs=causal_conv1d_inputs, reference=causal_conv1d_reference,
                    shapes=[(4, 2048, CAUSAL_CONV1D_CHANNELS), (4, 8192, CAUSAL_CONV1D_CHANNELS)],
                    dtype=CAUSAL_CONV1D_DTYPE, liger=None, target=0.8)


CAUSAL_CONV1D_CONTRACT = _causal_conv1d_contract()
