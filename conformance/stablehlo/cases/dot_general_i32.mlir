module {
  func.func @main(%a: tensor<4x6xi32>, %b: tensor<6x3xi32>) -> tensor<4x3xi32> {
    %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x6xi32>, tensor<6x3xi32>) -> tensor<4x3xi32>
    return %0 : tensor<4x3xi32>
  }
}
