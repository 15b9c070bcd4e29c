module {
  func.func @main(%a: tensor<4x5xf32>, %u: tensor<2x2xf32>, %i: tensor<i32>, %j: tensor<i32>) -> tensor<4x5xf32> {
    %0 = stablehlo.dynamic_update_slice %a, %u, %i, %j : (tensor<4x5xf32>, tensor<2x2xf32>, tensor<i32>, tensor<i32>) -> tensor<4x5xf32>
    return %0 : tensor<4x5xf32>
  }
}
