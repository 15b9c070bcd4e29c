module {
  func.func @main(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
    %0 = stablehlo.remainder %a, %b : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}
