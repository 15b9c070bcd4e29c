module {
  func.func @main(%a: tensor<6xi64>, %b: tensor<6xi64>) -> (tensor<6xi1>, tensor<6xi1>, tensor<6xi1>, tensor<6xi1>) {
    %0 = stablehlo.compare LT, %a, %b, SIGNED : (tensor<6xi64>, tensor<6xi64>) -> tensor<6xi1>
    %1 = stablehlo.compare GE, %a, %b, SIGNED : (tensor<6xi64>, tensor<6xi64>) -> tensor<6xi1>
    %2 = stablehlo.compare NE, %a, %b, SIGNED : (tensor<6xi64>, tensor<6xi64>) -> tensor<6xi1>
    %3 = stablehlo.compare EQ, %a, %b, SIGNED : (tensor<6xi64>, tensor<6xi64>) -> tensor<6xi1>
    return %0, %1, %2, %3 : tensor<6xi1>, tensor<6xi1>, tensor<6xi1>, tensor<6xi1>
  }
}
