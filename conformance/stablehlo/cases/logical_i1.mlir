module {
  func.func @main(%a: tensor<4xi1>, %b: tensor<4xi1>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
    %0 = stablehlo.and %a, %b : tensor<4xi1>
    %1 = stablehlo.or %a, %b : tensor<4xi1>
    %2 = stablehlo.xor %a, %b : tensor<4xi1>
    %3 = stablehlo.not %a : tensor<4xi1>
    return %0, %1, %2, %3 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
  }
}
