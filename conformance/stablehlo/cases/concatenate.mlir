module {
  func.func @main(%a: tensor<2x1xf32>, %b: tensor<2x3xf32>, %c: tensor<2x2xf32>) -> (tensor<2x6xf32>, tensor<4x3xf32>) {
    %0 = stablehlo.concatenate %a, %b, %c, dim = 1 : (tensor<2x1xf32>, tensor<2x3xf32>, tensor<2x2xf32>) -> tensor<2x6xf32>
    %1 = stablehlo.concatenate %b, %b, dim = 0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
    return %0, %1 : tensor<2x6xf32>, tensor<4x3xf32>
  }
}
