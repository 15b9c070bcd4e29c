module {
  func.func @main(%a: tensor<2x8xf32>, %b: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
    %0 = stablehlo.maximum %a, %b : tensor<2x8xf32>
    %1 = stablehlo.minimum %a, %b : tensor<2x8xf32>
    return %0, %1 : tensor<2x8xf32>, tensor<2x8xf32>
  }
}
