module {
  func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>, %b: tensor<6xf32>) -> tensor<4x6xf32> {
    %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
    %1 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<6xf32>) -> tensor<4x6xf32>
    %2 = stablehlo.add %0, %1 : tensor<4x6xf32>
    %zero = stablehlo.constant dense<0.000000e+00> : tensor<4x6xf32>
    %3 = stablehlo.maximum %2, %zero : tensor<4x6xf32>
    return %3 : tensor<4x6xf32>
  }
}
