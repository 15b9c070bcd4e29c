module {
  func.func @main(%a: tensor<6xi64>, %b: tensor<6xi64>) -> (tensor<6xi64>, tensor<6xi64>) {
    %0 = stablehlo.maximum %a, %b : tensor<6xi64>
    %1 = stablehlo.minimum %a, %b : tensor<6xi64>
    return %0, %1 : tensor<6xi64>, tensor<6xi64>
  }
}
