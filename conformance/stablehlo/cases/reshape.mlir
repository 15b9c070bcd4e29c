module {
  func.func @main(%a: tensor<2x3x4xi32>) -> (tensor<6x4xi32>, tensor<4x3x2xi32>) {
    %0 = stablehlo.reshape %a : (tensor<2x3x4xi32>) -> tensor<6x4xi32>
    %1 = stablehlo.reshape %a : (tensor<2x3x4xi32>) -> tensor<24xi32>
    %2 = stablehlo.reshape %1 : (tensor<24xi32>) -> tensor<4x3x2xi32>
    return %0, %2 : tensor<6x4xi32>, tensor<4x3x2xi32>
  }
}
