module {
  func.func @main(%a: tensor<6xi1>) -> (tensor<6xf32>, tensor<6xi32>) {
    %0 = stablehlo.convert %a : (tensor<6xi1>) -> tensor<6xf32>
    %1 = stablehlo.convert %a : (tensor<6xi1>) -> tensor<6xi32>
    return %0, %1 : tensor<6xf32>, tensor<6xi32>
  }
}
