module {
  func.func @main(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %0 = stablehlo.divide %a, %b : tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
}
