// Two dependent GEMMs (cuSync Fig. 4a): with 16x16 tiles the producer c = a @ b is a 2x2 grid
// of tiles and the consumer e = c @ d a 2x3 grid; TileSync waits on 12 semaphores, RowSync on 6.
//
//   c = a @ b,   e = c @ d
//
// a 32x32, b 32x32, d 32x48; written by examples/cusync/generate.py.
func.func @fig4a(%a: tensor<32x32xf32>, %b: tensor<32x32xf32>, %d: tensor<32x48xf32>) -> tensor<32x48xf32> {
  %c = graph.dot %a, %b : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %e = graph.dot %c, %d : (tensor<32x32xf32>, tensor<32x48xf32>) -> tensor<32x48xf32>
  func.return %e : tensor<32x48xf32>
}
