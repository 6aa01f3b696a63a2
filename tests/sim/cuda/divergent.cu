// Divergent if/else chains with an early return.
extern "C" __global__ void divergent(const int* x, int* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = x[i];
    if (v < 0) { y[i] = -1; return; }
    int r;
    if (v % 3 == 0) r = v * 2;
    else if (v % 3 == 1) { r = 0; for (int k = 0; k < v; ++k) r += k; }
    else r = v - 100;
    y[i] = r;
}
