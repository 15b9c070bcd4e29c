module {
  func.func @main(%a: tensor<10xi32>, %b: tensor<10xi32>) -> (tensor<10xi32>, tensor<10xi32>, tensor<10xi32>, tensor<10xi32>) {
    %0 = stablehlo.and %a, %b : tensor<10xi32>
    %1 = stablehlo.or %a, %b : tensor<10xi32>
    %2 = stablehlo.xor %a, %b : tensor<10xi32>
    %3 = stablehlo.not %a : tensor<10xi32>
    return %0, %1, %2, %3 : tensor<10xi32>, tensor<10xi32>, tensor<10xi32>, tensor<10xi32>
  }
}
