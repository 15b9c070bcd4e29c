module {
  func.func @main(%a: tensor<2x5xi32>, %b: tensor<2x5xi32>) -> tensor<2x5xi32> {
    %0 = stablehlo.subtract %a, %b : tensor<2x5xi32>
    return %0 : tensor<2x5xi32>
  }
}
