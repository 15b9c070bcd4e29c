module {
  func.func @main(%a: tensor<5x6xf32>, %i: tensor<i32>, %j: tensor<i32>) -> tensor<2x3xf32> {
    %0 = stablehlo.dynamic_slice %a, %i, %j, sizes = [2, 3] : (tensor<5x6xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
  }
}
