// Row-wise LayerNorm forward, one block per row (fp32). CUD001 and CUD002 fire here:
// `tritonify check examples/cuda/layernorm_fwd.cu` (and `--fix` writes the float constants).
// Build: nvcc -O3 -arch=sm_90 -c layernorm_fwd.cu
#include <cuda_runtime.h>

constexpr int kWarp = 32;

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// Sum over the block; every thread gets the total. `shared` holds one float per warp.
__device__ float block_sum(float v, float* shared) {
  const int lane = threadIdx.x % kWarp;
  const int warp = threadIdx.x / kWarp;
  v = warp_sum(v);
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  const int warps = (blockDim.x + kWarp - 1) / kWarp;
  v = threadIdx.x < warps ? shared[threadIdx.x] : 0.f;
  v = warp_sum(v);
  __syncthreads();
  return v;
}

__global__ void layernorm_fwd(const float* __restrict__ x, const float* __restrict__ gamma,
                              const float* __restrict__ beta, float* __restrict__ y,
                              float* __restrict__ rstd_out, int cols) {
  __shared__ float shared[kWarp];
  const float* row = x + static_cast<size_t>(blockIdx.x) * cols;
  float* out = y + static_cast<size_t>(blockIdx.x) * cols;

  const float inv_cols = 1.0 / cols;           // CUD001: a double division per thread

  float sum = 0.f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += row[c];
  const float mean = block_sum(sum, shared) * inv_cols;

  float sq = 0.f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float d = row[c] - mean;
    sq += d * d;
  }
  const float var = block_sum(sq, shared) * inv_cols;
  const float rstd = rsqrt(var + 1e-5);        // CUD001 (1e-5) and CUD002 (double rsqrt)
  if (threadIdx.x == 0) rstd_out[blockIdx.x] = rstd;

  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    out[c] = (row[c] - mean) * rstd * gamma[c] + beta[c];
  }
}

extern "C" void layernorm_fwd_launch(const float* x, const float* gamma, const float* beta, float* y,
                                     float* rstd, int rows, int cols, cudaStream_t stream) {
  const int threads = cols >= 1024 ? 1024 : ((cols + kWarp - 1) / kWarp) * kWarp;
  layernorm_fwd<<<rows, threads, 0, stream>>>(x, gamma, beta, y, rstd, cols);
}
