module {
  func.func @main(%a: tensor<3x4x5xf32>) -> tensor<4xf32> {
    %neg_inf = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%a init: %neg_inf) applies stablehlo.maximum across dimensions = [0, 2] : (tensor<3x4x5xf32>, tensor<f32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
