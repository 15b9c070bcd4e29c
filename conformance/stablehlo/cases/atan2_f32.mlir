module {
  func.func @main(%a: tensor<12xf32>, %b: tensor<12xf32>) -> tensor<12xf32> {
    %0 = stablehlo.atan2 %a, %b : tensor<12xf32>
    return %0 : tensor<12xf32>
  }
}
