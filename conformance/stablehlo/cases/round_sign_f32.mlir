module {
  func.func @main(%a: tensor<10xf32>) -> (tensor<10xf32>, tensor<10xf32>, tensor<10xf32>) {
    %0 = stablehlo.round_nearest_even %a : tensor<10xf32>
    %1 = stablehlo.round_nearest_afz %a : tensor<10xf32>
    %2 = stablehlo.sign %a : tensor<10xf32>
    return %0, %1, %2 : tensor<10xf32>, tensor<10xf32>, tensor<10xf32>
  }
}
