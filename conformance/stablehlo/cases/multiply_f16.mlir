module {
  func.func @main(%a: tensor<16xf16>, %b: tensor<16xf16>) -> tensor<16xf16> {
    %0 = stablehlo.multiply %a, %b : tensor<16xf16>
    return %0 : tensor<16xf16>
  }
}
