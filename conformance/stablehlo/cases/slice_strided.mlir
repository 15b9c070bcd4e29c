module {
  func.func @main(%a: tensor<6x8xi32>) -> (tensor<2x3xi32>, tensor<6x1xi32>) {
    %0 = stablehlo.slice %a [1:5:2, 1:8:3] : (tensor<6x8xi32>) -> tensor<2x3xi32>
    %1 = stablehlo.slice %a [0:6, 7:8] : (tensor<6x8xi32>) -> tensor<6x1xi32>
    return %0, %1 : tensor<2x3xi32>, tensor<6x1xi32>
  }
}
