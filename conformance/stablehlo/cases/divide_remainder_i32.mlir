module {
  func.func @main(%a: tensor<8xi32>, %b: tensor<8xi32>) -> (tensor<8xi32>, tensor<8xi32>) {
    %0 = stablehlo.divide %a, %b : tensor<8xi32>
    %1 = stablehlo.remainder %a, %b : tensor<8xi32>
    return %0, %1 : tensor<8xi32>, tensor<8xi32>
  }
}
