// Atomics: int histogram, float sum, int max, float max through an atomicCAS loop.
extern "C" __global__ void histogram(const int* x, int* bins, int nbins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[x[i] % nbins], 1);
}
extern "C" __global__ void float_sum(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(out, x[i]);
}
extern "C" __global__ void int_max(const int* x, int* out, int* ticket, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicMax(out, x[i]);
        ticket[i] = atomicAdd(&ticket[n], 1);   // old values: a permutation of 0..n-1
    }
}
__device__ float atomic_max_float(float* addr, float v) {
    int* a = (int*)addr;
    int old = *a, assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) >= v) break;
        old = atomicCAS(a, assumed, __float_as_int(v));
    } while (assumed != old);
    return __int_as_float(old);
}
extern "C" __global__ void float_max_cas(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomic_max_float(out, x[i]);
}
