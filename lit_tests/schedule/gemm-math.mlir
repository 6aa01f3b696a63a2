// RUN: fs-opt %s | filecheck %s

// `math = f16 | bf16 | tf32` puts a gemm kernel on the tensor cores: `thread` is then a
// warp's tile, and a block has 32 threads per warp tile; `fma` (the default) is not
// printed.
// CHECK-LABEL: func.func @f
// CHECK: schedule.kernel @tc gemm<tile = 64x64x32, thread = 32x32, math = f16> grid [1, 1, 1] block [128, 1, 1]
// CHECK: schedule.kernel @fma gemm<tile = 64x64x16, thread = 4x4> grid [1, 1, 1] block [256, 1, 1]
func.func @f(%x: tensor<64x64xf16>, %y: tensor<64x64xf32>) -> (tensor<64x64xf16>, tensor<64x64xf32>) {
  %d = schedule.kernel @tc gemm<math = f16, tile = 64x64x32, thread = 32x32> grid [1, 1, 1] block [128, 1, 1] (%x, %x) : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>):
    schedule.shared @a_tile : memref<4096xf16, 3>
    schedule.shared @b_tile : memref<4096xf16, 3>
    %g = schedule.group block -> global : tensor<64x64xf16> {
      %p = graph.dot %a, %b : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16>
      schedule.yield %p : tensor<64x64xf16>
    }
    schedule.yield %g : tensor<64x64xf16>
  }
  %e = schedule.kernel @fma gemm<tile = 64x64x16, thread = 4x4, math = fma> grid [1, 1, 1] block [256, 1, 1] (%y, %y) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>):
    schedule.shared @a_tile : memref<1024xf32, 3>
    schedule.shared @b_tile : memref<1024xf32, 3>
    %g = schedule.group block -> global : tensor<64x64xf32> {
      %p = graph.dot %a, %b : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
      schedule.yield %p : tensor<64x64xf32>
    }
    schedule.yield %g : tensor<64x64xf32>
  }
  func.return %d, %e : tensor<64x64xf16>, tensor<64x64xf32>
}
