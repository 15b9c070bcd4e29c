module {
  func.func @main(%a: tensor<3x4xf32>, %b: tensor<3x4xf32>) -> tensor<3x4xf32> {
    %0 = stablehlo.add %a, %b : tensor<3x4xf32>
    return %0 : tensor<3x4xf32>
  }
}
