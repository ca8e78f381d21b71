"""RMSNorm over rows with `cupy.RawKernel` (compiled by NVRTC).

`tritonify check examples/cuda/rmsnorm_cupy.py` reports, inside the CUDA string: CUD001 on `1e-6`
and CUD002 on `rsqrt` (its argument is double because of that constant). `pow(v, 2)` is quiet
here: NVRTC has a float `pow(float, int)` (nvcc does not, so the same line in a `.cu` file or
`load_inline` is reported). Run on a CUDA machine: `python examples/cuda/rmsnorm_cupy.py`.
"""
from __future__ import annotations

import cupy as cp

RMSNORM_SRC = r"""
extern "C" __global__ void rmsnorm(const float* __restrict__ x, const float* __restrict__ w,
                                   float* __restrict__ y, int cols) {
  __shared__ float partial[32];
  const float* row = x + (size_t)blockIdx.x * cols;
  float* out = y + (size_t)blockIdx.x * cols;
  float ss = 0.f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float v = row[c];
    ss += pow(v, 2);
  }
  for (int offset = 16; offset > 0; offset /= 2) ss += __shfl_xor_sync(0xffffffffu, ss, offset);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = ss;
  __syncthreads();
  if (threadIdx.x < 32) {
    ss = threadIdx.x < blockDim.x / 32 ? partial[threadIdx.x] : 0.f;
    for (int offset = 16; offset > 0; offset /= 2) ss += __shfl_xor_sync(0xffffffffu, ss, offset);
    if (threadIdx.x == 0) partial[0] = ss;
  }
  __syncthreads();
  const float scale = rsqrt(partial[0] / cols + 1e-6);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) out[c] = row[c] * scale * w[c];
}
"""

rmsnorm = cp.RawKernel(RMSNORM_SRC, "rmsnorm")


def rmsnorm_rows(x: cp.ndarray, w: cp.ndarray) -> cp.ndarray:
    rows, cols = x.shape
    y = cp.empty_like(x)
    rmsnorm((rows,), (256,), (x, w, y, cp.int32(cols)))
    return y


def main() -> None:
    x = cp.random.standard_normal((8192, 4096), dtype=cp.float32)
    w = cp.random.standard_normal(4096, dtype=cp.float32)
    y = rmsnorm_rows(x, w)
    ref = x / cp.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6) * w
    print(f"max abs error vs cupy: {float(cp.abs(y - ref).max()):.3e}")
    start, end = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    for _ in range(20):
        rmsnorm_rows(x, w)
    end.record()
    end.synchronize()
    print(f"rmsnorm: {cp.cuda.get_elapsed_time(start, end) / 20 * 1e3:.1f} us for {x.shape}")


if __name__ == "__main__":
    main()
