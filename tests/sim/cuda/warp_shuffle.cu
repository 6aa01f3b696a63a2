// Warp-level primitives: down (tree reduce), xor/bfly (all-reduce), idx (broadcast), up (inclusive scan).
extern "C" __global__ void warp_sum_down(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    if ((threadIdx.x & 31) == 0) out[i >> 5] = v;
}
extern "C" __global__ void warp_max_xor(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : -INFINITY;
    for (int m = 16; m > 0; m >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, m));
    if (i < n) out[i] = v;
}
extern "C" __global__ void warp_bcast_idx(const int* x, int* out, int src, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? x[i] : 0;
    v = __shfl_sync(0xffffffffu, v, src);
    if (i < n) out[i] = v;
}
extern "C" __global__ void warp_scan_up(const int* x, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int v = i < n ? x[i] : 0;
    for (int off = 1; off < 32; off <<= 1) {
        int t = __shfl_up_sync(0xffffffffu, v, off);
        if (lane >= off) v += t;
    }
    if (i < n) out[i] = v;
}
// width 8 segments: sub-warp reduction with __shfl_down_sync(..., width)
extern "C" __global__ void segment8_sum(const float* x, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    for (int off = 4; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off, 8);
    out[i] = v;
}
