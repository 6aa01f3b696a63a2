// With --split-input-file, an error in a later chunk reports its line in the whole
// file (not in the chunk), and the chunks before it are still printed.
// RUN: not fs-opt %s --split-input-file 2>&1 | filecheck %s --strict-whitespace

// CHECK: func.func @fine()
func.func @fine() {
  func.return
}

// -----

func.func @broken(%x: tensor<4xf32>) {
  %r = graph.reduce sum %x dims [3] : (tensor<4xf32>) -> tensor<f32>
  func.return
}

// CHECK: {{.*}}split-input-file.mlir:13:3: error: 'graph.reduce' op reduction dimension 3 is out of range for rank 1
// CHECK-NEXT: {{^}}  %r = graph.reduce sum %x dims [3] : (tensor<4xf32>) -> tensor<f32>{{$}}
// CHECK-NEXT: {{^}}  ^{{$}}
