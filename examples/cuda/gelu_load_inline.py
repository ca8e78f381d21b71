"""tanh-GELU as a PyTorch C++/CUDA extension built with `load_inline` (nvcc).

`tritonify check examples/cuda/gelu_load_inline.py` reports CUD001 on the double constants in the
CUDA string, at their line and column in this file; `--fix` adds the `f` suffixes in place.
Run on a CUDA machine: `python examples/cuda/gelu_load_inline.py` (builds, checks against
torch.nn.functional.gelu and times the kernel).
"""
from __future__ import annotations

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>

__global__ void gelu_tanh_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const float v = x[i];
  const float inner = 0.7978845608 * (v + 0.044715 * v * v * v);
  y[i] = 0.5 * v * (1.0 + tanhf(inner));
}

torch::Tensor gelu_tanh(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.is_contiguous(),
              "gelu_tanh expects a contiguous float32 CUDA tensor");
  auto y = torch::empty_like(x);
  const int64_t n = x.numel();
  const int threads = 256;
  const int64_t blocks = (n + threads - 1) / threads;
  gelu_tanh_kernel<<<blocks, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}
"""

CPP_SRC = "torch::Tensor gelu_tanh(torch::Tensor x);"


def build(name: str = "tritonify_gelu_tanh"):
    return load_inline(name=name, cpp_sources=CPP_SRC, cuda_sources=CUDA_SRC, functions=["gelu_tanh"],
                       extra_cuda_cflags=["-O3"], verbose=False)


def main() -> None:
    ext = build()
    x = torch.randn(1 << 24, device="cuda")
    y = ext.gelu_tanh(x)
    ref = torch.nn.functional.gelu(x, approximate="tanh")
    print(f"max abs error vs torch: {(y - ref).abs().max().item():.3e}")
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(3):
        ext.gelu_tanh(x)
    start.record()
    for _ in range(20):
        ext.gelu_tanh(x)
    end.record()
    torch.cuda.synchronize()
    print(f"gelu_tanh: {start.elapsed_time(end) / 20 * 1e3:.1f} us for {x.numel()} elements")


if __name__ == "__main__":
    main()
