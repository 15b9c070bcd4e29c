module {
  func.func @main(%a: tensor<6xi64>, %b: tensor<6xi64>) -> tensor<6xi64> {
    %0 = stablehlo.add %a, %b : tensor<6xi64>
    return %0 : tensor<6xi64>
  }
}
