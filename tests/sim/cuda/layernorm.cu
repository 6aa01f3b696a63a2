// LayerNorm over rows of length cols, one block (256 threads) per row; warp shuffles + shared memory.
__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ float block_sum(float v, float* sh) {
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    v = warp_sum(v);
    if (lane == 0) sh[w] = v;
    __syncthreads();
    v = lane < (blockDim.x >> 5) ? sh[lane] : 0.0f;
    v = warp_sum(v);
    __syncthreads();
    return v;
}
extern "C" __global__ void layernorm(const float* x, const float* g, const float* b, float* y, int cols, float eps) {
    __shared__ float sh[32];
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;
    float s = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) s += xr[j];
    float mean = block_sum(s, sh) / cols;
    float v = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) { float d = xr[j] - mean; v += d * d; }
    float rstd = rsqrtf(block_sum(v, sh) / cols + eps);
    for (int j = threadIdx.x; j < cols; j += blockDim.x) yr[j] = (xr[j] - mean) * rstd * g[j] + b[j];
}
