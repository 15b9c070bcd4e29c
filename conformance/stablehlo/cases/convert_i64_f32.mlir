module {
  func.func @main(%a: tensor<8xi64>) -> tensor<8xf32> {
    %0 = stablehlo.convert %a : (tensor<8xi64>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}
