module {
  func.func @main(%a: tensor<16xf16>) -> (tensor<16xf16>, tensor<16xf16>) {
    %0 = stablehlo.exponential %a : tensor<16xf16>
    %1 = stablehlo.tanh %a : tensor<16xf16>
    return %0, %1 : tensor<16xf16>, tensor<16xf16>
  }
}
