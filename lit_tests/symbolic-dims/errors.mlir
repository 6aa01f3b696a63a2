// An argument's #graph.dims must describe its tensor: one entry per dim, static sizes
// equal, symbols on `?` dims only (the pass stops at the first error).
// RUN: not fs-opt %s -p symbolic-dims 2>&1 | filecheck %s
// RUN: sed -e 's/<\[B\]>/<[B, C]>/' %s | not fs-opt -p symbolic-dims 2>&1 | filecheck %s --check-prefix=STATIC

// CHECK: errors.mlir:[[# @LINE + 2]]:1: error: argument 0 of @rank: #graph.dims has 1 entries for a tensor of rank 2
// STATIC: error: argument 0 of @rank: dim 1 is static (4), a symbol names only a '?' dim
func.func @rank(%x: tensor<?x4xf32> {graph.dims = #graph.dims<[B]>}) -> tensor<?x4xf32> {
  func.return %x : tensor<?x4xf32>
}
