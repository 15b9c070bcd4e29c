module {
  func.func @main(%a: tensor<10xf32>) -> tensor<10xf16> {
    %0 = stablehlo.convert %a : (tensor<10xf32>) -> tensor<10xf16>
    return %0 : tensor<10xf16>
  }
}
