module {
  func.func @main(%x: tensor<1x2x9x8xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x4x7xf32> {
    %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [2, 1], pad = [[2, 1], [2, 1]], lhs_dilate = [1, 1], rhs_dilate = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x9x8xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x4x7xf32>
    return %0 : tensor<1x3x4x7xf32>
  }
}
