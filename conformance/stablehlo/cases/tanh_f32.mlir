module {
  func.func @main(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %0 = stablehlo.tanh %a : tensor<4x8xf32>
    return %0 : tensor<4x8xf32>
  }
}
