module {
  func.func @main(%a: tensor<3x4x6xf32>, %b: tensor<3x6x5xf32>) -> tensor<3x4x5xf32> {
    %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<3x4x6xf32>, tensor<3x6x5xf32>) -> tensor<3x4x5xf32>
    return %0 : tensor<3x4x5xf32>
  }
}
