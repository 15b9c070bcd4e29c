module {
  func.func @main(%a: tensor<6xi32>, %b: tensor<6xi32>) -> tensor<6xi32> {
    %0 = stablehlo.multiply %a, %b : tensor<6xi32>
    return %0 : tensor<6xi32>
  }
}
