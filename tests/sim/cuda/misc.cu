#include <cuda_fp16.h>
#include <cuda_bf16.h>
// A grab bag of nvcc-generated instruction patterns.

// sinf/cosf with the accurate (Payne-Hanek) slow path: local-memory arrays, 64-bit multiplies.
extern "C" __global__ void trig(const float* x, float* s, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { s[i] = sinf(x[i]); c[i] = cosf(x[i]); }
}
// double precision: exp, log, sqrt, division
extern "C" __global__ void dmath(const double* x, double* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { double v = x[i]; y[i] = exp(v) / (1.0 + sqrt(fabs(v))) + log(1.0 + v * v); }
}
// bytes, shorts, integer division/modulo by a runtime value, mulhi, mul24, 64-bit math
extern "C" __global__ void intmix(const signed char* a, const unsigned short* b, int* out, int d, long long m, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int v = a[i] * 1000 + b[i];
        long long w = (long long)v * 123456789LL;
        out[4 * i] = v / d;
        out[4 * i + 1] = v % d;
        out[4 * i + 2] = (int)(w % m);
        out[4 * i + 3] = __umulhi((unsigned)v, 0x9E3779B9u) + __mul24(v, 3);
    }
}
// warp votes and bit tricks
extern "C" __global__ void bits(const unsigned* x, unsigned* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = i < n ? x[i] : 0u;
    unsigned ballot = __ballot_sync(0xffffffffu, v & 1u);
    if (i < n) {
        out[4 * i] = ballot;
        out[4 * i + 1] = __popc(v) + 100u * __clz(v);
        out[4 * i + 2] = __brev(v);
        out[4 * i + 3] = __ffs(v) + 1000u * (unsigned)__any_sync(0xffffffffu, v == 7u);
    }
}
// float4 vector loads and stores
extern "C" __global__ void scale4(const float4* x, float4* y, float a, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) { float4 v = x[i]; y[i] = make_float4(a * v.x, a * v.y + 1.0f, a * v.z, v.w - a); }
}
// atomicInc (wrapping counter), atomicExch, atomicSub, atomicAnd/Or/Xor
extern "C" __global__ void atom_mix(unsigned* c, int* last, unsigned* bitsv, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicInc(&c[0], 9u);
        atomicExch(last, i);
        atomicSub((int*)&c[1], 2);
        atomicOr(&bitsv[0], 1u << (i % 32));
        atomicAnd(&bitsv[1], ~(1u << (i % 32)));
        atomicXor(&bitsv[2], (unsigned)i);
    }
}
// half2 and bfloat16 arithmetic
extern "C" __global__ void h2math(const __half2* x, __half2* y, const __nv_bfloat16* p, float* q, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        __half2 v = x[i];
        y[i] = __hfma2(v, v, __float2half2_rn(1.0f));
        q[i] = __bfloat162float(p[i]) * 2.0f + __low2float(v);
    }
}
