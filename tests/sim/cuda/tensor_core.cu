// Tensor-core kernels for the simulator tests: mma.sync through inline asm with fragments loaded per
// the PTX ISA's layouts (g = lane >> 2, t = lane & 3), cvt.rna.tf32.f32, and a tiled GEMM that
// stages tiles with a 3-stage cp.async pipeline and feeds the mma with ldmatrix (.x4, .x2.trans).
#include <cuda_fp16.h>
#include <stdint.h>

__device__ __forceinline__ uint32_t ld_pair(const uint16_t* p) { return *reinterpret_cast<const uint32_t*>(p); }

__device__ __forceinline__ uint32_t to_tf32(float x) {
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}

// D (M x N, f32) = A (M x K, 16-bit, row-major) * B, B given as Bt (N x K, row-major, i.e. B
// column-major). One warp per 16x8 tile of D: grid (N / 8, M / 16), block 32.
#define MMA_K16(NAME, TYPE)                                                                         \
    extern "C" __global__ void NAME(const uint16_t* A, const uint16_t* Bt, float* D, int K) {       \
        int lane = threadIdx.x, g = lane >> 2, t = lane & 3;                                        \
        int m0 = blockIdx.y * 16, n0 = blockIdx.x * 8, N = gridDim.x * 8;                           \
        float d[4] = {0.f, 0.f, 0.f, 0.f};                                                          \
        for (int k0 = 0; k0 < K; k0 += 16) {                                                        \
            const uint16_t* a = A + (m0 + g) * K + k0 + 2 * t;                                      \
            const uint16_t* b = Bt + (n0 + g) * K + k0 + 2 * t;                                     \
            uint32_t a0 = ld_pair(a), a1 = ld_pair(a + 8 * K), a2 = ld_pair(a + 8),                 \
                     a3 = ld_pair(a + 8 * K + 8), b0 = ld_pair(b), b1 = ld_pair(b + 8);             \
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." TYPE "." TYPE ".f32 "             \
                         "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"                  \
                         : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                           \
                         : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));                   \
        }                                                                                           \
        float* o = D + (m0 + g) * N + n0 + 2 * t;                                                   \
        o[0] = d[0]; o[1] = d[1]; o[8 * N] = d[2]; o[8 * N + 1] = d[3];                             \
    }

MMA_K16(mma_f16_m16n8k16, "f16")
MMA_K16(mma_bf16_m16n8k16, "bf16")

// m16n8k8 with f16 inputs, accumulating in f16 (D is N x M halves... stored row-major M x N).
extern "C" __global__ void mma_f16_m16n8k8_f16acc(const uint16_t* A, const uint16_t* Bt, uint16_t* D, int K) {
    int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
    int m0 = blockIdx.y * 16, n0 = blockIdx.x * 8, N = gridDim.x * 8;
    uint32_t d0 = 0, d1 = 0;
    for (int k0 = 0; k0 < K; k0 += 8) {
        const uint16_t* a = A + (m0 + g) * K + k0 + 2 * t;
        uint32_t a0 = ld_pair(a), a1 = ld_pair(a + 8 * K), b0 = ld_pair(Bt + (n0 + g) * K + k0 + 2 * t);
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3}, {%4}, {%0,%1};\n"
                     : "+r"(d0), "+r"(d1) : "r"(a0), "r"(a1), "r"(b0));
    }
    *reinterpret_cast<uint32_t*>(D + (m0 + g) * N + n0 + 2 * t) = d0;
    *reinterpret_cast<uint32_t*>(D + (m0 + g + 8) * N + n0 + 2 * t) = d1;
}

// f32 inputs rounded to tf32 (cvt.rna), m16n8k8 and m16n8k4.
extern "C" __global__ void mma_tf32_m16n8k8(const float* A, const float* Bt, float* D, int K) {
    int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
    int m0 = blockIdx.y * 16, n0 = blockIdx.x * 8, N = gridDim.x * 8;
    float d[4] = {0.f, 0.f, 0.f, 0.f};
    for (int k0 = 0; k0 < K; k0 += 8) {
        const float* a = A + (m0 + g) * K + k0 + t;
        const float* b = Bt + (n0 + g) * K + k0 + t;
        uint32_t a0 = to_tf32(a[0]), a1 = to_tf32(a[8 * K]), a2 = to_tf32(a[4]), a3 = to_tf32(a[8 * K + 4]);
        uint32_t b0 = to_tf32(b[0]), b1 = to_tf32(b[4]);
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
    float* o = D + (m0 + g) * N + n0 + 2 * t;
    o[0] = d[0]; o[1] = d[1]; o[8 * N] = d[2]; o[8 * N + 1] = d[3];
}

extern "C" __global__ void mma_tf32_m16n8k4(const float* A, const float* Bt, float* D, int K) {
    int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
    int m0 = blockIdx.y * 16, n0 = blockIdx.x * 8, N = gridDim.x * 8;
    float d[4] = {0.f, 0.f, 0.f, 0.f};
    for (int k0 = 0; k0 < K; k0 += 4) {
        const float* a = A + (m0 + g) * K + k0 + t;
        uint32_t a0 = to_tf32(a[0]), a1 = to_tf32(a[8 * K]), b0 = to_tf32(Bt[(n0 + g) * K + k0 + t]);
        asm volatile("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a0), "r"(a1), "r"(b0));
    }
    float* o = D + (m0 + g) * N + n0 + 2 * t;
    o[0] = d[0]; o[1] = d[1]; o[8 * N] = d[2]; o[8 * N + 1] = d[3];
}

// ----------------------------------------------------------------------------------------------
// C (M x N, f32) = A (M x K, f16 row-major) * B (K x N, f16 row-major). Block tile 64x64x32, 4 warps
// of 32x32 (2 x 4 mma tiles), tiles staged in shared memory (rows padded by 8 halves) by a 3-stage
// cp.async pipeline; A fragments by ldmatrix.x4, B fragments by ldmatrix.x2.trans.
// grid (N / 64, M / 64), block 128.
constexpr int BM = 64, BN = 64, BK = 32, STAGES = 3, PAD = 8;

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
    uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

extern "C" __global__ void __launch_bounds__(128)
gemm_f16_cp_async_ldmatrix(const __half* A, const __half* B, float* C, int M, int N, int K) {
    __shared__ __align__(16) __half As[STAGES][BM][BK + PAD];
    __shared__ __align__(16) __half Bs[STAGES][BK][BN + PAD];
    int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    int wm = (warp >> 1) * 32, wn = (warp & 1) * 32;
    int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
    int KT = K / BK;

    auto load_tile = [&](int stage, int kt) {
        for (int i = tid; i < BM * BK / 8; i += 128) {  // 16-byte chunks of the A tile
            int r = i / (BK / 8), c = (i % (BK / 8)) * 8;
            cp_async16(&As[stage][r][c], A + (bm + r) * K + kt * BK + c);
        }
        for (int i = tid; i < BK * BN / 8; i += 128) {
            int r = i / (BN / 8), c = (i % (BN / 8)) * 8;
            cp_async16(&Bs[stage][r][c], B + (kt * BK + r) * N + bn + c);
        }
    };

    float acc[2][4][4] = {};
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < KT) load_tile(s, s);
        cp_async_commit();
    }
    for (int kt = 0; kt < KT; ++kt) {
        cp_async_wait<STAGES - 2>();
        __syncthreads();
        int pre = kt + STAGES - 1;
        if (pre < KT) load_tile(pre % STAGES, pre);
        cp_async_commit();
        int st = kt % STAGES;
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            uint32_t a[2][4], b[4][2];
#pragma unroll
            for (int mi = 0; mi < 2; ++mi) {
                const __half* p = &As[st][wm + mi * 16 + (lane & 15)][kk + (lane >> 4) * 8];
                asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                             : "=r"(a[mi][0]), "=r"(a[mi][1]), "=r"(a[mi][2]), "=r"(a[mi][3])
                             : "r"(smem_addr(p)));
            }
#pragma unroll
            for (int ni = 0; ni < 4; ++ni) {
                const __half* p = &Bs[st][kk + (lane & 15)][wn + ni * 8];
                asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
                             : "=r"(b[ni][0]), "=r"(b[ni][1])
                             : "r"(smem_addr(p)));
            }
#pragma unroll
            for (int mi = 0; mi < 2; ++mi)
#pragma unroll
                for (int ni = 0; ni < 4; ++ni)
                    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                                 : "+f"(acc[mi][ni][0]), "+f"(acc[mi][ni][1]), "+f"(acc[mi][ni][2]),
                                   "+f"(acc[mi][ni][3])
                                 : "r"(a[mi][0]), "r"(a[mi][1]), "r"(a[mi][2]), "r"(a[mi][3]), "r"(b[ni][0]),
                                   "r"(b[ni][1]));
        }
    }
    cp_async_wait<0>();
    int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
        for (int ni = 0; ni < 4; ++ni) {
            float* o = C + (bm + wm + mi * 16 + g) * N + bn + wn + ni * 8 + 2 * t;
            o[0] = acc[mi][ni][0];
            o[1] = acc[mi][ni][1];
            o[8 * N] = acc[mi][ni][2];
            o[8 * N + 1] = acc[mi][ni][3];
        }
}
