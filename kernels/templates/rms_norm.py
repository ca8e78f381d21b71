"""Fused RMSNorm, forward and backward: ``y = x / sqrt(mean(x**2) + eps) * weight``.

Forward: each step normalises ROWS rows held in registers (one read of x, one write of y) and
keeps 1/rms per row for the backward; the autotuner also tries a persistent grid (PPS programs per
SM looping over the rows). On the H200 every config lands within 0.3% of the others at 16384x4096:
the kernel is at the DRAM roof (Tritonify's H200 template measurements). Backward: each program walks a strided set of rows, writes
dx and accumulates its share of dweight in fp32; the shares are summed by one small reduction.
Statistics are computed in fp32 whatever the input dtype (Llama casting).
"""
import functools
import os

import torch
import triton
import triton.language as tl

RMS_NORM_HIDDEN = 4096
RMS_NORM_DTYPE = "bfloat16"
RMS_NORM_MAX_HIDDEN = 65536  # one row must fit in one program's registers


def _interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def _autotune_configs(configs):
    """Every config on a GPU; the first alone on the CPU interpreter, which cannot time a choice."""
    return configs[:1] if _interpreting() or not torch.cuda.is_available() else configs


def _prune_rows(configs, named_args, **kwargs):
    """Drop multi-row configs whose tile would not fit in registers for this row width."""
    block_n = kwargs.get("BLOCK_N", named_args.get("BLOCK_N", 1))
    kept = [c for c in configs if c.kwargs["ROWS"] == 1 or c.kwargs["ROWS"] * block_n <= 16384]
    return kept or configs[:1]


@triton.autotune(
    configs=_autotune_configs([
        # ROWS rows per step; PPS > 0 makes the grid persistent (PPS programs per SM, each looping over
        # row blocks with the next block's loads issued during this one's arithmetic, STAGES deep)
        triton.Config({"ROWS": 1, "PPS": 0, "STAGES": 1}, num_warps=8),
        triton.Config({"ROWS": 1, "PPS": 0, "STAGES": 1}, num_warps=4),
        triton.Config({"ROWS": 1, "PPS": 0, "STAGES": 1}, num_warps=16),
        triton.Config({"ROWS": 2, "PPS": 0, "STAGES": 1}, num_warps=8),
        triton.Config({"ROWS": 4, "PPS": 0, "STAGES": 1}, num_warps=8),
        triton.Config({"ROWS": 1, "PPS": 4, "STAGES": 2}, num_warps=8),
        triton.Config({"ROWS": 1, "PPS": 8, "STAGES": 2}, num_warps=4),
        triton.Config({"ROWS": 1, "PPS": 2, "STAGES": 3}, num_warps=8),
        triton.Config({"ROWS": 2, "PPS": 4, "STAGES": 2}, num_warps=8),
    ]),
    key=["n_cols", "BLOCK_N", "row_bucket"],
    prune_configs_by={"early_config_prune": _prune_rows},
)
@triton.jit(do_not_specialize=["row_bucket"])
def _rms_norm_fwd_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, n_rows, n_cols, x_row_stride, y_row_stride, eps, row_bucket,  # noqa: TRI003 (a template: the fused kernel chosen instead of Liger's op)
                         BLOCK_N: tl.constexpr, ROWS: tl.constexpr, PPS: tl.constexpr, STAGES: tl.constexpr):
    cols = tl.arange(0, BLOCK_N)
    col_mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=col_mask, other=0.0).to(tl.float32)
    # one step per block of ROWS rows; with a persistent grid (PPS > 0) each program takes several
    for first in tl.range(tl.program_id(0) * ROWS, n_rows, tl.num_programs(0) * ROWS, num_stages=STAGES):
        if ROWS == 1:  # one row: 1-D tensors, the simplest layout for the compiler
            row64 = tl.cast(first, tl.int64)
            x = tl.load(x_ptr + row64 * x_row_stride + cols, mask=col_mask, other=0.0).to(tl.float32)
            rstd = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + tl.cast(eps, tl.float32))
            tl.store(y_ptr + row64 * y_row_stride + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=col_mask)
            tl.store(rstd_ptr + first, rstd)
        else:
            rows = first + tl.arange(0, ROWS)
            row_mask = rows < n_rows
            mask = row_mask[:, None] & col_mask[None, :]
            rows64 = rows.to(tl.int64)[:, None]
            x = tl.load(x_ptr + rows64 * x_row_stride + cols[None, :], mask=mask, other=0.0).to(tl.float32)
            rstd = tl.rsqrt(tl.sum(x * x, axis=1) / n_cols + tl.cast(eps, tl.float32))
            y = x * rstd[:, None] * w[None, :]
            tl.store(y_ptr + rows64 * y_row_stride + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)
            tl.store(rstd_ptr + rows, rstd, mask=row_mask)


@triton.jit
def _rms_norm_bwd_kernel(dy_ptr, x_ptr, w_ptr, rstd_ptr, dx_ptr, dw_partial_ptr, n_rows, n_cols,
                         dy_row_stride, x_row_stride, dx_row_stride, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    n_programs = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    col_mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=col_mask, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK_N], dtype=tl.float32)
    for row in range(pid, n_rows, n_programs):
        row64 = tl.cast(row, tl.int64)
        x = tl.load(x_ptr + row64 * x_row_stride + cols, mask=col_mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + row64 * dy_row_stride + cols, mask=col_mask, other=0.0).to(tl.float32)
        rstd = tl.load(rstd_ptr + row)
        x_hat = x * rstd
        wdy = w * dy
        # d/dx of x*rstd: rstd * (g - x_hat * mean(g * x_hat)) with g = w*dy
        dx = rstd * (wdy - x_hat * (tl.sum(wdy * x_hat, axis=0) / n_cols))
        tl.store(dx_ptr + row64 * dx_row_stride + cols, dx.to(dx_ptr.dtype.element_ty), mask=col_mask)
        dw += dy * x_hat
    tl.store(dw_partial_ptr + pid * n_cols + cols, dw, mask=col_mask)


class _Launcher:
    """``kernel[grid](*args, **constexprs)`` without the per-call dispatch after the first call.

    The first call for a key goes through Triton (autotuning, compilation, heuristics); it records the
    compiled kernel and the values of every constexpr parameter it was launched with. Later calls with
    the same key launch that compiled kernel directly: no autotuner lookup, no argument binding. The
    key holds everything Triton specialises on (dtype, alignment and device of each tensor, the value
    of every scalar), so a call that would compile or tune differently never takes the short path.
    ``grid`` is a tuple, or a function of the constexprs and the chosen config. Under the interpreter
    every call goes through Triton."""

    def __init__(self, kernel):
        self.kernel, self.heuristics, self.cache = kernel, [], {}
        self.direct = not _interpreting() and hasattr(triton, "knobs") and not any(
            c.pre_hook for c in getattr(kernel, "configs", []))
        jit = kernel
        while self.direct and not isinstance(jit, triton.runtime.jit.JITFunction):
            if hasattr(jit, "values"):  # a triton.heuristics layer
                self.heuristics.append(jit.values)
            jit = getattr(jit, "fn", None)
            self.direct = jit is not None
        self.params = jit.params if self.direct else []
        self.stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)

    def __call__(self, grid, *args, **constexprs):
        if not self.direct:
            return self.kernel[grid](*args, **constexprs)
        key = (*constexprs.items(), *[(a.dtype, a.data_ptr() & 15, a.get_device()) if isinstance(a, torch.Tensor)
                                      else a for a in args])
        hit = self.cache.get(key)
        if hit is None:
            compiled = self.kernel[grid](*args, **constexprs)
            config = getattr(self.kernel, "best_config", None)
            meta = {**constexprs, **(config.all_kwargs() if config is not None else {})}
            named = {p.name: a for p, a in zip(self.params, args)}
            for values in reversed(self.heuristics):
                meta.update({name: rule({**named, **meta}) for name, rule in values.items()})
            tail = tuple(meta[p.name] if p.name in meta else p.default for p in self.params[len(args):])
            if len(self.cache) > 1024:
                self.cache.clear()
            self.cache[key] = (compiled, tail, meta)
            return compiled
        compiled, tail, meta = hit
        values = (*args, *tail)
        if callable(grid):
            grid = grid(meta)
        if self.stream is not None:
            stream = self.stream(torch._C._cuda_getDevice())
        else:
            stream = triton.runtime.driver.active.get_current_stream(triton.runtime.driver.active.get_current_device())
        hooks = triton.knobs.runtime
        enter = hooks.launch_enter_hook
        compiled.run(grid[0], grid[1] if len(grid) > 1 else 1, grid[2] if len(grid) > 2 else 1, stream,
                     compiled.function, compiled.packed_metadata,
                     compiled.launch_metadata(grid, stream, *values) if enter is not None else None,
                     enter, hooks.launch_exit_hook, *values)
        return compiled


_rms_norm_fwd_launch = _Launcher(_rms_norm_fwd_kernel)
_rms_norm_bwd_launch = _Launcher(_rms_norm_bwd_kernel)


@functools.lru_cache(maxsize=None)
def _sm_count(device_index: int) -> int:
    return torch.cuda.get_device_properties(device_index).multi_processor_count


def row_grid(x: torch.Tensor, n_rows: int, rows_per_step: int, programs_per_sm: int) -> int:
    """Programs for a row kernel: one per block of rows, or at most programs_per_sm per SM (persistent)."""
    blocks = triton.cdiv(n_rows, rows_per_step)
    if programs_per_sm and x.is_cuda:
        return max(1, min(blocks, programs_per_sm * _sm_count(x.device.index or 0)))
    return blocks


def _rms_norm_row_bucket(n_rows: int) -> int:
    """The autotuner's view of the row count: decode (a few rows), mid, training. Tuned once per
    bucket, so a config chosen for 4 rows is never reused for 16384 (nor tuned again per row count)."""
    return 0 if n_rows <= 64 else 1 if n_rows <= 2048 else 2


def _rms_norm_block_n(n_cols: int) -> int:
    limit = RMS_NORM_MAX_HIDDEN
    if n_cols > limit:
        raise ValueError(f"rms_norm: hidden size {n_cols} exceeds {limit} (one row per program)")
    return triton.next_power_of_2(n_cols)


def _bwd_programs(x: torch.Tensor, n_rows: int) -> int:
    if x.is_cuda:
        return min(n_rows, 2 * torch.cuda.get_device_properties(x.device).multi_processor_count)
    return min(n_rows, 4)


def rms_norm_forward(x: torch.Tensor, weight: torch.Tensor, eps: float):
    """(y, x2d, rstd): y has x's shape and dtype; x2d and rstd are kept for the backward."""
    shape = x.shape
    x2d = x if x.dim() == 2 else x.reshape(-1, shape[-1])
    if x2d.stride(-1) != 1:
        x2d = x2d.contiguous()
    n_rows, n_cols = x2d.shape
    y = torch.empty_like(x2d)
    rstd = torch.empty(n_rows, dtype=torch.float32, device=x.device)
    if n_rows:
        grid = lambda meta: (row_grid(x2d, n_rows, meta["ROWS"], meta["PPS"]),)
        _rms_norm_fwd_launch(grid, x2d, weight, y, rstd, n_rows, n_cols, x2d.stride(0), y.stride(0), float(eps),
                             _rms_norm_row_bucket(n_rows), BLOCK_N=_rms_norm_block_n(n_cols))
    return (y if x.dim() == 2 else y.reshape(shape)), x2d, rstd


def rms_norm_backward(dy: torch.Tensor, x2d: torch.Tensor, weight: torch.Tensor, rstd: torch.Tensor):
    """(dx in x2d's shape, dweight)."""
    dy2d = dy.reshape(-1, dy.shape[-1])
    if dy2d.stride(-1) != 1:
        dy2d = dy2d.contiguous()
    n_rows, n_cols = x2d.shape
    dx = torch.empty_like(x2d)
    programs = max(1, _bwd_programs(x2d, n_rows))
    dw_partial = torch.empty(programs, n_cols, dtype=torch.float32, device=x2d.device)
    if n_rows:
        _rms_norm_bwd_launch((programs,), dy2d, x2d, weight, rstd, dx, dw_partial, n_rows, n_cols,
                                          dy2d.stride(0), x2d.stride(0), dx.stride(0),
                                          BLOCK_N=_rms_norm_block_n(n_cols), num_warps=8)
    else:
        dw_partial.zero_()
    return dx, dw_partial.sum(0).to(weight.dtype)


class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        y, x2d, rstd = rms_norm_forward(x, weight, eps)
        ctx.save_for_backward(x2d, weight, rstd)
        return y

    @staticmethod
    def backward(ctx, dy):
        x2d, weight, rstd = ctx.saved_tensors
        dx, dw = rms_norm_backward(dy, x2d, weight, rstd)
        return dx.reshape(dy.shape), dw, None


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """RMSNorm over the last dimension of ``x`` (any leading shape), differentiable in x and weight."""
    if torch.compiler.is_compiling():  # one custom op: no graph break
        return _rms_norm_fwd_op(x, weight, eps)[0]
    if not (torch.is_grad_enabled() and (x.requires_grad or weight.requires_grad)):  # no autograd node: the Function's own ~13 us of host time are skipped
        return rms_norm_forward(x, weight, eps)[0]
    return RMSNormFunction.apply(x, weight, eps)


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


def _rms_norm_fwd(x: torch.Tensor, weight: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    y, _, rstd = rms_norm_forward(x, weight, eps)
    return y, rstd


def _rms_norm_bwd(dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor,
                  rstd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    dx, dw = rms_norm_backward(dy, x.reshape(-1, x.shape[-1]).contiguous(), weight, rstd)
    return dx.reshape(x.shape), dw


_rms_norm_bwd_op = _custom_op(_rms_norm_bwd, lambda dy, x, weight, rstd: (torch.empty_like(x), torch.empty_like(weight)))
_rms_norm_fwd_op = _custom_op(
    _rms_norm_fwd, lambda x, weight, eps: (torch.empty_like(x), x.new_empty(x.shape[:-1].numel(), dtype=torch.float32)),
    grad=lambda ctx, dy, drstd: (*_rms_norm_bwd_op(dy, *ctx.saved_tensors), None),
    setup=lambda ctx, inputs, output: ctx.save_for_backward(inputs[0], inputs[1], output[1]))


def rms_norm_reference(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """PyTorch eager: statistics in fp32 (fp64 for fp64 inputs), result in x's dtype."""
    xf = x if x.dtype == torch.float64 else x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * weight.to(xf.dtype)
    return y.to(x.dtype)


def rms_norm_inputs(shape, dtype, device):
    x = torch.randn(shape, dtype=dtype, device=device)
    weight = 1.0 + 0.1 * torch.randn(shape[-1], dtype=dtype, device=device)
    return x, weight, 1e-6


def _rms_norm_contract():
    """The benchmark contract (``tritonify bench THIS_FILE::rms_norm``); None without tritonify."""
    try:
        from tritonify.kernels.bench import Contract
    except ImportError:
        return None
    return Contract(kernel="_rms_norm_fwd_kernel", name="rms_norm", entry=rms_norm, inputs=rms_norm_inputs,
                    reference=rms_norm_reference, shapes=[(4096, RMS_NORM_HIDDEN), (16384, RMS_NORM_HIDDEN)],
                    dtype=RMS_NORM_DTYPE, liger="rms_norm", target=0.85)


RMS_NORM_CONTRACT = _rms_norm_contract()
