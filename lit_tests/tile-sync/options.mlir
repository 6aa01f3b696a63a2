// tile-sync's options are checked.
// RUN: not fs-opt %s -p 'tile-sync{policy=diagonal}' 2>&1 | filecheck %s --check-prefix=POLICY
// RUN: not fs-opt %s -p 'tile-sync{wait-kernel=sometimes}' 2>&1 | filecheck %s --check-prefix=WAIT
// RUN: not fs-opt %s -p 'tile-sync{tile-order=diagonal}' 2>&1 | filecheck %s --check-prefix=ORDER
// RUN: not fs-opt %s -p 'tile-sync{reorder=maybe}' 2>&1 | filecheck %s --check-prefix=REORDER
// A function without dependent GEMMs is left as it is.
// RUN: fs-opt %s -p 'fusion-explore,stitch-codegen,tile-sync{policy=row}' | filecheck %s

// POLICY: error: tile-sync: policy=diagonal (expected auto, tile, row, strided, conv)
// WAIT: error: tile-sync: wait-kernel=sometimes (expected auto, true, false)
// ORDER: error: tile-sync: tile-order=diagonal (expected auto, row-major, column-major, strided, none)
// REORDER: error: tile-sync: reorder=maybe (expected auto, true, false)
// CHECK-NOT: schedule.stage
// CHECK-NOT: schedule.tile_dep

func.func @f(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %y = graph.exp %x : tensor<8x8xf32>
  func.return %y : tensor<8x8xf32>
}
