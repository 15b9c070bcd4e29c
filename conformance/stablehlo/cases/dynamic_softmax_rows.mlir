module {
  func.func @main(%a: tensor<?x8xf32>) -> tensor<?x8xf32> {
    %n = stablehlo.get_dimension_size %a, dim = 0 : (tensor<?x8xf32>) -> tensor<i32>
    %n1 = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
    %c8 = stablehlo.constant dense<8> : tensor<1xi32>
    %shape = stablehlo.concatenate %n1, %c8, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %neg_inf = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %max = stablehlo.reduce(%a init: %neg_inf) applies stablehlo.maximum across dimensions = [1] : (tensor<?x8xf32>, tensor<f32>) -> tensor<?xf32>
    %max_b = stablehlo.dynamic_broadcast_in_dim %max, %shape, dims = [0] {known_nonexpanding_dimensions = array<i64: 0>} : (tensor<?xf32>, tensor<2xi32>) -> tensor<?x8xf32>
    %shifted = stablehlo.subtract %a, %max_b : tensor<?x8xf32>
    %exp = stablehlo.exponential %shifted : tensor<?x8xf32>
    %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %sum = stablehlo.reduce(%exp init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<?x8xf32>, tensor<f32>) -> tensor<?xf32>
    %sum_b = stablehlo.dynamic_broadcast_in_dim %sum, %shape, dims = [0] {known_nonexpanding_dimensions = array<i64: 0>} : (tensor<?xf32>, tensor<2xi32>) -> tensor<?x8xf32>
    %0 = stablehlo.divide %exp, %sum_b : tensor<?x8xf32>
    return %0 : tensor<?x8xf32>
  }
}
