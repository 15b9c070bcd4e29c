module {
  func.func @main(%a: tensor<?x4xf32>, %w: tensor<4x3xf32>, %bias: tensor<3xf32>) -> tensor<?x3xf32> {
    %0 = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0] : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
    %n = stablehlo.get_dimension_size %a, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
    %n1 = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
    %c3 = stablehlo.constant dense<3> : tensor<1xi32>
    %shape = stablehlo.concatenate %n1, %c3, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %b = stablehlo.dynamic_broadcast_in_dim %bias, %shape, dims = [1] : (tensor<3xf32>, tensor<2xi32>) -> tensor<?x3xf32>
    %1 = stablehlo.add %0, %b : tensor<?x3xf32>
    return %1 : tensor<?x3xf32>
  }
}
