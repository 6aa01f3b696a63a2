// Non-inlined device functions: arguments, return values, nested calls, early returns, void functions.
__device__ __noinline__ float clampf(float x, float lo, float hi) {
    if (x < lo) return lo;
    if (x > hi) return hi;
    return x;
}
__device__ __noinline__ float poly(float x, int k) {
    float acc = 0.0f;
    for (int i = 0; i < k; ++i) acc = acc * x + clampf(x * i, -1.0f, 1.0f);
    return acc;
}
__device__ __noinline__ void store_pair(float* out, int i, float a, double b) {
    out[2 * i] = a;
    out[2 * i + 1] = (float)(b * 2.0);
}
extern "C" __global__ void calls(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = poly(x[i], (i % 4) + 1);
    store_pair(out, i, v, (double)clampf(x[i], 0.0f, 0.5f));
}
