module {
  func.func @main(%a: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
    %0 = stablehlo.logistic %a : tensor<16xf32>
    %1 = stablehlo.log_plus_one %a : tensor<16xf32>
    %2 = stablehlo.exponential_minus_one %a : tensor<16xf32>
    %3 = stablehlo.cbrt %a : tensor<16xf32>
    return %0, %1, %2, %3 : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
  }
}
