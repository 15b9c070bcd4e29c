module {
  func.func @main(%a: tensor<8xi32>) -> (tensor<8xi32>, tensor<8xi32>) {
    %0 = stablehlo.abs %a : tensor<8xi32>
    %1 = stablehlo.negate %a : tensor<8xi32>
    return %0, %1 : tensor<8xi32>, tensor<8xi32>
  }
}
