module {
  func.func @main(%a: tensor<8xi32>, %b: tensor<8xi32>) -> tensor<8xi32> {
    %0 = stablehlo.power %a, %b : tensor<8xi32>
    return %0 : tensor<8xi32>
  }
}
