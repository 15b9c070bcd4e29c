module {
  func.func @main(%p: tensor<2x4xi1>, %a: tensor<2x4xf32>, %b: tensor<2x4xf32>, %q: tensor<i1>, %c: tensor<3xi32>, %d: tensor<3xi32>) -> (tensor<2x4xf32>, tensor<3xi32>) {
    %0 = stablehlo.select %p, %a, %b : tensor<2x4xi1>, tensor<2x4xf32>
    %1 = stablehlo.select %q, %c, %d : (tensor<i1>, tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
    return %0, %1 : tensor<2x4xf32>, tensor<3xi32>
  }
}
