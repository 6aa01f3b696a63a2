// tile-sync on the paper's Fig. 4a: the producer c = a @ b is a 2x2 grid of 16x16 tiles,
// the consumer e = c @ d a 2x3 grid whose tile (x, y) reads producer row y, all columns.
// Each kernel becomes a stage on its own stream; the dependency is an affine map. The
// consumer prefetches its B tile before it waits (reorder: cuSync's R); not with reorder=false.
// RUN: fs-opt %s -p 'fusion-explore,stitch-codegen{gemm="16x16x16"},tile-sync{policy=tile}' | filecheck %s
// RUN: fs-opt %s -p 'fusion-explore,stitch-codegen{gemm="16x16x16"},tile-sync{policy=tile reorder=false}' | filecheck %s --check-prefix=NOR
// RUN: fs-opt %s -p 'fusion-explore,stitch-codegen{gemm="16x16x16"},tile-sync{policy=row wait-kernel=true tile-order=column-major}' | filecheck %s --check-prefix=ROW
// Two fitting in one wave, auto leaves out the wait-kernel and the tile order (W, T):
// RUN: fs-opt %s -p 'fusion-explore,stitch-codegen{gemm="16x16x16"},tile-sync' | filecheck %s --check-prefix=AUTO

// CHECK-LABEL: func.func @fig4a
// CHECK: schedule.kernel @[[P:fig4a_k0]] gemm<tile = 16x16x16> grid [2, 2, 1]
// CHECK: schedule.stage @[[P]] pipeline 0 stream 0 priority 0 policy tile{{$}}
// CHECK: schedule.kernel @[[C:fig4a_k1]] gemm<tile = 16x16x16> grid [3, 2, 1]
// CHECK-NEXT: ^bb0(%[[CIN:.*]]: tensor<32x32xf32>, %{{.*}}: tensor<32x48xf32>):
// CHECK: schedule.stage @[[C]] pipeline 0 stream 1 priority 1 policy tile reorder{{$}}
// CHECK-NEXT: schedule.tile_dep @[[C]] on @[[P]] operand 0 map affine_map<(d0, d1, d2, d3) -> (d2, (d1 + d3))> extents [2, 1]

// ROW: schedule.stage @fig4a_k0 pipeline 0 stream 0 priority 0 policy row order column_major{{$}}
// ROW: schedule.stage @fig4a_k1 pipeline 0 stream 1 priority 1 policy row order column_major wait_kernel reorder{{$}}
// ROW-NEXT: schedule.tile_dep @fig4a_k1 on @fig4a_k0 operand 0

// NOR: schedule.stage @fig4a_k1 pipeline 0 stream 1 priority 1 policy tile{{$}}

// AUTO: schedule.stage @fig4a_k0 pipeline 0 stream 0 priority 0 policy tile{{$}}
// AUTO: schedule.stage @fig4a_k1 pipeline 0 stream 1 priority 1 policy tile reorder{{$}}

func.func @fig4a(%a: tensor<32x32xf32>, %b: tensor<32x32xf32>, %d: tensor<32x48xf32>) -> tensor<32x48xf32> {
  %c = graph.dot %a, %b : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %e = graph.dot %c, %d : (tensor<32x32xf32>, tensor<32x48xf32>) -> tensor<32x48xf32>
  func.return %e : tensor<32x48xf32>
}

// A GEMM reading an elementwise kernel's result depends on the loop kernel's blocks
// holding its rows: 16 rows x 48 = 768 elements = 3 blocks of 256. (The first product is
// also returned, so the tanh is not the first GEMM's epilogue but a loop kernel.)
// CHECK-LABEL: func.func @after_loop
// The first GEMM feeds no GEMM directly: no stage.
// CHECK-NOT: schedule.stage @after_loop_k0
// CHECK: schedule.stage @after_loop_k1 pipeline 1 stream 0 priority 0 policy tile
// CHECK: schedule.stage @after_loop_k2 pipeline 1 stream 1 priority 1 policy tile
// CHECK-NEXT: schedule.tile_dep @after_loop_k2 on @after_loop_k1 operand 0 map affine_map<(d0, d1, d2, d3) -> (((d1 * 3) + d3), d2)> extents [1, 3]
func.func @after_loop(%x: tensor<64x96xf32>, %w1: tensor<96x48xf32>, %w2: tensor<48x96xf32>) -> (tensor<64x96xf32>, tensor<64x48xf32>) {
  %h = graph.dot %x, %w1 : (tensor<64x96xf32>, tensor<96x48xf32>) -> tensor<64x48xf32>
  %g = graph.tanh %h : tensor<64x48xf32>
  %y = graph.dot %g, %w2 : (tensor<64x48xf32>, tensor<48x96xf32>) -> tensor<64x96xf32>
  func.return %y, %h : tensor<64x96xf32>, tensor<64x48xf32>
}

// Conv2DTileSync: the second convolution's tile of 16 output positions (of 8x8 images)
// reads input positions 9 before its first to 9 after its last (3x3 windows, padding 1):
// producer position tiles (16y - 9) floordiv 16 + j, j < 3, clipped to the grid.
// CHECK-LABEL: func.func @convs
// CHECK: schedule.stage @convs_k0 pipeline 2 stream 0 priority 0 policy tile
// CHECK: schedule.stage @convs_k1 pipeline 2 stream 1 priority 1 policy tile
// CHECK-NEXT: schedule.tile_dep @convs_k1 on @convs_k0 operand 0 map affine_map<(d0, d1, d2, d3) -> (d2, (((((d1 * 16) + 7) floordiv 16) + d3) + -1))> extents [1, 3]
func.func @convs(%x: tensor<1x8x8x8xf32>, %w1: tensor<8x8x3x3xf32>, %w2: tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32> {
  %h = graph.conv %x, %w1 strides [1, 1] pad_low [1, 1] pad_high [1, 1] dilation [1, 1] lhs_dilation [1, 1] groups 1 : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32>
  %y = graph.conv %h, %w2 strides [1, 1] pad_low [1, 1] pad_high [1, 1] dilation [1, 1] lhs_dilation [1, 1] groups 1 : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32>
  func.return %y : tensor<1x8x8x8xf32>
}
