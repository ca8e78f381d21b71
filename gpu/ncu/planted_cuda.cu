// CUDA kernels with one planted bottleneck each, and clean controls (see planted_triton.py).
// Built on the H200 machine with `nvcc -cubin -lineinfo -arch=sm_90` and launched through cupy,
// so ncu's source page maps SASS back to the lines of this file.

extern "C" __global__ void cuda_control_copy(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 2.0f;
}

extern "C" __global__ void cuda_control_fp32_poly(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    for (int k = 0; k < 32; ++k) v = v * 0.9999f + 0.0001f;
    y[i] = v;
}

extern "C" __global__ void cuda_control_h_padded(const float* x, float* y) {
    __shared__ float tile[32][33];
    int tx = threadIdx.x, ty = threadIdx.y;
    int base = blockIdx.x * 1024;
    tile[ty][tx] = x[base + ty * 32 + tx];
    __syncthreads();
    float acc = 0.0f;
    for (int r = 0; r < 64; ++r) acc += tile[tx][(ty + r) & 31];
    y[base + ty * 32 + tx] = acc;
}

extern "C" __global__ void cuda_planted_c_strided(const float* x, float* y, int n, int stride) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[(long long)i * stride] + 1.0f;  // PLANT: C
}

extern "C" __global__ void cuda_planted_g_atomics(const float* x, float* hist, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&hist[i & 3], x[i]);  // PLANT: G
}

extern "C" __global__ void cuda_planted_h_bank_conflicts(const float* x, float* y) {
    __shared__ float tile[32][32];
    int tx = threadIdx.x, ty = threadIdx.y;
    int base = blockIdx.x * 1024;
    tile[ty][tx] = x[base + ty * 32 + tx];
    __syncthreads();
    float acc = 0.0f;
    for (int r = 0; r < 64; ++r) acc += tile[tx][(ty + r) & 31];  // PLANT: H
    y[base + ty * 32 + tx] = acc;
}

extern "C" __global__ void cuda_planted_i_barrier(float* y, int iters) {
    __shared__ float s[1024];
    float v = (float)threadIdx.x;
    for (int i = 0; i < iters; ++i) {
        s[threadIdx.x] = v;
        __syncthreads();  // PLANT: I
        v += s[(threadIdx.x + 1) & 1023] * 0.5f;
        __syncthreads();  // PLANT: I
    }
    y[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

extern "C" __global__ void cuda_planted_j_smem_limited(const float* x, float* y, int n) {  // PLANT: J
    extern __shared__ float reserved[];
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = x[i] + 1.0f;  // PLANT: J
    if (n < 0) reserved[threadIdx.x] = 0.0f;
}

// A per-thread array indexed by data: it cannot live in registers, so it goes to local memory
// (a stack frame, no spill: ptxas reports 0 bytes spill stores).
extern "C" __global__ void cuda_planted_k_local_array(const float* x, const int* idx, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float buf[32];
    for (int k = 0; k < 32; ++k) buf[k] = x[i] + (float)k;  // PLANT: K
    float acc = 0.0f;
    for (int k = 0; k < 32; ++k) acc += buf[idx[(i + k) & 1023] & 31];  // PLANT: K
    y[i] = acc;
}

extern "C" __global__ void cuda_planted_l_fp64(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    for (int k = 0; k < 32; ++k) v = v * 0.9999 + 0.0001;  // PLANT: L
    y[i] = v;
}

extern "C" __global__ void cuda_planted_n_divergent(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    if ((threadIdx.x & 31) < 4) {  // PLANT: N
        for (int k = 0; k < 256; ++k) v = v * 0.9999f + 0.0001f;  // PLANT: N
    }
    y[i] = v;
}
