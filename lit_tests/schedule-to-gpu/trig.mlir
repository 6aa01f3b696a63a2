// Trigonometric ops lower to f32 arithmetic: sin reduces its argument by π/2 in three
// Cody–Waite parts (k = roundeven(x·2/π), three fmas), evaluates both minimax
// polynomials and picks one by the quadrant's parity, the sign by k mod 4; atan maps
// |x| > tan(3π/8) to −1/|x| and |x| > tan(π/8) to (|x| − 1)/(|x| + 1) before its
// polynomial and restores the sign with copysign. No approximate sin/cos unit is used.
// RUN: fs-opt %s -p stitch-codegen,schedule-to-gpu | filecheck %s
// RUN: fs-opt %s -p stitch-codegen,schedule-to-gpu -t ptx | filecheck %s --check-prefix=PTX

// CHECK-LABEL: gpu.func @sin_k0(
// CHECK: %[[X:.*]] = memref.load
// CHECK: %[[T:.*]] = arith.mulf %[[X]], %{{.*}} : f32
// CHECK-NEXT: %[[K:.*]] = math.roundeven %[[T]] : f32
// CHECK: %[[R1:.*]] = math.fma %[[K]], %{{.*}}, %[[X]] : f32
// CHECK: %[[R2:.*]] = math.fma %[[K]], %{{.*}}, %[[R1]] : f32
// CHECK: %[[R3:.*]] = math.fma %[[K]], %{{.*}}, %[[R2]] : f32
// CHECK: %[[ODD:.*]] = arith.cmpf oeq
// CHECK: arith.select %[[ODD]]
// CHECK: arith.cmpf oge
// CHECK: arith.negf
// CHECK-NOT: math.sin
// CHECK: gpu.return
// PTX-LABEL: .entry sin_k0(
// PTX: cvt.rni.f32.f32
// PTX-NOT: sin.approx
// PTX: ret;
func.func @sin(%a: tensor<64xf32>) -> tensor<64xf32> {
  %y = stitch.fusion (%a) : (tensor<64xf32>) -> tensor<64xf32> {
  ^bb0(%x: tensor<64xf32>):
    %s = graph.sin %x : tensor<64xf32>
    stitch.yield %s : tensor<64xf32>
  }
  func.return %y : tensor<64xf32>
}

// CHECK-LABEL: gpu.func @atan_k0(
// CHECK: %[[X:.*]] = memref.load
// CHECK: %[[A:.*]] = math.absf %[[X]] : f32
// CHECK-DAG: %[[BIG:.*]] = arith.cmpf ogt, %[[A]], %{{.*}} : f32
// CHECK-DAG: %[[MID:.*]] = arith.cmpf ogt, %[[A]], %{{.*}} : f32
// CHECK: math.fma
// CHECK: %[[Y:.*]] = arith.addf
// CHECK-NEXT: math.copysign %[[Y]], %[[X]] : f32
// CHECK: gpu.return
func.func @atan(%a: tensor<64xf32>) -> tensor<64xf32> {
  %y = stitch.fusion (%a) : (tensor<64xf32>) -> tensor<64xf32> {
  ^bb0(%x: tensor<64xf32>):
    %s = graph.atan %x : tensor<64xf32>
    stitch.yield %s : tensor<64xf32>
  }
  func.return %y : tensor<64xf32>
}
