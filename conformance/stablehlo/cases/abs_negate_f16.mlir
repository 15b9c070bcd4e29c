module {
  func.func @main(%a: tensor<12xf16>) -> (tensor<12xf16>, tensor<12xf16>) {
    %0 = stablehlo.abs %a : tensor<12xf16>
    %1 = stablehlo.negate %a : tensor<12xf16>
    return %0, %1 : tensor<12xf16>, tensor<12xf16>
  }
}
