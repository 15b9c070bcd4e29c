module {
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %neg_inf = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %max = stablehlo.reduce(%arg0 init: %neg_inf) applies stablehlo.maximum across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    %max_b = stablehlo.broadcast_in_dim %max, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %shifted = stablehlo.subtract %arg0, %max_b : tensor<4xf32>
    %exp = stablehlo.exponential %shifted : tensor<4xf32>
    %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %sum = stablehlo.reduce(%exp init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    %sum_b = stablehlo.broadcast_in_dim %sum, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %0 = stablehlo.divide %exp, %sum_b : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
