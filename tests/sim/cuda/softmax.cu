// Row softmax: one block (128 threads) per row, dynamic shared memory of blockDim floats.
extern "C" __global__ void softmax_rows(const float* x, float* y, int cols) {
    extern __shared__ float red[];
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;
    int t = threadIdx.x;
    float m = -INFINITY;
    for (int j = t; j < cols; j += blockDim.x) m = fmaxf(m, xr[j]);
    red[t] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) red[t] = fmaxf(red[t], red[t + s]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();
    float sum = 0.0f;
    for (int j = t; j < cols; j += blockDim.x) sum += expf(xr[j] - m);
    red[t] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) red[t] += red[t + s];
        __syncthreads();
    }
    float inv = 1.0f / red[0];
    for (int j = t; j < cols; j += blockDim.x) yr[j] = expf(xr[j] - m) * inv;
}
