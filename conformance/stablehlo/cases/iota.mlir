module {
  func.func @main(%a: tensor<3x4xf32>) -> (tensor<3x4xi32>, tensor<3x4xf32>) {
    %0 = stablehlo.iota dim = 0 : tensor<3x4xi32>
    %1 = stablehlo.iota dim = 1 : tensor<3x4xf32>
    %2 = stablehlo.add %1, %a : tensor<3x4xf32>
    return %0, %2 : tensor<3x4xi32>, tensor<3x4xf32>
  }
}
