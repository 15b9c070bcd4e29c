module {
  func.func @main(%a: tensor<24xf32>) -> (tensor<24xf32>, tensor<24xf32>) {
    %0 = stablehlo.sqrt %a : tensor<24xf32>
    %1 = stablehlo.rsqrt %a : tensor<24xf32>
    return %0, %1 : tensor<24xf32>, tensor<24xf32>
  }
}
