// A data-dependent loop that must not be unrolled: Collatz steps, and a Horner polynomial.
extern "C" __global__ void collatz_steps(const unsigned* x, int* steps, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned v = x[i];
    int s = 0;
#pragma unroll 1
    while (v > 1u) { v = (v & 1u) ? 3u * v + 1u : v >> 1; ++s; }
    steps[i] = s;
}
extern "C" __global__ void horner(const float* x, const float* coef, float* y, int degree, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f, xv = x[i];
#pragma unroll 1
    for (int k = degree; k >= 0; --k) acc = acc * xv + coef[k];
    y[i] = acc;
}
