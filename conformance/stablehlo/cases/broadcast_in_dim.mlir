module {
  func.func @main(%row: tensor<4xf32>, %col: tensor<3xf32>, %s: tensor<f32>, %m: tensor<1x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<2x3xf32>, tensor<3x4xf32>) {
    %0 = stablehlo.broadcast_in_dim %row, dims = [1] : (tensor<4xf32>) -> tensor<3x4xf32>
    %1 = stablehlo.broadcast_in_dim %col, dims = [0] : (tensor<3xf32>) -> tensor<3x4xf32>
    %2 = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
    %3 = stablehlo.broadcast_in_dim %m, dims = [0, 1] : (tensor<1x4xf32>) -> tensor<3x4xf32>
    return %0, %1, %2, %3 : tensor<3x4xf32>, tensor<3x4xf32>, tensor<2x3xf32>, tensor<3x4xf32>
  }
}
