module {
  func.func @main(%a: tensor<?x3xf32>) -> (tensor<i32>, tensor<3xf32>) {
    %0 = stablehlo.get_dimension_size %a, dim = 0 : (tensor<?x3xf32>) -> tensor<i32>
    %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%a init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<?x3xf32>, tensor<f32>) -> tensor<3xf32>
    return %0, %1 : tensor<i32>, tensor<3xf32>
  }
}
