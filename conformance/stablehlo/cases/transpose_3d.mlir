module {
  func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<3x5xf32>) -> (tensor<4x2x3xf32>, tensor<5x3xf32>) {
    %0 = stablehlo.transpose %a, dims = [2, 0, 1] : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
    %1 = stablehlo.transpose %b, dims = [1, 0] : (tensor<3x5xf32>) -> tensor<5x3xf32>
    return %0, %1 : tensor<4x2x3xf32>, tensor<5x3xf32>
  }
}
