module {
  func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<5x2x4xf32>) -> tensor<2x3x5xf32> {
    %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [1], contracting_dims = [2] x [2] : (tensor<2x3x4xf32>, tensor<5x2x4xf32>) -> tensor<2x3x5xf32>
    return %0 : tensor<2x3x5xf32>
  }
}
